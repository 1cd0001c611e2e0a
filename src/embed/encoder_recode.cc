#include "embed/encoder_recode.h"

#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/dequant.h"
#include "quant/block_quantize.h"

namespace ridge {
namespace {

struct RecodedStorage {
  std::shared_ptr<const void> original;
  std::vector<std::vector<uint8_t>> matrices;
};

}  // namespace

std::optional<DType> parse_encoder_dtype(std::string_view name) {
  if (name == "f32") return DType::F32;
  if (name == "bf16") return DType::BF16;
  if (name == "f16") return DType::F16;
  if (name == "q8_0") return DType::Q8_0;
  return std::nullopt;
}

std::shared_ptr<const void> recode_matrices(std::span<WeightRef* const> matrices, DType to,
                                            std::shared_ptr<const void> original) {
  auto storage = std::make_shared<RecodedStorage>();
  storage->original = std::move(original);
  const bool pack = to == DType::Q8_0 && cpu::active_isa() == cpu::Isa::Avx512Vnni;
  for (WeightRef* w : matrices) {
    if (w->type == to) continue;
    if (w->cols % dtype_info(to).block_size != 0)
      fail("a {} x {} matrix cannot be stored as {} (rows of whole {}-value blocks)", w->rows, w->cols, dtype_name(to),
           dtype_info(to).block_size);
    std::vector<float> f32(size_t(w->rows * w->cols));
    for (int64_t r = 0; r < w->rows; ++r) ref::dequantize_row(w->type, w->row(r), f32.data() + r * w->cols, w->cols);
    auto& bytes = storage->matrices.emplace_back(size_t(w->rows * dtype_row_bytes(to, w->cols)));
    quant::quantize_rows(to, f32.data(), bytes.data(), w->rows, w->cols, nullptr);
    w->recoded_from = w->type;
    w->type = to;
    w->data = bytes.data();
    if (pack && cpu::packable(to) && w->cols % cpu::kActBlock == 0) {
      cpu::pack_rows(to, bytes.data(), w->rows, w->cols);
      w->packed = true;
    }
  }
  return storage;
}

void recode_encoder(EncoderModel& model, DType to) {
  std::vector<WeightRef*> matrices;
  for (EncoderLayerWeights& l : model.weights.layers)
    for (WeightRef* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_up, &l.w_down}) matrices.push_back(w);
  model.storage = recode_matrices(matrices, to, model.storage);
}

}  // namespace ridge
