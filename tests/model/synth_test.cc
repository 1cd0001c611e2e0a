// Synthetic models: the GGUF writer round-trips through the reader, the vocabulary is a consistent
// byte-level BPE, tensor types follow llama.cpp's choices, random weights have the asked spread, and
// a written model loads and runs through the forward pass with finite logits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "kernels/cpu/isa.h"
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

// Q4_K and Q5_0 matrices are re-encoded at load on AVX-512 VNNI CPUs (model/pack_weights.h); the
// logits stay those of the file's own types (RIDGE_PACK=0: read as stored) up to activation and
// scale rounding.
TEST(SynthModel, RecodedMatricesGiveTheLogitsOfTheFileTypes) {
  if (cpu::active_isa() != cpu::Isa::Avx512Vnni) GTEST_SKIP() << "matrices are re-encoded on AVX-512 VNNI CPUs only";
  for (DType type : {DType::Q4_K, DType::Q5_0}) {
    const std::string path = temp_path("synth_recode");
    SynthOptions o = two_layer_llama(512, 256, 64, 512);
    o.type = type;
    o.stddev = 0.05f;
    write_synth_model(o, path);
    const std::vector<int32_t> tokens = {0, 5, 300, 511, 17, 42};
    auto logits_of = [&](bool keep_file_types) {
      if (keep_file_types) setenv("RIDGE_PACK", "0", 1);
      const Model model = load_model(path);
      unsetenv("RIDGE_PACK");
      const WeightRef& up = model.weights.layers[1].w_up;
      EXPECT_EQ(up.recoded_from.has_value(), !keep_file_types);
      EXPECT_EQ(up.type, keep_file_types ? type : type == DType::Q4_K ? DType::Q4_1 : DType::Q8_0);
      ModelForward forward(model, 2);
      KvCache cache = forward.make_cache(16);
      std::vector<float> logits;
      forward.forward(tokens, cache, /*all_logits=*/true, logits);
      return logits;
    };
    const auto stored = logits_of(true), recoded = logits_of(false);
    double num = 0, den = 0;
    for (size_t i = 0; i < stored.size(); ++i) {
      num += (double(recoded[i]) - stored[i]) * (double(recoded[i]) - stored[i]);
      den += double(stored[i]) * stored[i];
    }
    EXPECT_LT(std::sqrt(num / den), 0.02) << dtype_name(type);  // relative RMS difference of the logits
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace ridge::synth
