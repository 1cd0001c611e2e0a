#pragma once
// Errors the API reports to clients, in OpenAI's shape:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "temperature", "code": null}}
// with the HTTP status that goes with them. Handlers throw ApiError; the server turns it into a reply.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace ridge {

struct ApiError : std::runtime_error {
  ApiError(int status_, const std::string& message, std::string param_ = {}, std::string code_ = {},
           std::string type_ = "invalid_request_error")
      : std::runtime_error(message), status(status_), type(std::move(type_)), param(std::move(param_)),
        code(std::move(code_)) {}

  int status;
  std::string type;
  std::string param;  // the request field at fault; empty: none
  std::string code;   // "context_length_exceeded", "model_not_found", ...; empty: none
  int retry_after_s = 0;  // > 0: sent as Retry-After
};

// 400 naming the field at fault.
[[noreturn]] void throw_bad_param(const std::string& param, const std::string& message);

nlohmann::json error_json(const ApiError& error);
// The error type OpenAI uses for a status: invalid_request_error, authentication_error, ...
std::string error_type_for_status(int status);

}  // namespace ridge
