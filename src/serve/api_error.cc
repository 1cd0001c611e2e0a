#include "serve/api_error.h"

namespace ridge {

void throw_bad_param(const std::string& param, const std::string& message) { throw ApiError(400, message, param); }

nlohmann::json error_json(const ApiError& error) {
  auto null_if_empty = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  return {{"error",
           {{"message", error.what()}, {"type", error.type}, {"param", null_if_empty(error.param)},
            {"code", null_if_empty(error.code)}}}};
}

std::string error_type_for_status(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable_error";
    case 504: return "timeout_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace ridge
