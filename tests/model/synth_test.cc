// Synthetic models: the GGUF writer round-trips through the reader, the vocabulary is a consistent
// byte-level BPE, tensor types follow llama.cpp's choices, random weights have the asked spread, and
// a written model loads and runs through the forward pass with finite logits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "kernels/cpu/isa.h"
#include "kernels/cpu/packed_layout.h"
#include "kernels/ref/dequant.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/forward.h"
#include "model/model_loader.h"
#include "model/synth/random_weights.h"
#include "model/synth/synth_model.h"
#include "model/synth/synth_vocab.h"
#include "plan/model_catalog.h"
#include "tokenizer/tokenizer.h"

namespace ridge::synth {
namespace {

// A two-layer llama with four query heads over two KV heads.
SynthOptions two_layer_llama(int64_t n_vocab, int64_t n_embd, int64_t head_dim, int64_t n_ff) {
  SynthOptions o;
  o.spec.arch = "llama";
  o.spec.name = "tiny";
  o.spec.n_vocab = n_vocab;
  o.spec.n_embd = n_embd;
  o.spec.n_layer = 2;
  o.spec.n_head = 4;
  o.spec.n_head_kv = 2;
  o.spec.head_dim = head_dim;
  o.spec.rope_dim = head_dim;
  o.spec.n_ff = n_ff;
  o.spec.n_ctx_train = 256;
  return o;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()) + ".gguf")).string();
}

TEST(GgufWriter, RoundTripsMetadataAndTensorsThroughTheReader) {
  const std::string path = temp_path("writer_roundtrip");
  {
    gguf::GgufWriter w(path);
    w.add_string("general.architecture", "llama");
    w.add_u32("a.u32", 7);
    w.add_i32("a.i32", -3);
    w.add_f32("a.f32", 0.5f);
    w.add_bool("a.bool", true);
    w.add_string_array("a.strings", {"x", "", "yz"});
    w.add_i32_array("a.ints", {1, -2});
    w.add_f32_array("a.floats", {1.5f});
    w.add_tensor("t0", DType::F32, {3});       // 12 bytes: padded to 32
    w.add_tensor("t1", DType::Q8_0, {32, 2});  // 68 bytes
    w.write_header();
    const float t0[3] = {1, 2, 3};
    w.write_tensor_data(t0, sizeof t0);
    std::vector<uint8_t> t1(68);
    for (size_t i = 0; i < t1.size(); ++i) t1[i] = uint8_t(i);
    w.write_tensor_data(t1.data(), 30);  // in two chunks
    w.write_tensor_data(t1.data() + 30, 38);
    w.finish();
  }
  const auto f = gguf::GgufFile::open(path);
  EXPECT_EQ(f.get_int("a.u32"), 7);
  EXPECT_EQ(f.get_int("a.i32"), -3);
  EXPECT_EQ(f.get_double("a.f32"), 0.5);
  EXPECT_EQ(f.get_bool("a.bool"), true);
  EXPECT_EQ(f.get("a.strings").as_array().at(2).as_string(), "yz");
  EXPECT_EQ(f.get("a.ints").as_array().at(1).as_int(), -2);
  ASSERT_EQ(f.tensors().size(), 2u);
  const auto* t1 = f.find_tensor("t1");
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->offset, 32u);
  EXPECT_EQ(t1->shape, (std::vector<int64_t>{32, 2}));
  EXPECT_EQ(t1->data[67], 67);
  EXPECT_EQ(reinterpret_cast<const float*>(f.find_tensor("t0")->data)[2], 3.0f);
  std::filesystem::remove(path);
}

TEST(GgufWriter, RefusesTooMuchOrTooLittleDataAndLeavesNoFile) {
  const std::string path = temp_path("writer_short");
  {
    gguf::GgufWriter w(path);
    w.add_tensor("t", DType::F32, {4});
    w.write_header();
    const float x[8] = {};
    EXPECT_THROW(w.write_tensor_data(x, sizeof x), Error);
    w.write_tensor_data(x, 8);
    EXPECT_THROW(w.finish(), Error);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".part"));
}

TEST(SynthVocab, HasExactlyNVocabUniqueTokensAndConsistentMerges) {
  for (int64_t n : {258, 300, 1000, 32000}) {
    const SynthVocab v = make_synth_vocab(n);
    ASSERT_EQ(int64_t(v.tokens.size()), n);
    ASSERT_EQ(v.types.size(), v.tokens.size());
    const std::set<std::string> unique(v.tokens.begin(), v.tokens.end());
    EXPECT_EQ(int64_t(unique.size()), n);
    EXPECT_EQ(int64_t(v.merges.size()), n - 258);
    for (const std::string& m : v.merges) {
      const size_t space = m.find(' ');
      ASSERT_NE(space, std::string::npos);
      EXPECT_TRUE(unique.count(m.substr(0, space)) && unique.count(m.substr(space + 1))) << m;
      EXPECT_TRUE(unique.count(m.substr(0, space) + m.substr(space + 1))) << m;
    }
    EXPECT_EQ(v.types[size_t(v.bos)], 3);
    EXPECT_EQ(v.types[size_t(v.eos)], 3);
  }
  EXPECT_THROW(make_synth_vocab(100), Error);
}

TEST(SynthModel, TensorTypesFollowLlamaCppChoices) {
  SynthOptions o;
  o.spec = *plan::named_model_spec("tinyllama-1.1b");
  o.type = DType::Q4_0;
  auto tensors = synth_tensors(o);
  auto type_of = [&](const std::string& name) {
    for (const auto& t : tensors)
      if (t.name == name) return t.type;
    ADD_FAILURE() << name << " missing";
    return DType::F32;
  };
  EXPECT_EQ(type_of("token_embd.weight"), DType::Q8_0);
  EXPECT_EQ(type_of("output.weight"), DType::Q6_K);
  EXPECT_EQ(type_of("blk.21.ffn_down.weight"), DType::Q4_0);
  EXPECT_EQ(type_of("blk.0.attn_norm.weight"), DType::F32);

  o.spec = *plan::named_model_spec("smollm2-135m");  // 576 columns: not whole Q4_K super-blocks
  o.type = DType::Q4_K;
  tensors = synth_tensors(o);
  EXPECT_EQ(type_of("blk.0.attn_q.weight"), DType::Q5_0);
  EXPECT_EQ(type_of("blk.0.ffn_down.weight"), DType::Q4_K);  // 1536 columns
  for (const auto& t : tensors) EXPECT_NE(t.name, "output.weight");  // tied

  o.spec = *plan::named_model_spec("llama-3.2-1b");
  o.type = DType::F16;
  tensors = synth_tensors(o);
  EXPECT_EQ(type_of("rope_freqs.weight"), DType::F32);
  EXPECT_EQ(type_of("token_embd.weight"), DType::F16);
}

TEST(SynthModel, RandomRowsHaveTheAskedSpreadInEveryType) {
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                     DType::Q5_1, DType::Q4_K, DType::Q6_K}) {
    const int64_t n = 256 * 64;
    std::vector<uint8_t> bytes(size_t(dtype_row_bytes(type, n)));
    random_row(type, n, 0.02f, 42, 3, bytes.data());
    std::vector<float> x(static_cast<size_t>(n));
    ref::dequantize_row(type, bytes.data(), x.data(), n);
    double sum = 0, squares = 0;
    for (float v : x) {
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      squares += double(v) * v;
    }
    const double mean = sum / double(n), stddev = std::sqrt(squares / double(n) - mean * mean);
    EXPECT_NEAR(stddev, 0.02, 0.004) << dtype_name(type);
    EXPECT_NEAR(mean, 0.0, 0.002) << dtype_name(type);
    std::vector<uint8_t> again(bytes.size());
    random_row(type, n, 0.02f, 42, 3, again.data());
    EXPECT_EQ(again, bytes) << "rows depend only on (seed, row)";
  }
}

TEST(SynthModel, AWrittenModelLoadsTokenizesAndRuns) {
  const std::string path = temp_path("synth_small");
  SynthOptions o = two_layer_llama(400, 64, 16, 128);
  o.type = DType::Q4_1;
  write_synth_model(o, path);

  const Model model = load_model(path);
  EXPECT_EQ(model.spec.n_vocab, 400);
  EXPECT_EQ(model.spec.n_head_kv, 2);
  EXPECT_EQ(model.weights.layers[1].w_up.type, DType::Q4_1);
  ModelForward forward(model);
  KvCache cache = forward.make_cache(16);
  std::vector<float> logits;
  const std::vector<int32_t> tokens = {0, 5, 300, 399};
  forward.forward(tokens, cache, /*all_logits=*/true, logits);
  ASSERT_EQ(logits.size(), size_t(4 * 400));
  for (float v : logits) ASSERT_TRUE(std::isfinite(v));

  const auto file = gguf::GgufFile::open(path);
  const Tokenizer tokenizer = Tokenizer::from_gguf(file);
  EXPECT_LT(tokenizer.encode("hello world", false, false).size(), size_t(11));  // merges make multi-letter pieces
  std::filesystem::remove(path);
}

// Matrices are packed at load on AVX-512 VNNI CPUs (model/pack_weights.h): Q5_0 re-encoded as
// Q8_0, Q4_K as Q4_1 only where AMX runs the prefill, the other K-quants packed as they are; the
// logits stay those of the file's own types (RIDGE_PACK=0: read as stored) up to activation and
// scale rounding.
TEST(SynthModel, PackedMatricesGiveTheLogitsOfTheFileTypes) {
  if (cpu::active_isa() != cpu::Isa::Avx512Vnni) GTEST_SKIP() << "matrices are packed on AVX-512 VNNI CPUs only";
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q5_0}) {
    const std::string path = temp_path("synth_recode");
    SynthOptions o = two_layer_llama(512, 256, 64, 512);
    o.type = type;
    o.stddev = 0.05f;
    write_synth_model(o, path);
    const std::vector<int32_t> tokens = {0, 5, 300, 511, 17, 42};
    const bool is_recoded = type == DType::Q5_0 || (type == DType::Q4_K && cpu::amx_usable());
    auto logits_of = [&](bool keep_file_types) {
      if (keep_file_types) setenv("RIDGE_PACK", "0", 1);
      const Model model = load_model(path);
      unsetenv("RIDGE_PACK");
      const WeightRef& up = model.weights.layers[1].w_up;
      EXPECT_EQ(up.packed, !keep_file_types) << dtype_name(type);
      EXPECT_EQ(up.recoded_from.has_value(), is_recoded && !keep_file_types) << dtype_name(type);
      EXPECT_EQ(up.type, keep_file_types || !is_recoded ? type : type == DType::Q4_K ? DType::Q4_1 : DType::Q8_0);
      ModelForward forward(model, 2);
      KvCache cache = forward.make_cache(16);
      std::vector<float> logits;
      forward.forward(tokens, cache, /*all_logits=*/true, logits);
      return logits;
    };
    const auto stored = logits_of(true), packed = logits_of(false);
    double num = 0, den = 0;
    for (size_t i = 0; i < stored.size(); ++i) {
      num += (double(packed[i]) - stored[i]) * (double(packed[i]) - stored[i]);
      den += double(stored[i]) * stored[i];
    }
    EXPECT_LT(std::sqrt(num / den), 0.02) << dtype_name(type);  // relative RMS difference of the logits
    std::filesystem::remove(path);
  }
}

// ---- Architectures beyond dense llama: tensor lists as llama.cpp's load_arch_tensors creates them.

SynthOptions named(const std::string& shape, DType type = DType::Q8_0) {
  SynthOptions o;
  o.spec = *plan::named_model_spec(shape);
  o.type = type;
  return o;
}

const SynthTensor& tensor(const std::vector<SynthTensor>& tensors, const std::string& name) {
  for (const auto& t : tensors)
    if (t.name == name) return t;
  throw Error("no tensor " + name);
}

bool has_tensor(const std::vector<SynthTensor>& tensors, const std::string& name) {
  for (const auto& t : tensors)
    if (t.name == name) return true;
  return false;
}

using Shape = std::vector<int64_t>;

TEST(SynthArchitectures, Qwen3HasPerHeadQkNormAndTiedEmbeddings) {
  const auto t = synth_tensors(named("qwen3-0.6b"));
  EXPECT_EQ(t.size(), 2u + 28 * 11);  // token_embd, output_norm; 11 per layer
  EXPECT_FALSE(has_tensor(t, "output.weight"));
  EXPECT_EQ(tensor(t, "blk.27.attn_q_norm.weight").gguf_shape(), Shape({128}));
  EXPECT_EQ(tensor(t, "blk.0.attn_k_norm.weight").fill, SynthTensor::Fill::Ones);
  EXPECT_EQ(tensor(t, "blk.0.attn_q.weight").gguf_shape(), Shape({1024, 2048}));  // 16 heads of 128
  EXPECT_EQ(tensor(t, "blk.0.attn_k.weight").gguf_shape(), Shape({1024, 1024}));  // 8 KV heads
  EXPECT_EQ(tensor(t, "blk.0.attn_output.weight").gguf_shape(), Shape({2048, 1024}));
}

TEST(SynthArchitectures, Qwen3MoeStacksExpertsIn3dTensors) {
  const auto t = synth_tensors(named("qwen3-30b-a3b", DType::Q4_K));
  EXPECT_EQ(t.size(), 3u + 48 * 12);
  const SynthTensor& gate = tensor(t, "blk.47.ffn_gate_exps.weight");
  EXPECT_EQ(gate.gguf_shape(), Shape({2048, 768, 128}));
  EXPECT_EQ(gate.total_rows(), 768 * 128);
  EXPECT_EQ(gate.type, DType::Q4_K);
  EXPECT_EQ(tensor(t, "blk.0.ffn_up_exps.weight").gguf_shape(), Shape({2048, 768, 128}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_down_exps.weight").gguf_shape(), Shape({768, 2048, 128}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_down_exps.weight").type, DType::Q4_K);  // 768 = 3 super-blocks
  const SynthTensor& router = tensor(t, "blk.0.ffn_gate_inp.weight");
  EXPECT_EQ(router.gguf_shape(), Shape({2048, 128}));
  EXPECT_EQ(router.type, DType::F32);  // llama.cpp's quantizer leaves routers in f32
  EXPECT_FALSE(has_tensor(t, "blk.0.ffn_gate.weight"));
}

TEST(SynthArchitectures, Gemma3HasPostNormsAndQkNorm) {
  const auto t = synth_tensors(named("gemma3-270m"));
  EXPECT_EQ(t.size(), 2u + 18 * 13);
  EXPECT_FALSE(has_tensor(t, "output.weight"));
  EXPECT_EQ(tensor(t, "blk.17.post_attention_norm.weight").gguf_shape(), Shape({640}));
  EXPECT_EQ(tensor(t, "blk.17.post_ffw_norm.weight").gguf_shape(), Shape({640}));
  EXPECT_EQ(tensor(t, "blk.0.attn_q_norm.weight").gguf_shape(), Shape({256}));
  EXPECT_EQ(tensor(t, "blk.0.attn_q.weight").gguf_shape(), Shape({640, 1024}));
  EXPECT_EQ(tensor(t, "blk.0.attn_k.weight").gguf_shape(), Shape({640, 256}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_gate.weight").gguf_shape(), Shape({640, 2048}));
}

TEST(SynthArchitectures, MixtralIsLlamaWithExpertsOfWidthNff) {
  const auto t = synth_tensors(named("mixtral-8x7b"));
  EXPECT_EQ(t.size(), 3u + 32 * 10);
  EXPECT_EQ(tensor(t, "blk.31.ffn_gate_exps.weight").gguf_shape(), Shape({4096, 14336, 8}));
  EXPECT_EQ(tensor(t, "blk.31.ffn_down_exps.weight").gguf_shape(), Shape({14336, 4096, 8}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_gate_inp.weight").gguf_shape(), Shape({4096, 8}));
  EXPECT_FALSE(has_tensor(t, "blk.0.ffn_up.weight"));
}

TEST(SynthArchitectures, Qwen2MoeHasBiasesAndAGatedSharedExpert) {
  const auto t = synth_tensors(named("qwen1.5-moe-a2.7b"));
  EXPECT_EQ(t.size(), 3u + 24 * 17);
  EXPECT_EQ(tensor(t, "blk.0.attn_q.bias").fill, SynthTensor::Fill::Zeros);
  EXPECT_EQ(tensor(t, "blk.0.ffn_gate_exps.weight").gguf_shape(), Shape({2048, 1408, 60}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_gate_shexp.weight").gguf_shape(), Shape({2048, 5632}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_down_shexp.weight").gguf_shape(), Shape({5632, 2048}));
  const SynthTensor& gate = tensor(t, "blk.0.ffn_gate_inp_shexp.weight");
  EXPECT_EQ(gate.gguf_shape(), Shape({2048}));  // a vector in llama.cpp
  EXPECT_EQ(gate.fill, SynthTensor::Fill::Random);
  EXPECT_EQ(gate.type, DType::F32);
}

TEST(SynthArchitectures, OlmoeNormsTheWholeProjection) {
  const auto t = synth_tensors(named("olmoe-1b-7b"));
  EXPECT_EQ(t.size(), 3u + 16 * 12);
  EXPECT_EQ(tensor(t, "blk.0.attn_q_norm.weight").gguf_shape(), Shape({2048}));
  EXPECT_EQ(tensor(t, "blk.0.attn_k_norm.weight").gguf_shape(), Shape({2048}));
  EXPECT_EQ(tensor(t, "blk.15.ffn_up_exps.weight").gguf_shape(), Shape({2048, 1024, 64}));
}

// MLA in the split form llama.cpp's converter writes: attn_k_b per head, stored transposed.
TEST(SynthArchitectures, DeepSeekV2LiteHasLatentAttentionWithoutAQueryBottleneck) {
  const auto t = synth_tensors(named("deepseek-v2-lite", DType::Q4_K));
  EXPECT_EQ(t.size(), 3u + 11 + 26 * 15);  // one dense layer, then MoE layers
  EXPECT_EQ(tensor(t, "blk.0.attn_q.weight").gguf_shape(), Shape({2048, 16 * 192}));
  EXPECT_FALSE(has_tensor(t, "blk.0.attn_q_a.weight"));
  EXPECT_FALSE(has_tensor(t, "blk.0.attn_kv_b.weight"));
  EXPECT_EQ(tensor(t, "blk.0.attn_kv_a_mqa.weight").gguf_shape(), Shape({2048, 512 + 64}));
  EXPECT_EQ(tensor(t, "blk.0.attn_kv_a_norm.weight").gguf_shape(), Shape({512}));
  const SynthTensor& k_b = tensor(t, "blk.0.attn_k_b.weight");
  EXPECT_EQ(k_b.gguf_shape(), Shape({128, 512, 16}));
  EXPECT_EQ(k_b.type, DType::Q5_0);  // rows of 128: no whole Q4_K super-block
  EXPECT_EQ(tensor(t, "blk.0.attn_v_b.weight").gguf_shape(), Shape({512, 128, 16}));
  EXPECT_EQ(tensor(t, "blk.0.attn_v_b.weight").type, DType::Q4_K);
  EXPECT_EQ(tensor(t, "blk.0.attn_output.weight").gguf_shape(), Shape({16 * 128, 2048}));
  EXPECT_EQ(tensor(t, "blk.0.ffn_gate.weight").gguf_shape(), Shape({2048, 10944}));
  EXPECT_FALSE(has_tensor(t, "blk.0.ffn_gate_inp.weight"));
  EXPECT_EQ(tensor(t, "blk.1.ffn_gate_exps.weight").gguf_shape(), Shape({2048, 1408, 64}));
  EXPECT_EQ(tensor(t, "blk.1.ffn_up_shexp.weight").gguf_shape(), Shape({2048, 2 * 1408}));
  EXPECT_FALSE(has_tensor(t, "blk.1.exp_probs_b.bias"));  // softmax routing
}

TEST(SynthArchitectures, DeepSeekV3HasAQueryBottleneckAndSigmoidRoutingBias) {
  const auto t = synth_tensors(named("deepseek-v3"));
  EXPECT_EQ(t.size(), 3u + 3 * 13 + 58 * 18);
  EXPECT_EQ(tensor(t, "blk.0.attn_q_a.weight").gguf_shape(), Shape({7168, 1536}));
  EXPECT_EQ(tensor(t, "blk.0.attn_q_a_norm.weight").gguf_shape(), Shape({1536}));
  EXPECT_EQ(tensor(t, "blk.0.attn_q_b.weight").gguf_shape(), Shape({1536, 128 * 192}));
  EXPECT_EQ(tensor(t, "blk.2.ffn_down.weight").gguf_shape(), Shape({18432, 7168}));
  EXPECT_EQ(tensor(t, "blk.3.exp_probs_b.bias").gguf_shape(), Shape({256}));
  EXPECT_EQ(tensor(t, "blk.60.ffn_down_exps.weight").gguf_shape(), Shape({2048, 7168, 256}));
  EXPECT_EQ(tensor(t, "blk.60.ffn_gate_shexp.weight").gguf_shape(), Shape({7168, 2048}));
}

// The catalogue's shapes already follow what llama.cpp fixes for their architectures, so applying
// the conventions (as `ridge synth` does after its overrides) changes none of them.
TEST(SynthArchitectures, NamedShapesFollowTheirArchitecturesConventions) {
  for (const auto& name : plan::named_model_names()) {
    const ModelSpec before = *plan::named_model_spec(name);
    ModelSpec after = before;
    apply_arch_conventions(after);
    EXPECT_EQ(after.rope_style, before.rope_style) << name;
    EXPECT_EQ(after.qk_norm, before.qk_norm) << name;
    EXPECT_EQ(after.post_norms, before.post_norms) << name;
    EXPECT_EQ(after.ffn_activation, before.ffn_activation) << name;
    EXPECT_FLOAT_EQ(after.embedding_scale, before.embedding_scale) << name;
    EXPECT_EQ(after.qkv_bias, before.qkv_bias) << name;
    EXPECT_EQ(after.head_dim, before.head_dim) << name;
    EXPECT_EQ(after.n_head_kv, before.n_head_kv) << name;
    EXPECT_EQ(after.rope_dim, before.rope_dim) << name;
    EXPECT_EQ(after.n_ff, before.n_ff) << name;
    EXPECT_EQ(after.expert_weights_norm, before.expert_weights_norm) << name;
    EXPECT_EQ(after.shared_expert_gate, before.shared_expert_gate) << name;
    EXPECT_NO_THROW(synth_tensors(named(name))) << name;
  }
}

TEST(SynthArchitectures, ScaledDownShapesKeepTheirArchitecture) {
  SynthOptions o = named("gemma3-270m");
  o.spec.n_embd = 64;
  EXPECT_THROW(synth_tensors(o), Error);  // embeddings still scaled by sqrt(640)
  apply_arch_conventions(o.spec);
  EXPECT_FLOAT_EQ(o.spec.embedding_scale, 8.0f);
  EXPECT_NO_THROW(synth_tensors(o));

  o = named("mixtral-8x7b");
  o.spec.n_ff_expert = 128;  // llama.cpp reads the expert width from feed_forward_length
  EXPECT_THROW(synth_tensors(o), Error);
  apply_arch_conventions(o.spec);
  EXPECT_EQ(o.spec.n_ff, 128);
  EXPECT_EQ(tensor(synth_tensors(o), "blk.0.ffn_up_exps.weight").gguf_shape(), Shape({4096, 128, 8}));
}

// Specs that llama.cpp would refuse to load, or would run differently than they say.
TEST(SynthArchitectures, RefusesSpecsLlamaCppCannotRepresent) {
  auto refused = [](const std::string& shape, auto change) {
    SynthOptions o = named(shape);
    change(o.spec);
    EXPECT_THROW(synth_tensors(o), Error) << shape;
  };
  refused("qwen3-0.6b", [](ModelSpec& s) { s.qk_norm = QkNorm::None; });
  refused("qwen3-0.6b", [](ModelSpec& s) { s.rope_style = RopeStyle::Normal; });
  refused("qwen3-0.6b", [](ModelSpec& s) { s.arch = "falcon"; });
  refused("olmoe-1b-7b", [](ModelSpec& s) { s.n_head_kv = 4; });  // K norm is n_embd wide
  refused("qwen1.5-moe-a2.7b", [](ModelSpec& s) { s.tied_embeddings = true; });
  refused("qwen1.5-moe-a2.7b", [](ModelSpec& s) { s.head_dim = s.rope_dim = 64; });  // attn_q is n_embd x n_embd
  refused("qwen3-30b-a3b", [](ModelSpec& s) { s.expert_gating = ExpertGating::Sigmoid; });
  refused("qwen3-30b-a3b", [](ModelSpec& s) { s.n_shared_expert = 1; });
  refused("qwen3-30b-a3b", [](ModelSpec& s) { s.expert_weights_norm = false; });
  refused("llama-3-8b", [](ModelSpec& s) { s.sliding_window = 4096; });
  refused("qwen3-0.6b", [](ModelSpec& s) {
    s.n_expert = 8;
    s.n_expert_used = 2;
    s.n_ff_expert = 256;
  });
  refused("deepseek-v2-lite", [](ModelSpec& s) { s.n_shared_expert = 0; });
  refused("deepseek-v2-lite", [](ModelSpec& s) { s.kv_lora_rank = 0; });
  refused("qwen3-0.6b", [](ModelSpec& s) { s.rope_scaling.type = RopeScaling::Type::Llama3; });
  refused("deepseek-v3", [](ModelSpec& s) { s.n_layer = 27; });  // read as a lite model: no q_lora_rank
  refused("qwen3-0.6b", [](ModelSpec& s) { s.attention_scale = 0.5f; });
}

// llama.cpp knows Gemma 3 27B by its 62 layers and scales its scores by n_embd / n_head.
TEST(SynthArchitectures, Gemma3With62LayersTakesThe27bScoresScale) {
  SynthOptions o = named("gemma3-270m");
  o.spec.n_layer = 62;
  EXPECT_THROW(synth_tensors(o), Error);
  apply_arch_conventions(o.spec);
  EXPECT_FLOAT_EQ(o.spec.scores_scale(), 1.0f / std::sqrt(160.0f));
  EXPECT_NO_THROW(synth_tensors(o));
}

TEST(SynthArchitectures, WrittenFilesCarryTheKeysLlamaCppReads) {
  const std::string path = temp_path("synth_deepseek");
  SynthOptions o = named("deepseek-v3");
  o.spec.n_embd = 64;
  o.spec.n_layer = 2;
  o.spec.n_head = 4;
  o.spec.n_vocab = 300;
  o.spec.n_ff = 128;
  o.spec.n_expert = 4;
  o.spec.n_expert_used = 2;
  o.spec.n_ff_expert = 32;
  o.spec.n_layer_dense_lead = 1;
  o.spec.kv_lora_rank = 32;
  o.spec.q_lora_rank = 32;
  o.spec.qk_rope_head_dim = 16;
  o.spec.qk_nope_head_dim = 32;
  o.spec.v_head_dim = 32;
  apply_arch_conventions(o.spec);
  write_synth_model(o, path);
  const auto f = gguf::GgufFile::open(path);
  EXPECT_EQ(f.get_string("general.architecture"), "deepseek2");
  EXPECT_EQ(f.get_int("deepseek2.attention.head_count_kv"), 1);  // MLA as one shared latent head
  EXPECT_EQ(f.get_int("deepseek2.attention.key_length"), 32 + 16);
  EXPECT_EQ(f.get_int("deepseek2.attention.value_length"), 32);
  EXPECT_EQ(f.get_int("deepseek2.attention.key_length_mla"), 32 + 16);
  EXPECT_EQ(f.get_int("deepseek2.attention.value_length_mla"), 32);
  EXPECT_EQ(f.get_int("deepseek2.rope.dimension_count"), 16);
  EXPECT_EQ(f.get_int("deepseek2.leading_dense_block_count"), 1);
  EXPECT_EQ(f.get_int("deepseek2.expert_gating_func"), 2);  // sigmoid
  EXPECT_EQ(f.get_bool("deepseek2.expert_weights_norm"), true);
  EXPECT_NEAR(*f.get_double("deepseek2.expert_weights_scale"), 2.5, 1e-6);
  EXPECT_EQ(f.get_string("deepseek2.rope.scaling.type"), "yarn");
  EXPECT_NEAR(*f.get_double("deepseek2.rope.scaling.yarn_log_multiplier"), 0.1, 1e-6);  // 0.1 x mscale_all_dim
  EXPECT_EQ(f.get_int("deepseek2.rope.scaling.original_context_length"), 4096);
  const auto* exps = f.find_tensor("blk.1.ffn_down_exps.weight");
  ASSERT_NE(exps, nullptr);
  EXPECT_EQ(exps->shape, Shape({32, 64, 4}));
  // Each expert is its own draw: the file holds n_expert different matrices.
  const int64_t expert_bytes = 64 * dtype_row_bytes(exps->type, 32);
  EXPECT_NE(std::memcmp(exps->data, exps->data + expert_bytes, size_t(expert_bytes)), 0);
  std::filesystem::remove(path);
}

TEST(SynthArchitectures, Gemma3FilesSayHowLayersSlide) {
  const std::string path = temp_path("synth_gemma3");
  SynthOptions o = named("gemma3-270m");
  o.spec.n_layer = 2;
  o.spec.n_vocab = 300;
  write_synth_model(o, path);
  const auto f = gguf::GgufFile::open(path);
  EXPECT_EQ(f.get_int("gemma3.attention.sliding_window"), 512);
  EXPECT_FALSE(f.find("gemma3.attention.sliding_window_pattern"));  // llama.cpp's default, 6
  EXPECT_EQ(f.get_double("gemma3.rope.freq_base_swa"), 10000.0);
  EXPECT_EQ(f.get_int("gemma3.attention.key_length"), 256);
  EXPECT_EQ(f.get_int("gemma3.attention.head_count_kv"), 1);
  EXPECT_EQ(f.find_tensor("output.weight"), nullptr);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ridge::synth
