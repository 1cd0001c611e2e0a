#pragma once
// A 64-bit name for a model's weights: its shapes and the first and last bytes of its embedding and
// output matrices. K/V is only shared between pools (another instance's, a disk tier's) of one identity.
#include <cstdint>
#include <string>

namespace ridge {
struct Model;

uint64_t model_identity(const Model& model);
std::string model_identity_hex(const Model& model);

}  // namespace ridge
