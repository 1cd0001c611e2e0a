#include "model/pack_weights.h"

#include <cstdlib>
#include <cstring>
#include <set>

#include "kernels/cpu/isa.h"
#include "kernels/cpu/packed_layout.h"

namespace ridge {

int pack_weights_for_cpu(ModelWeights& w) {
  const char* env = std::getenv("RIDGE_PACK");
  if ((env && std::strcmp(env, "0") == 0) || cpu::active_isa() != cpu::Isa::Avx512Vnni) return 0;
  std::set<const void*> done;  // a tied output matrix is the embedding: pack it once
  int packed = 0;
  auto pack = [&](WeightRef& ref) {
    if (!ref.present() || !cpu::packable(ref.type) || ref.cols % cpu::kActBlock != 0) return;
    if (done.insert(ref.data).second) {
      cpu::pack_rows(ref.type, const_cast<void*>(ref.data), ref.rows, ref.cols);
      ++packed;
    }
    ref.packed = true;
  };
  pack(w.token_embd);
  pack(w.output);
  for (auto& l : w.layers)
    for (WeightRef* ref : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) pack(*ref);
  return packed;
}

}  // namespace ridge
