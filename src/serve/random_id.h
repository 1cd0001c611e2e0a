#pragma once
// Ids of responses, messages and output items: a prefix ("chatcmpl-", "msg_", "resp_", ...) and
// random hex digits from a per-thread generator.
#include <string>
#include <string_view>

namespace ridge {

std::string random_id(std::string_view prefix, int hex_digits = 24);

}  // namespace ridge
