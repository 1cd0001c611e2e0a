#pragma once
// Why a generation ended, in OpenAI's words.
#include <string_view>

namespace ridge {

enum class FinishReason { None, Stop, Length, Abort };

constexpr std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Abort: return "abort";
    case FinishReason::None: break;
  }
  return "";
}

}  // namespace ridge
