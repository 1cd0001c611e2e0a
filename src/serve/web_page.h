#pragma once
// The page served at "/": a chat playground that streams from /v1/chat/completions and a live view
// of /metrics/json. One self-contained HTML document (inline CSS and JS, nothing fetched from
// elsewhere), compiled into the binary.
#include <string_view>

namespace ridge {

std::string_view web_page_html();

}  // namespace ridge
