#include "serve/sse.h"

namespace ridge {

std::string sse_event(const nlohmann::json& data) {
  return "data: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

std::string sse_done() { return "data: [DONE]\n\n"; }

}  // namespace ridge
