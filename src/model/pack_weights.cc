#include "model/pack_weights.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/recode.h"

namespace ridge {
namespace {

// ref's matrix re-encoded into a new buffer; its old bytes returned to the system.
void recode(WeightRef& ref, PackedWeights& out) {
  const DType to = ref::recoded_type(ref.type);
  const int64_t old_row = ref.row_bytes(), new_row = dtype_row_bytes(to, ref.cols);
  auto buffer = std::make_unique<HugePageBuffer>(size_t(ref.rows * new_row));
  const auto* src = static_cast<const uint8_t*>(ref.data);
  uint8_t* dst = buffer->data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < ref.rows; ++r) ref::recode_row(ref.type, src + r * old_row, ref.cols, dst + r * new_row);
  release_pages(const_cast<uint8_t*>(src), size_t(ref.rows * old_row));
  ref.recoded_from = ref.type;
  ref.type = to;
  ref.data = dst;
  out.buffers.push_back(std::move(buffer));
  ++out.recoded;
}

// Q5_0 has no packed kernel: always Q8_0. Q4_K has its own (packed_q4k.h), which reads the file's
// bytes; only the AMX tiles (packed_dot_amx.cc) lack one, so there Q4_1 (11% more bytes per decode
// token) buys the prefill's matrix engine.
bool recodable(const WeightRef& ref, cpu::Isa isa) {
  const DType to = ref::recoded_type(ref.type);
  if (ref.type == DType::Q4_K && !(isa == cpu::Isa::Avx512Vnni && cpu::amx_usable())) return false;
  return to != ref.type && ref.cols % dtype_info(ref.type).block_size == 0;
}

}  // namespace

PackedWeights pack_weights_for_cpu(ModelWeights& w) {
  PackedWeights out;
  const char* env = std::getenv("RIDGE_PACK");
  const cpu::Isa isa = cpu::active_isa();
  if ((env && std::strcmp(env, "0") == 0) || isa == cpu::Isa::Scalar) return out;
  std::map<const void*, WeightRef> done;  // a tied output matrix is the embedding: pack it once
  auto pack = [&](WeightRef& ref) {
    if (!ref.present()) return;
    if (auto it = done.find(ref.data); it != done.end()) {
      ref = it->second;
      return;
    }
    const void* original = ref.data;
    if (recodable(ref, isa)) recode(ref, out);
    if (!cpu::packed_on(isa, ref.type) || ref.cols % cpu::kActBlock != 0) return;
    cpu::pack_rows(ref.type, const_cast<void*>(ref.data), ref.rows, ref.cols);
    ref.packed = true;
    ++out.packed;
    done[original] = ref;
  };
  pack(w.token_embd);
  pack(w.output);
  for (auto& l : w.layers) for_each_layer_matrix(l, pack);
  return out;
}

}  // namespace ridge
