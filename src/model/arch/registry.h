#pragma once
// Every architecture ridge runs, by its GGUF name (general.architecture).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/arch/architecture.h"

namespace ridge {

// nullptr when ridge does not run `name`.
const Architecture* find_architecture(std::string_view name);
std::vector<std::string> architecture_names();
// The architecture, or an error naming it and listing the ones ridge runs.
const Architecture& architecture_of(std::string_view name);

// One factory per architecture file (model/arch/<name>.cc); the registry lists them.
std::unique_ptr<Architecture> make_llama_family(std::string_view name);  // llama, mistral, qwen2
std::unique_ptr<Architecture> make_qwen3(std::string_view name);         // qwen3, qwen3moe
std::unique_ptr<Architecture> make_gemma3();
std::unique_ptr<Architecture> make_qwen2moe();
std::unique_ptr<Architecture> make_olmoe();
std::unique_ptr<Architecture> make_deepseek2();

}  // namespace ridge
