#include "model/arch/registry.h"

#include "core/error.h"

namespace ridge {
namespace {

const std::vector<std::unique_ptr<Architecture>>& registry() {
  static const auto all = [] {
    std::vector<std::unique_ptr<Architecture>> v;
    for (std::string_view name : {"llama", "mistral", "qwen2"}) v.push_back(make_llama_family(name));
    for (std::string_view name : {"qwen3", "qwen3moe"}) v.push_back(make_qwen3(name));
    v.push_back(make_gemma3());
    v.push_back(make_qwen2moe());
    v.push_back(make_olmoe());
    v.push_back(make_deepseek2());
    return v;
  }();
  return all;
}

}  // namespace

const Architecture* find_architecture(std::string_view name) {
  for (const auto& a : registry())
    if (a->name() == name) return a.get();
  return nullptr;
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const auto& a : registry()) names.emplace_back(a->name());
  return names;
}

const Architecture& architecture_of(std::string_view name) {
  if (const Architecture* a = find_architecture(name)) return *a;
  std::string known;
  for (const std::string& n : architecture_names()) known += (known.empty() ? "" : ", ") + n;
  fail("architecture '{}' is not supported (ridge runs {})", name, known);
}

}  // namespace ridge
