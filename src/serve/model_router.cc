#include "serve/model_router.h"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "serve/api_error.h"

namespace ridge {
namespace {

// Go-style durations as ollama takes them: "300ms", "30s", "5m", "1h30m"; a bare number is seconds.
std::optional<double> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') negative = text[i++] == '-';
  double total = 0;
  bool any = false;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (i == start) return std::nullopt;
    double value = 0;
    try {
      value = std::stod(text.substr(start, i - start));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    const size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit.empty() && !any && i == text.size()) scale = 1;  // "300": seconds
    else if (unit == "ms") scale = 1e-3;
    else if (unit == "s") scale = 1;
    else if (unit == "m") scale = 60;
    else if (unit == "h") scale = 3600;
    else return std::nullopt;
    total += value * scale;
    any = true;
  }
  if (!any || !std::isfinite(total)) return std::nullopt;
  return negative ? -total : total;
}

}  // namespace

nlohmann::json ModelRouter::load_lora(const nlohmann::json&) {
  throw ApiError(404, "loading LoRA adapters at run time is off: start ridge serve with --lora-dir DIR to allow it");
}

nlohmann::json ModelRouter::unload_lora(const nlohmann::json& body) { return load_lora(body); }

ModelChoice model_choice_of(std::string_view body) {
  ModelChoice choice;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return choice;  // the API's own parser reports a bad body
  if (auto m = j.find("model"); m != j.end() && m->is_string()) choice.model = m->get<std::string>();
  if (auto k = j.find("keep_alive"); k != j.end() && !k->is_null()) {
    std::optional<double> seconds;
    if (k->is_number()) seconds = k->get<double>();
    if (k->is_string()) seconds = parse_duration(k->get<std::string>());
    if (!seconds || !std::isfinite(*seconds))
      throw ApiError(400, "'keep_alive' must be a number of seconds or a duration such as \"5m\", \"30s\", \"1h\" (0: unload "
                          "after this request; negative: keep loaded)",
                     "keep_alive");
    choice.keep_alive = *seconds;
  }
  return choice;
}

}  // namespace ridge
