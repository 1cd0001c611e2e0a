#pragma once
// The encoder's matrices re-encoded at load into the type the user asks for (--dtype): BF16 runs
// the prefill on the AMX BF16 tiles, Q8_0 (packed where the AVX-512 VNNI kernels read it) on the
// int8 path; F32 keeps the file's values. The embedding tables stay as stored: rows are looked up,
// not multiplied.
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "core/dtype.h"
#include "embed/encoder_model.h"

namespace ridge {

// "f32" (as stored), "bf16", "f16", "q8_0"; nullopt otherwise.
std::optional<DType> parse_encoder_dtype(std::string_view name);
// Every layer matrix of `model` re-encoded as `to` (no-op for matrices already of that type); the new
// bytes are kept with the model's storage. Error for a type ridge cannot encode.
void recode_encoder(EncoderModel& model, DType to);
// What recode_encoder does, for any family's matrices: each one re-encoded as `to` (packed where
// the CPU's kernels read Q8_0 packed); the new bytes live in the returned storage, which also holds
// `original`. Error for a matrix whose rows are not whole blocks of `to`.
std::shared_ptr<const void> recode_matrices(std::span<WeightRef* const> matrices, DType to,
                                            std::shared_ptr<const void> original);

}  // namespace ridge
