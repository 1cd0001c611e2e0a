// DeepSeek-V2/V3 (deepseek2) through ridge's forward pass on small random models, with and
// without a query bottleneck: a token's logits are the same bits alone and in a ragged batch with
// other sequences, over histories of several attention tiles, in prefill chunks, batched decodes
// and a lone decode (whose tiles run on different threads); the KV store holds one latent row per
// position and layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "model/forward.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "tiny_arch_spec.h"

namespace ridge {
namespace {

class Deepseek2Forward : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("deepseek2_forward_" + std::to_string(GetParam()) + "_" + std::to_string(getpid()) + ".gguf")).string();
    synth::SynthOptions o;
    o.spec = tiny_deepseek2(GetParam());
    o.type = DType::Q8_0;
    o.stddev = 0.15f;
    synth::write_synth_model(o, path_);
    model_ = std::make_unique<Model>(load_model(path_));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string path_;
  std::unique_ptr<Model> model_;
};

TEST_P(Deepseek2Forward, KvStoreHoldsTheLatentAndTheRopeKeyOnly) {
  const ModelSpec& s = model_->spec;
  EXPECT_TRUE(s.is_mla());
  EXPECT_EQ(s.head_dim, 48);
  EXPECT_EQ(s.q_lora_rank, GetParam());
  ModelForward forward(*model_, 2);
  const KvLayout layout = forward.kv_layout(16, 8, KvDtype::F16);
  EXPECT_TRUE(layout.keys_only);
  EXPECT_EQ(layout.kv_dim(), 32 + 16);
  EXPECT_EQ(layout.bytes_per_token_per_layer(), (32 + 16) * 2);
  EXPECT_EQ(forward.make_cache(112).bytes(), 3 * 112 * (32 + 16) * 2);  // 112: whole tiles of 16 rows
}

TEST_P(Deepseek2Forward, ATokensLogitsAreTheSameAloneAndInARaggedBatch) {
  const int64_t V = model_->spec.n_vocab;
  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> seqs;
  for (int len : {1, 300, 17, 530}) {
    std::vector<int32_t> s(static_cast<size_t>(len));
    for (auto& t : s) t = int32_t(rng() % (V - 4)) + 4;
    seqs.push_back(s);
  }
  std::vector<std::vector<float>> expected;
  for (const auto& s : seqs) {
    ModelForward forward(*model_, 2);
    KvCache cache = forward.make_cache(int64_t(s.size()));
    forward.forward(s, cache, /*all_logits=*/true, expected.emplace_back());
  }

  // Pass 0: each sequence's first part as a prefill chunk; pass 1: the rest but the last two
  // tokens; pass 2: every sequence's next-to-last token as a decode together; pass 3: the longest
  // sequence's last token alone (few queries over a long history: its tiles run in parallel).
  ModelForward forward(*model_, 2);
  const int32_t block = 16;
  KvStore store(forward.kv_layout(block, 160, KvDtype::F16));
  std::vector<std::vector<BlockId>> tables(seqs.size());
  for (size_t i = 0, next = 0; i < seqs.size(); ++i)
    for (int b = 0; b < 36; ++b) tables[i].push_back(BlockId(next++ * 7 % 160));  // scattered blocks
  auto range = [&](size_t i, int pass) -> std::pair<size_t, size_t> {
    const size_t n = seqs[i].size();
    size_t cut[5] = {0, std::max<size_t>(n / 2, 1), 0, 0, n};
    cut[2] = std::max(cut[1], n - std::min<size_t>(n, 2));
    cut[3] = std::max(cut[2], n - 1);
    if (pass == 3 && i != 3) return {n, n};
    return {cut[pass], cut[pass + 1]};
  };
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<int32_t> tokens;
    std::vector<SequenceRun> runs;
    std::vector<std::pair<size_t, size_t>> rows;  // (sequence, position) of each logits row
    for (size_t i = 0; i < seqs.size(); ++i) {
      const auto [begin, end] = range(i, pass);
      if (begin >= end) continue;
      tokens.insert(tokens.end(), seqs[i].begin() + int64_t(begin), seqs[i].begin() + int64_t(end));
      runs.push_back({int64_t(end - begin), int64_t(begin), tables[i], LogitsWanted::All});
      for (size_t p = begin; p < end; ++p) rows.emplace_back(i, p);
    }
    std::vector<float> logits;
    forward.forward(TokenBatch{tokens, runs}, store, logits);
    ASSERT_EQ(logits.size(), rows.size() * size_t(V));
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto [i, p] = rows[r];
      ASSERT_EQ(0, std::memcmp(logits.data() + r * size_t(V), expected[i].data() + p * size_t(V), size_t(V) * sizeof(float)))
          << "q_lora_rank " << GetParam() << " pass " << pass << " sequence " << i << " position " << p;
    }
  }
}

TEST_P(Deepseek2Forward, LogitsAreFiniteAndNotFlat) {
  ModelForward forward(*model_, 2);
  KvCache cache = forward.make_cache(64);
  std::vector<float> logits;
  forward.forward(std::vector<int32_t>{5, 9, 200, 17, 3, 44, 81}, cache, false, logits);
  const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
  EXPECT_GT(*hi - *lo, 0.5f);
}

INSTANTIATE_TEST_SUITE_P(QueryBottleneck, Deepseek2Forward, ::testing::Values(int64_t(0), int64_t(32)));

}  // namespace
}  // namespace ridge
