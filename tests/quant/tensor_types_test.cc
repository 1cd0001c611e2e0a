// The per-tensor type rules against what llama.cpp's quantizer gives two real shapes: a
// Qwen2.5-1.5B-like model (rows of 1536, every type fits) and a 0.5B-like one (rows of 896, the
// 256-block types do not fit and fall back), both with tied embeddings.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "quant/file_type.h"
#include "quant/tensor_types.h"

namespace ridge::quant {
namespace {

// The tensors of a Qwen2-architecture model in the order a GGUF converter writes them.
std::vector<TensorDesc> qwen2_tensors(int64_t n_layer, int64_t n_embd, int64_t n_ff, int64_t n_kv_dim, int64_t n_vocab) {
  std::vector<TensorDesc> t;
  t.push_back({"token_embd.weight", DType::BF16, {n_embd, n_vocab}});
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    t.push_back({p + "attn_norm.weight", DType::F32, {n_embd}});
    t.push_back({p + "ffn_down.weight", DType::BF16, {n_ff, n_embd}});
    t.push_back({p + "ffn_gate.weight", DType::BF16, {n_embd, n_ff}});
    t.push_back({p + "ffn_up.weight", DType::BF16, {n_embd, n_ff}});
    t.push_back({p + "ffn_norm.weight", DType::F32, {n_embd}});
    t.push_back({p + "attn_k.bias", DType::F32, {n_kv_dim}});
    t.push_back({p + "attn_k.weight", DType::BF16, {n_embd, n_kv_dim}});
    t.push_back({p + "attn_output.weight", DType::BF16, {n_embd, n_embd}});
    t.push_back({p + "attn_q.bias", DType::F32, {n_embd}});
    t.push_back({p + "attn_q.weight", DType::BF16, {n_embd, n_embd}});
    t.push_back({p + "attn_v.bias", DType::F32, {n_kv_dim}});
    t.push_back({p + "attn_v.weight", DType::BF16, {n_embd, n_kv_dim}});
  }
  t.push_back({"output_norm.weight", DType::F32, {n_embd}});
  return t;
}

std::map<std::string, DType> types_of(const std::vector<TensorDesc>& t, const std::vector<TypeChoice>& c) {
  std::map<std::string, DType> m;
  for (size_t i = 0; i < t.size(); ++i) m[t[i].name] = c[i].type;
  return m;
}

bool more_bits_layer(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

TEST(TensorTypes, Q4KMOnA1_5BShape) {
  const auto tensors = qwen2_tensors(28, 1536, 8960, 256, 151936);
  const ModelHints hints{"qwen2", 28, 12, 2, 0};
  const auto choices = choose_types(tensors, hints, {FileType::Q4_K_M});
  auto m = types_of(tensors, choices);
  EXPECT_EQ(m["token_embd.weight"], DType::Q6_K);  // tied: it is also the output projection
  EXPECT_EQ(m["output_norm.weight"], DType::F32);
  int n_q6 = 0;
  for (int i = 0; i < 28; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const DType more = more_bits_layer(i, 28) ? DType::Q6_K : DType::Q4_K;
    EXPECT_EQ(m[p + "attn_v.weight"], more) << i;
    EXPECT_EQ(m[p + "ffn_down.weight"], more) << i;
    n_q6 += more == DType::Q6_K;
    for (const char* name : {"attn_q.weight", "attn_k.weight", "attn_output.weight", "ffn_up.weight", "ffn_gate.weight"})
      EXPECT_EQ(m[p + name], DType::Q4_K) << p << name;
    EXPECT_EQ(m[p + "attn_q.bias"], DType::F32);
    EXPECT_EQ(m[p + "attn_norm.weight"], DType::F32);
  }
  EXPECT_EQ(n_q6, 14);  // layers 0-2, 5, 8, ..., 23 and 24-27
  for (const auto& c : choices) EXPECT_FALSE(c.fell_back);
}

TEST(TensorTypes, RowsThatMissTheSuperBlockFallBack) {
  const auto tensors = qwen2_tensors(24, 896, 4864, 128, 151936);
  const ModelHints hints{"qwen2", 24, 14, 2, 0};
  const auto choices = choose_types(tensors, hints, {FileType::Q4_K_M});
  auto m = types_of(tensors, choices);
  EXPECT_EQ(m["token_embd.weight"], DType::Q8_0);  // tied output, 896 is no multiple of 256
  EXPECT_EQ(m["blk.0.attn_q.weight"], DType::Q5_0);
  EXPECT_EQ(m["blk.0.attn_v.weight"], DType::Q8_0);  // Q6_K rule, then its fallback
  EXPECT_EQ(m["blk.3.attn_v.weight"], DType::Q5_0);
  EXPECT_EQ(m["blk.0.ffn_down.weight"], DType::Q6_K);  // rows of 4864 = 19 x 256 fit
  EXPECT_EQ(m["blk.3.ffn_down.weight"], DType::Q4_K);
}

TEST(TensorTypes, Q3KMAndQ2K) {
  const auto tensors = qwen2_tensors(28, 1536, 8960, 256, 151936);
  const ModelHints hints{"qwen2", 28, 12, 2, 0};
  auto m = types_of(tensors, choose_types(tensors, hints, {FileType::Q3_K_M}));
  EXPECT_EQ(m["blk.0.attn_v.weight"], DType::Q5_K);
  EXPECT_EQ(m["blk.1.attn_v.weight"], DType::Q5_K);
  EXPECT_EQ(m["blk.2.attn_v.weight"], DType::Q4_K);
  EXPECT_EQ(m["blk.0.ffn_down.weight"], DType::Q5_K);  // i < n/16
  EXPECT_EQ(m["blk.2.ffn_down.weight"], DType::Q4_K);
  EXPECT_EQ(m["blk.5.attn_output.weight"], DType::Q4_K);
  EXPECT_EQ(m["blk.5.attn_q.weight"], DType::Q3_K);
  m = types_of(tensors, choose_types(tensors, hints, {FileType::Q2_K}));
  EXPECT_EQ(m["blk.5.attn_v.weight"], DType::Q4_K);  // 6 query heads per KV head: GQA >= 4
  EXPECT_EQ(m["blk.5.ffn_down.weight"], DType::Q3_K);
  EXPECT_EQ(m["blk.5.attn_output.weight"], DType::Q3_K);
  EXPECT_EQ(m["blk.5.ffn_up.weight"], DType::Q2_K);
}

TEST(TensorTypes, OverridesAndPure) {
  const auto tensors = qwen2_tensors(4, 512, 1024, 128, 1000);
  const ModelHints hints{"llama", 4, 8, 8, 0};
  TypeRules rules{FileType::Q4_0};
  rules.pure = true;
  auto m = types_of(tensors, choose_types(tensors, hints, rules));
  EXPECT_EQ(m["token_embd.weight"], DType::Q4_0);
  EXPECT_EQ(m["blk.0.attn_v.weight"], DType::Q4_0);
  rules = {FileType::Q8_0};
  rules.token_embedding_type = DType::F16;
  m = types_of(tensors, choose_types(tensors, hints, rules));
  EXPECT_EQ(m["token_embd.weight"], DType::F16);
  EXPECT_EQ(m["blk.0.ffn_down.weight"], DType::Q8_0);
  // An untied model: token_embd is no output and keeps the base type; output.weight gets Q6_K.
  auto untied = tensors;
  untied.push_back({"output.weight", DType::F16, {512, 1000}});
  m = types_of(untied, choose_types(untied, hints, {FileType::Q4_K_M}));
  EXPECT_EQ(m["token_embd.weight"], DType::Q4_K);
  EXPECT_EQ(m["output.weight"], DType::Q6_K);
}

TEST(TensorTypes, OrderIsByLayerThenName) {
  const auto tensors = qwen2_tensors(12, 256, 512, 64, 100);
  const auto order = quantize_order(tensors);
  ASSERT_EQ(order.size(), tensors.size());
  EXPECT_EQ(tensors[order[0]].name, "output_norm.weight");  // non-layer tensors first, by name
  EXPECT_EQ(tensors[order[1]].name, "token_embd.weight");
  EXPECT_EQ(tensors[order[2]].name, "blk.0.attn_k.bias");
  EXPECT_EQ(tensors[order.back()].name, "blk.11.ffn_up.weight");  // 11 after 2, by number
}

TEST(TensorTypes, FileTypeNames) {
  EXPECT_EQ(file_type_from_name("q4_k_m"), FileType::Q4_K_M);
  EXPECT_EQ(static_cast<uint32_t>(*file_type_from_name("Q8_0")), 7u);
  EXPECT_FALSE(file_type_from_name("Q4_K_X"));
  for (const auto& f : file_types()) EXPECT_EQ(file_type_from_name(f.name), f.type);
}

TEST(TensorTypes, BadShapesAreErrors) {
  std::vector<TensorDesc> t = {{"blk.0.ffn_up.weight", DType::F32, {100, 64}}};  // 100 fits no block
  EXPECT_THROW(choose_types(t, {"llama", 1, 1, 1, 0}, {FileType::Q4_0}), Error);
  t = {{"blk.0.ffn_up.weight", DType::F32, {}}};
  EXPECT_THROW(choose_types(t, {"llama", 1, 1, 1, 0}, {FileType::Q4_0}), Error);
}

TEST(TensorTypes, Fp4FileTypesAndManualPatterns) {
  const auto tensors = qwen2_tensors(4, 1536, 8960, 256, 151936);
  const ModelHints hints{"qwen2", 4, 12, 2, 0};
  // NVFP4: every layer matrix; the tied output gets Q6_K like every other block type's.
  auto m = types_of(tensors, choose_types(tensors, hints, {FileType::NVFP4}));
  EXPECT_EQ(m["blk.0.attn_q.weight"], DType::NVFP4);
  EXPECT_EQ(m["blk.3.ffn_down.weight"], DType::NVFP4);
  EXPECT_EQ(m["token_embd.weight"], DType::Q6_K);
  auto untied = tensors;
  untied.push_back({"output.weight", DType::BF16, {1536, 151936}});
  m = types_of(untied, choose_types(untied, hints, {FileType::NVFP4}));
  EXPECT_EQ(m["token_embd.weight"], DType::Q4_K);  // a lookup: llama.cpp has no factor for it
  EXPECT_EQ(m["output.weight"], DType::Q6_K);
  // MXFP4_MOE on a dense model (llama.cpp's rule): no experts, so Q8_0 everywhere.
  m = types_of(tensors, choose_types(tensors, hints, {FileType::MXFP4_MOE}));
  EXPECT_EQ(m["blk.0.attn_q.weight"], DType::Q8_0);
  EXPECT_EQ(m["token_embd.weight"], DType::Q8_0);
  // --tensor-type: the first matching pattern wins over the mix; the rest keep the rules.
  TypeRules rules{FileType::MXFP4_MOE};
  rules.tensor_types = {{"ffn_(up|gate)", DType::MXFP4}, {"blk\\.", DType::Q4_0}};
  m = types_of(tensors, choose_types(tensors, hints, rules));
  EXPECT_EQ(m["blk.1.ffn_up.weight"], DType::MXFP4);
  EXPECT_EQ(m["blk.1.ffn_gate.weight"], DType::MXFP4);
  EXPECT_EQ(m["blk.1.attn_v.weight"], DType::Q4_0);
  EXPECT_EQ(m["token_embd.weight"], DType::Q8_0);
  // Experts (a third dimension) are MXFP4_MOE's MXFP4 tensors.
  const std::vector<TensorDesc> moe = {{"blk.0.ffn_up_exps.weight", DType::BF16, {1536, 512, 8}},
                                       {"blk.0.attn_q.weight", DType::BF16, {1536, 1536}}};
  m = types_of(moe, choose_types(moe, {"qwen2moe", 1, 12, 2, 8}, {FileType::MXFP4_MOE}));
  EXPECT_EQ(m["blk.0.ffn_up_exps.weight"], DType::MXFP4);
  EXPECT_EQ(m["blk.0.attn_q.weight"], DType::Q8_0);
  rules.tensor_types = {{"([", DType::Q4_0}};
  EXPECT_THROW(choose_types(tensors, hints, rules), Error);
}

// IQ4_NL / IQ4_XS (llama.cpp's rules): attn_v gets Q5_K when four or more query heads share a KV
// head, the first eighth of ffn_down Q5_K unless an imatrix guides the rounding, attn_output Q5_K
// on eight-expert models; IQ4_XS rows that miss 256 fall back to IQ4_NL, the tied output to Q8_0.
TEST(TensorTypes, Iq4Mixes) {
  const auto tensors = qwen2_tensors(16, 1536, 8960, 256, 151936);
  const ModelHints gqa6{"qwen2", 16, 12, 2, 0};
  for (FileType ft : {FileType::IQ4_NL, FileType::IQ4_XS}) {
    const DType base = ft == FileType::IQ4_NL ? DType::IQ4_NL : DType::IQ4_XS;
    auto m = types_of(tensors, choose_types(tensors, gqa6, {ft}));
    EXPECT_EQ(m["token_embd.weight"], DType::Q6_K);  // tied: the output's rule
    EXPECT_EQ(m["blk.0.attn_v.weight"], DType::Q5_K);
    EXPECT_EQ(m["blk.9.attn_v.weight"], DType::Q5_K);
    EXPECT_EQ(m["blk.0.ffn_down.weight"], DType::Q5_K);  // layers 0 and 1 of 16
    EXPECT_EQ(m["blk.1.ffn_down.weight"], DType::Q5_K);
    EXPECT_EQ(m["blk.2.ffn_down.weight"], base);
    EXPECT_EQ(m["blk.15.ffn_down.weight"], base);
    for (const char* name : {"attn_q.weight", "attn_k.weight", "attn_output.weight", "ffn_up.weight", "ffn_gate.weight"})
      EXPECT_EQ(m[std::string("blk.4.") + name], base) << name;
    TypeRules with_imatrix{ft};
    with_imatrix.has_imatrix = true;
    m = types_of(tensors, choose_types(tensors, gqa6, with_imatrix));
    EXPECT_EQ(m["blk.0.ffn_down.weight"], base);
    EXPECT_EQ(m["blk.0.attn_v.weight"], DType::Q5_K);
    m = types_of(tensors, choose_types(tensors, {"qwen2", 16, 12, 4, 0}, {ft}));  // 3 heads per KV head
    EXPECT_EQ(m["blk.0.attn_v.weight"], base);
    m = types_of(tensors, choose_types(tensors, {"qwen2", 16, 12, 2, 8}, {ft}));  // eight experts
    EXPECT_EQ(m["blk.3.attn_output.weight"], DType::Q5_K);
    EXPECT_EQ(m["blk.3.attn_v.weight"], DType::Q8_0);
  }
  const auto narrow = qwen2_tensors(24, 896, 4864, 128, 151936);
  const ModelHints h{"qwen2", 24, 14, 2, 0};
  for (FileType ft : {FileType::IQ4_NL, FileType::IQ4_XS}) {
    const auto choices = choose_types(narrow, h, {ft});
    auto m = types_of(narrow, choices);
    EXPECT_EQ(m["token_embd.weight"], DType::Q8_0);  // Q6_K does not fit 896
    EXPECT_EQ(m["blk.5.attn_q.weight"], DType::IQ4_NL);
    EXPECT_EQ(m["blk.5.ffn_down.weight"], ft == FileType::IQ4_NL ? DType::IQ4_NL : DType::IQ4_XS);  // 4864 = 19 x 256
    EXPECT_EQ(m["blk.0.attn_v.weight"], DType::Q5_1);  // Q5_K, then its 32-block fallback
  }
  std::vector<TensorDesc> odd = {{"blk.0.ffn_up.weight", DType::F32, {100, 64}}};  // no 32-block fits 100
  const auto c = choose_types(odd, {"llama", 1, 1, 1, 0}, {FileType::IQ4_NL});
  EXPECT_EQ(c[0].type, DType::F16);
  EXPECT_TRUE(c[0].fell_back);
}

// TQ1_0 / TQ2_0: every layer matrix ternary, an untied token_embd Q4_K, the output Q6_K; rows that
// miss 256 fall back to Q4_0.
TEST(TensorTypes, TernaryMixes) {
  auto tensors = qwen2_tensors(8, 1536, 8960, 256, 151936);
  tensors.push_back({"output.weight", DType::BF16, {1536, 151936}});
  for (FileType ft : {FileType::TQ1_0, FileType::TQ2_0}) {
    const DType base = ft == FileType::TQ1_0 ? DType::TQ1_0 : DType::TQ2_0;
    auto m = types_of(tensors, choose_types(tensors, {"qwen2", 8, 12, 2, 0}, {ft}));
    EXPECT_EQ(m["token_embd.weight"], DType::Q4_K);
    EXPECT_EQ(m["output.weight"], DType::Q6_K);
    for (const char* name : {"attn_q.weight", "attn_v.weight", "attn_output.weight", "ffn_down.weight", "ffn_up.weight"})
      EXPECT_EQ(m[std::string("blk.0.") + name], base) << name;
    const auto narrow = qwen2_tensors(2, 896, 4864, 128, 1000);
    m = types_of(narrow, choose_types(narrow, {"qwen2", 2, 14, 2, 0}, {ft}));
    EXPECT_EQ(m["token_embd.weight"], DType::Q8_0);  // tied output
    EXPECT_EQ(m["blk.0.attn_q.weight"], DType::Q4_0);
    EXPECT_EQ(m["blk.0.ffn_down.weight"], base);
  }
  EXPECT_EQ(static_cast<uint32_t>(*file_type_from_name("iq4_nl")), 25u);  // llama_ftype's values
  EXPECT_EQ(static_cast<uint32_t>(*file_type_from_name("IQ4_XS")), 30u);
  EXPECT_EQ(static_cast<uint32_t>(*file_type_from_name("tq1_0")), 36u);
  EXPECT_EQ(static_cast<uint32_t>(*file_type_from_name("TQ2_0")), 37u);
}

// The IQ2 / IQ1 mixes (llama.cpp's branch for them): the output Q5_K; an untied token_embd Q2_K,
// IQ3_S for IQ2_S / IQ2_M; attn_v Q4_K with four or more query heads per KV head, else Q2_K (IQ3_S);
// the first eighth of ffn_down Q2_K (IQ3_S); attn_output IQ2_XXS for IQ1, IQ3_S for IQ2_S / IQ2_M;
// everything else the file type's own block type. Every layer tensor of those low-bit types needs
// an imatrix; token_embd and output never do.
TEST(TensorTypes, Iq2Iq1Mixes) {
  auto tensors = qwen2_tensors(16, 1536, 8960, 256, 151936);
  tensors.push_back({"output.weight", DType::BF16, {1536, 151936}});
  const struct { FileType ft; DType base, more, attn_output; } cases[] = {
      {FileType::IQ2_XXS, DType::IQ2_XXS, DType::Q2_K, DType::IQ2_XXS},
      {FileType::IQ2_XS, DType::IQ2_XS, DType::Q2_K, DType::IQ2_XS},
      {FileType::IQ2_S, DType::IQ2_XS, DType::IQ3_S, DType::IQ3_S},
      {FileType::IQ2_M, DType::IQ2_S, DType::IQ3_S, DType::IQ3_S},
      {FileType::IQ1_S, DType::IQ1_S, DType::Q2_K, DType::IQ2_XXS},
      {FileType::IQ1_M, DType::IQ1_M, DType::Q2_K, DType::IQ2_XXS},
  };
  for (const auto& c : cases) {
    const std::string name(file_type_info(c.ft).name);
    EXPECT_EQ(file_type_from_name(name), c.ft);
    const auto choices = choose_types(tensors, {"qwen2", 16, 12, 6, 0}, {c.ft, true});  // 2 heads per KV head
    auto m = types_of(tensors, choices);
    EXPECT_EQ(m["output.weight"], DType::Q5_K) << name;
    EXPECT_EQ(m["token_embd.weight"], c.more == DType::IQ3_S ? DType::IQ3_S : DType::Q2_K) << name;
    for (int i = 0; i < 16; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      EXPECT_EQ(m[p + "attn_v.weight"], c.more) << name << i;
      EXPECT_EQ(m[p + "ffn_down.weight"], i < 2 ? c.more : c.base) << name << i;
      EXPECT_EQ(m[p + "attn_output.weight"], c.attn_output) << name << i;
      for (const char* t : {"attn_q.weight", "attn_k.weight", "ffn_up.weight", "ffn_gate.weight"})
        EXPECT_EQ(m[p + t], c.base) << name << p << t;
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      const DType t = choices[i].type;
      const bool low = t == DType::IQ2_XXS || t == DType::IQ2_XS || t == DType::IQ2_S || t == DType::IQ1_S || t == DType::IQ1_M;
      EXPECT_EQ(choices[i].needs_imatrix, low) << name << " " << tensors[i].name;
    }
    m = types_of(tensors, choose_types(tensors, {"qwen2", 16, 12, 2, 0}, {c.ft, true}));  // 6 heads per KV head
    EXPECT_EQ(m["blk.7.attn_v.weight"], DType::Q4_K) << name;
    m = types_of(tensors, choose_types(tensors, {"qwen2", 16, 12, 6, 8}, {c.ft, true}));  // eight experts
    EXPECT_EQ(m["blk.7.attn_v.weight"], DType::Q4_K) << name;
    EXPECT_EQ(m["blk.7.attn_k.weight"], DType::Q4_K) << name;
    EXPECT_EQ(m["blk.7.attn_output.weight"], DType::Q5_K) << name;
    // Rows of 896 miss 256: every IQ type falls back to IQ4_NL, Q2_K to Q4_0, the tied output to Q8_0.
    const auto narrow = qwen2_tensors(8, 896, 4864, 128, 1000);
    m = types_of(narrow, choose_types(narrow, {"qwen2", 8, 14, 7, 0}, {c.ft, true}));
    EXPECT_EQ(m["token_embd.weight"], DType::Q8_0) << name;
    EXPECT_EQ(m["blk.1.attn_q.weight"], DType::IQ4_NL) << name;
    EXPECT_EQ(m["blk.1.attn_v.weight"], c.more == DType::Q2_K ? DType::Q4_0 : DType::IQ4_NL) << name;
    EXPECT_EQ(m["blk.0.ffn_down.weight"], c.more) << name;  // 4864 = 19 x 256
    EXPECT_EQ(m["blk.1.ffn_down.weight"], c.base) << name;
  }
  // The requirement follows the tensor's type: Q2_K only in a Q2_K_S file.
  const auto q2ks = choose_types(tensors, {"qwen2", 16, 12, 6, 0}, {FileType::Q2_K_S});
  const auto q2k = choose_types(tensors, {"qwen2", 16, 12, 6, 0}, {FileType::Q2_K});
  ASSERT_EQ(tensors[3].name, "blk.0.ffn_gate.weight");
  EXPECT_EQ(q2ks[3].type, DType::Q2_K);
  EXPECT_TRUE(q2ks[3].needs_imatrix);
  EXPECT_FALSE(q2k[3].needs_imatrix);
}

}  // namespace
}  // namespace ridge::quant
