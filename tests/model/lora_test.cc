// LoRA adapters: the addend against dense arithmetic, the GGUF and PEFT readers, and a forward pass
// with an adapter against the same model with the adapter merged into its f32 weights.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.h"
#include "model/forward.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/lora/lora_adapter.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"

namespace ridge::testing {
namespace {

namespace fs = std::filesystem;

std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(LoraScale, RefusesWhatIsNoScale) {
  EXPECT_FLOAT_EQ(lora::lora_scale(16, 8, false, 1, "x"), 2.0f);
  EXPECT_FLOAT_EQ(lora::lora_scale(16, 16, true, 0.5f, "x"), 2.0f);
  EXPECT_THROW(lora::lora_scale(16, 0, false, 1, "x"), Error);
  EXPECT_THROW(lora::lora_scale(std::nan(""), 8, false, 1, "x"), Error);
  EXPECT_THROW(lora::lora_scale(1e30, 8, false, 1, "x"), Error);
  EXPECT_THROW(lora::lora_scale(-1, 8, false, 1, "x"), Error);
}

// A tiny f32 llama, an adapter for it (GGUF and PEFT), and the model with the adapter merged.
class LoraModelTest : public ::testing::Test {
 protected:
  static constexpr int64_t kRank = 4;
  static constexpr float kAlpha = 8;

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ridge-lora-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    synth::SynthOptions o;
    o.spec.arch = "llama";
    o.spec.name = "tiny";
    o.spec.n_vocab = 320;
    o.spec.n_embd = 64;
    o.spec.n_layer = 2;
    o.spec.n_head = 4;
    o.spec.n_head_kv = 2;
    o.spec.head_dim = 16;
    o.spec.rope_dim = 16;
    o.spec.n_ff = 96;
    o.spec.n_ctx_train = 128;
    o.type = DType::F32;
    o.stddev = 0.15f;
    base_ = (dir_ / "base.gguf").string();
    synth::write_synth_model(o, base_);
    const Model model = load_model(base_);
    spec_ = model.spec;
    // Random A and B for every target of every layer.
    const char* names[] = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};
    uint32_t seed = 10;
    for (int64_t l = 0; l < spec_.n_layer; ++l)
      for (int t = 0; t < lora::kTargets; ++t) {
        const auto [d_out, d_in] = lora::target_shape(spec_, lora::Target(t));
        Pair p{random_values(size_t(kRank * d_in), seed++, 0.2f), random_values(size_t(d_out * kRank), seed++, 0.2f), d_in, d_out};
        pairs_["blk." + std::to_string(l) + "." + names[t] + ".weight"] = p;
      }
    write_gguf_adapter();
    write_merged();
    write_peft();
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Pair {
    std::vector<float> a, b;  // (rank, d_in), (d_out, rank)
    int64_t d_in = 0, d_out = 0;
  };

  void write_gguf_adapter() {
    gguf::GgufWriter w((dir_ / "adapter.gguf").string());
    w.add_string("general.architecture", "llama");
    w.add_string("general.type", "adapter");
    w.add_string("adapter.type", "lora");
    w.add_f32("adapter.lora.alpha", kAlpha);
    for (const auto& [name, p] : pairs_) {
      w.add_tensor(name + ".lora_a", DType::F32, {p.d_in, kRank});
      w.add_tensor(name + ".lora_b", DType::F32, {kRank, p.d_out});
    }
    w.write_header();
    for (const auto& [name, p] : pairs_) {
      w.write_tensor_data(p.a.data(), p.a.size() * 4);
      w.write_tensor_data(p.b.data(), p.b.size() * 4);
    }
    w.finish();
  }

  // The base with W + (alpha / rank) B A in every target.
  void write_merged() {
    const gguf::GgufFile base = gguf::GgufFile::open(base_);
    gguf::GgufWriter w((dir_ / "merged.gguf").string());
    for (const auto& [key, value] : base.metadata())
      if (key != "general.alignment") w.add_value(key, value);
    for (const gguf::TensorInfo& t : base.tensors()) w.add_tensor(t.name, t.type, t.shape);
    w.write_header();
    const float scale = kAlpha / kRank;
    for (const gguf::TensorInfo& t : base.tensors()) {
      std::vector<float> data(size_t(t.n_elements));
      std::memcpy(data.data(), t.data, size_t(t.n_bytes));
      if (auto it = pairs_.find(t.name); it != pairs_.end()) {
        const Pair& p = it->second;
        for (int64_t o = 0; o < p.d_out; ++o)
          for (int64_t i = 0; i < p.d_in; ++i) {
            double d = 0;
            for (int64_t j = 0; j < kRank; ++j) d += double(p.b[size_t(o * kRank + j)]) * p.a[size_t(j * p.d_in + i)];
            data[size_t(o * p.d_in + i)] += float(scale * d);
          }
      }
      w.write_tensor_data(data.data(), data.size() * 4);
    }
    w.finish();
  }

  // The same adapter as PEFT writes it: Hugging Face names, q/k's B rows in rotate-half order.
  void write_peft() {
    const fs::path peft = dir_ / "peft";
    fs::create_directories(peft);
    std::ofstream(peft / "adapter_config.json")
        << nlohmann::json{{"peft_type", "LORA"}, {"r", kRank}, {"lora_alpha", kAlpha},
                          {"target_modules", {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}}}.dump();
    const std::map<std::string, std::string> modules = {
        {"attn_q", "self_attn.q_proj"}, {"attn_k", "self_attn.k_proj"}, {"attn_v", "self_attn.v_proj"},
        {"attn_output", "self_attn.o_proj"}, {"ffn_gate", "mlp.gate_proj"}, {"ffn_up", "mlp.up_proj"}, {"ffn_down", "mlp.down_proj"}};
    nlohmann::json header = nlohmann::json::object();
    std::string data;
    const auto add = [&](const std::string& name, const std::vector<float>& v, int64_t rows, int64_t cols) {
      header[name] = {{"dtype", "F32"}, {"shape", {rows, cols}}, {"data_offsets", {data.size(), data.size() + v.size() * 4}}};
      data.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    };
    for (const auto& [name, p] : pairs_) {
      const std::string blk = name.substr(0, name.find(".weight"));  // blk.L.attn_q
      const size_t dot1 = blk.find('.'), dot2 = blk.find('.', dot1 + 1);
      const std::string layer = blk.substr(dot1 + 1, dot2 - dot1 - 1), kind = blk.substr(dot2 + 1);
      std::vector<float> b = p.b;
      if (kind == "attn_q" || kind == "attn_k") {  // GGUF row h*hd + 2j + k was Hugging Face row h*hd + k*hd/2 + j
        const int64_t hd = spec_.head_dim;
        for (int64_t h = 0; h < p.d_out / hd; ++h)
          for (int64_t j = 0; j < hd / 2; ++j)
            for (int64_t k = 0; k < 2; ++k)
              std::copy_n(p.b.begin() + (h * hd + 2 * j + k) * kRank, kRank, b.begin() + (h * hd + k * hd / 2 + j) * kRank);
      }
      const std::string prefix = "base_model.model.model.layers." + layer + "." + modules.at(kind);
      add(prefix + ".lora_A.weight", p.a, kRank, p.d_in);
      add(prefix + ".lora_B.weight", b, p.d_out, kRank);
    }
    const std::string text = header.dump();
    std::ofstream out(peft / "adapter_model.safetensors", std::ios::binary);
    const uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << text << data;
  }

  std::vector<float> logits(const std::string& model_path, const lora::LoraAdapter* adapter) {
    const Model model = load_model(model_path);
    ModelForward forward(model, 2);
    forward.set_adapter(adapter);
    KvCache cache = forward.make_cache(32, KvDtype::F16);
    std::vector<float> out;
    const std::vector<int32_t> prompt{1, 17, 42, 99, 3, 250, 7, 64, 12, 180};
    forward.forward(prompt, cache, /*all_logits=*/true, out, /*prompt=*/true);
    return out;
  }

  fs::path dir_;
  std::string base_;
  ModelSpec spec_;
  std::map<std::string, Pair> pairs_;
};

TEST_F(LoraModelTest, AnAdapterEqualsItsMergedWeights) {
  const auto adapter = lora::load_adapter((dir_ / "adapter.gguf").string(), spec_, {1.0f, /*f16=*/false});
  EXPECT_EQ(adapter->n_matrices(), spec_.n_layer * lora::kTargets);
  EXPECT_EQ(adapter->rank, kRank);
  const std::vector<float> with = logits(base_, adapter.get());
  const std::vector<float> merged = logits((dir_ / "merged.gguf").string(), nullptr);
  const std::vector<float> plain = logits(base_, nullptr);
  ASSERT_EQ(with.size(), merged.size());
  double worst = 0, moved = 0;
  for (size_t i = 0; i < with.size(); ++i) {
    worst = std::max(worst, std::fabs(double(with[i]) - merged[i]));
    moved = std::max(moved, std::fabs(double(with[i]) - plain[i]));
  }
  EXPECT_LT(worst, 2e-3) << "adapter at run time vs merged weights";
  EXPECT_GT(moved, 0.05) << "the adapter must change the logits";
  // Kept in f16: A and B rounded, the logits within that rounding.
  const auto half = lora::load_adapter((dir_ / "adapter.gguf").string(), spec_);
  EXPECT_LT(half->bytes(), adapter->bytes());
  const std::vector<float> with16 = logits(base_, half.get());
  double worst16 = 0;
  for (size_t i = 0; i < with16.size(); ++i) worst16 = std::max(worst16, std::fabs(double(with16[i]) - merged[i]));
  EXPECT_LT(worst16, 2e-2);
}

TEST_F(LoraModelTest, PeftAndGgufReadTheSameAdapter) {
  const auto gguf = lora::load_adapter((dir_ / "adapter.gguf").string(), spec_);
  const auto peft = lora::load_adapter((dir_ / "peft").string(), spec_);
  EXPECT_EQ(peft->source_format, "peft");
  for (int64_t l = 0; l < spec_.n_layer; ++l)
    for (int t = 0; t < lora::kTargets; ++t) {
      const lora::LoraMatrix* a = gguf->matrix(l, lora::Target(t));
      const lora::LoraMatrix* b = peft->matrix(l, lora::Target(t));
      ASSERT_TRUE(a && b);
      EXPECT_EQ(a->a_t16, b->a_t16) << l << " " << t;
      EXPECT_EQ(a->b_t16, b->b_t16) << l << " " << t;  // q/k permuted into the GGUF's order
      EXPECT_FALSE(a->b_t16.empty());
      EXPECT_FLOAT_EQ(a->scale, b->scale);
    }
}

TEST_F(LoraModelTest, MismatchedAndBrokenAdaptersAreRefusedByName) {
  ModelSpec other = spec_;
  other.n_embd = 80;
  try {
    lora::load_adapter((dir_ / "adapter.gguf").string(), other);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0."), std::string::npos) << e.what();
  }
  // A truncated safetensors file.
  const fs::path bad = dir_ / "truncated";
  fs::create_directories(bad);
  fs::copy_file(dir_ / "peft" / "adapter_config.json", bad / "adapter_config.json");
  {
    std::ifstream in(dir_ / "peft" / "adapter_model.safetensors", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(bad / "adapter_model.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  EXPECT_THROW(lora::load_adapter(bad.string(), spec_), Error);
  // Good weights under a bad config: rank 0, an absurd alpha, not JSON.
  fs::copy_file(dir_ / "peft" / "adapter_model.safetensors", bad / "adapter_model.safetensors", fs::copy_options::overwrite_existing);
  for (const char* config : {R"({"peft_type":"LORA","r":0,"lora_alpha":8})", R"({"peft_type":"LORA","r":4,"lora_alpha":1e30})",
                             R"({"peft_type":"LORA","r":4,"lora_alpha":NaN})", R"({"peft_type":"IA3"})"}) {
    std::ofstream(bad / "adapter_config.json") << config;
    EXPECT_THROW(lora::load_adapter(bad.string(), spec_), Error) << config;
  }
  std::ofstream(bad / "adapter_config.json") << R"({"peft_type":"LORA","r":4,"lora_alpha":8})";
  EXPECT_NO_THROW(lora::load_adapter(bad.string(), spec_));
  EXPECT_THROW(lora::load_adapter((dir_ / "missing").string(), spec_), Error);
  EXPECT_THROW(lora::load_adapter(base_, spec_), Error);  // a model, not an adapter
}

}  // namespace
}  // namespace ridge::testing
