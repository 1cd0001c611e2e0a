#include "serve/metrics_labels.h"

#include <map>
#include <string_view>

namespace ridge {
namespace {

struct Family {
  std::string help, type;
  std::vector<std::string> samples;
};

// "name{a="b"} 1" -> "name{model_name="m",a="b"} 1"; "name 1" -> "name{model_name="m"} 1".
std::string with_model_label(std::string_view line, const std::string& model) {
  const size_t brace = line.find('{');
  const size_t space = line.find(' ');
  const std::string label = "model_name=\"" + model + "\"";
  if (brace != std::string_view::npos && (space == std::string_view::npos || brace < space)) {
    if (line.find("model_name=\"") != std::string_view::npos) return std::string(line);
    const bool empty = brace + 1 < line.size() && line[brace + 1] == '}';
    return std::string(line.substr(0, brace + 1)) + label + (empty ? "" : ",") + std::string(line.substr(brace + 1));
  }
  if (space == std::string_view::npos) return std::string(line);
  return std::string(line.substr(0, space)) + "{" + label + "}" + std::string(line.substr(space));
}

std::string_view second_word(std::string_view line) {  // "# TYPE name counter" -> "name"
  size_t a = line.find(' ', 2);
  if (a == std::string_view::npos) return {};
  ++a;
  const size_t b = line.find(' ', a);
  return line.substr(a, b == std::string_view::npos ? std::string_view::npos : b - a);
}

}  // namespace

std::string merge_model_metrics(const std::vector<std::pair<std::string, std::string>>& texts) {
  std::vector<std::string> order;
  std::map<std::string, Family, std::less<>> families;
  const auto family = [&](std::string_view name) -> Family& {
    auto it = families.find(name);
    if (it == families.end()) {
      order.emplace_back(name);
      it = families.emplace(std::string(name), Family{}).first;
    }
    return it->second;
  };
  for (const auto& [model, text] : texts) {
    std::string current;  // the family the last HELP / TYPE named
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      const std::string_view line(text.data() + pos, end - pos);
      pos = end + 1;
      if (line.empty()) continue;
      if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
        current = std::string(second_word(line));
        Family& f = family(current);
        std::string& slot = line[2] == 'H' ? f.help : f.type;
        if (slot.empty()) slot = std::string(line);
        continue;
      }
      if (line[0] == '#') continue;
      std::string_view name = line.substr(0, line.find_first_of("{ "));
      // A sample belongs to the family announced above it (a histogram's _bucket, _sum, _count).
      const bool in_current = !current.empty() && name.substr(0, current.size()) == current;
      family(in_current ? std::string_view(current) : name).samples.push_back(with_model_label(line, model));
    }
  }
  std::string out;
  for (const std::string& name : order) {
    const Family& f = families.at(name);
    if (!f.help.empty()) out += f.help + "\n";
    if (!f.type.empty()) out += f.type + "\n";
    for (const std::string& s : f.samples) out += s + "\n";
  }
  return out;
}

}  // namespace ridge
