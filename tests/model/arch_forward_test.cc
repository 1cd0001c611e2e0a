// Every architecture's forward pass gives a token the same logits alone and in a ragged batch with
// other sequences (prefill chunks and decodes together), bit for bit; MoE routing ties go to the
// lower expert id wherever the token is batched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <unistd.h>

#include "model/forward.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "tiny_arch_spec.h"

namespace ridge {
namespace {

class ArchForward : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("arch_forward_" + GetParam() + "_" + std::to_string(getpid()) + ".gguf")).string();
    synth::SynthOptions o;
    o.spec = tiny_spec(GetParam());
    o.type = DType::Q8_0;
    o.stddev = 0.15f;
    synth::write_synth_model(o, path_);
    model_ = std::make_unique<Model>(load_model(path_));
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Logits of each sequence's every position, each sequence run alone in one prefill.
  std::vector<std::vector<float>> alone(const std::vector<std::vector<int32_t>>& seqs) {
    std::vector<std::vector<float>> out;
    for (const auto& s : seqs) {
      ModelForward forward(*model_, 2);
      KvCache cache = forward.make_cache(64);
      std::vector<float> logits;
      forward.forward(s, cache, /*all_logits=*/true, logits);
      out.push_back(logits);
    }
    return out;
  }

  std::string path_;
  std::unique_ptr<Model> model_;
};

TEST_P(ArchForward, ATokensLogitsAreTheSameAloneAndInARaggedBatch) {
  const int64_t V = model_->spec.n_vocab;
  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> seqs;
  for (int len : {1, 9, 17, 4}) {
    std::vector<int32_t> s(static_cast<size_t>(len));
    for (auto& t : s) t = int32_t(rng() % (V - 4)) + 4;
    seqs.push_back(s);
  }
  const auto expected = alone(seqs);

  // Each sequence's first part as a chunk in one batch, then the rest of all of them in a second.
  ModelForward forward(*model_, 2);
  const int32_t block = 4;
  KvStore store(forward.kv_layout(block, 64, KvDtype::F16));
  std::vector<std::vector<BlockId>> tables(seqs.size());
  for (size_t i = 0, next = 0; i < seqs.size(); ++i)
    for (int b = 0; b < 6; ++b) tables[i].push_back(BlockId(next++ * 7 % 64));  // scattered blocks
  std::vector<size_t> split;
  for (const auto& s : seqs) split.push_back((s.size() + 1) / 2);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<int32_t> tokens;
    std::vector<SequenceRun> runs;
    for (size_t i = 0; i < seqs.size(); ++i) {
      const size_t begin = pass == 0 ? 0 : split[i], end = pass == 0 ? split[i] : seqs[i].size();
      if (begin == end) continue;
      tokens.insert(tokens.end(), seqs[i].begin() + begin, seqs[i].begin() + end);
      runs.push_back({int64_t(end - begin), int64_t(begin), tables[i], LogitsWanted::All});
    }
    std::vector<float> logits;
    forward.forward(TokenBatch{tokens, runs}, store, logits);
    size_t row = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      const size_t begin = pass == 0 ? 0 : split[i], end = pass == 0 ? split[i] : seqs[i].size();
      for (size_t p = begin; p < end; ++p, ++row)
        ASSERT_EQ(0, std::memcmp(logits.data() + row * V, expected[i].data() + p * V, size_t(V) * sizeof(float)))
            << GetParam() << " sequence " << i << " position " << p;
    }
  }
}

TEST_P(ArchForward, LogitsAreFiniteAndNotFlat) {
  ModelForward forward(*model_, 2);
  KvCache cache = forward.make_cache(64);
  std::vector<float> logits;
  const std::vector<int32_t> ids = {5, 9, 200, 17, 3, 44, 81};
  forward.forward(ids, cache, false, logits);
  const auto [lo, hi] = std::minmax_element(logits.begin(), logits.end());
  EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); }));
  EXPECT_GT(*hi - *lo, 0.5f) << GetParam();
}

// A draft's head cut to the first tokens of the vocabulary (spec/draft_model.h) gives exactly the
// first columns of the whole head's logits, whatever the architecture's head (tied or not, softcap).
TEST_P(ArchForward, AHeadCutToTheFirstTokensGivesTheFirstLogits) {
  const std::vector<int32_t> ids = {5, 9, 200, 17, 3, 44, 81};
  std::vector<float> full, cut;
  {
    ModelForward forward(*model_, 2);
    KvCache cache = forward.make_cache(64);
    forward.forward(ids, cache, true, full);
  }
  Model m = *model_;
  const int64_t V = m.spec.n_vocab, rows = 48;  // whole tiles of a packed head
  m.weights.output.rows = rows;
  ModelForward forward(m, 2);
  KvCache cache = forward.make_cache(64);
  forward.forward(ids, cache, true, cut);
  ASSERT_EQ(cut.size(), ids.size() * size_t(rows)) << GetParam();
  for (size_t t = 0; t < ids.size(); ++t)
    ASSERT_EQ(0, std::memcmp(cut.data() + t * rows, full.data() + t * V, size_t(rows) * sizeof(float)))
        << GetParam() << " token " << t;
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, ArchForward,
                         ::testing::ValuesIn(kTestArchitectures),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// A router whose weights are all zero scores every expert the same: the choice must be the lowest
// ids, for every token, alone or batched.
TEST(MoeRouting, TiesGoToTheLowestExpertIds) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("moe_ties_" + std::to_string(getpid()) + ".gguf")).string();
  synth::SynthOptions o;
  o.spec = tiny_spec("qwen3moe");
  o.type = DType::Q8_0;
  synth::write_synth_model(o, path);
  Model model = load_model(path);
  std::filesystem::remove(path);
  for (LayerWeights& l : model.weights.layers) {
    const WeightRef& r = l.router;
    std::memset(const_cast<void*>(r.data), 0, size_t(r.rows * r.row_bytes()));  // Q8_0 scales 0: logits 0
  }
  ModelForward forward(model, 2);
  KvCache cache = forward.make_cache(32);
  std::vector<float> logits;
  forward.forward(std::vector<int32_t>{5, 6, 7, 8, 9}, cache, true, logits);
  const MoeStats& stats = forward.moe_stats();
  for (int64_t l = 0; l < stats.n_layer; ++l)
    for (int64_t e = 0; e < stats.n_expert; ++e)
      EXPECT_EQ(stats.of(l, e), e < model.spec.n_expert_used ? 5u : 0u) << "layer " << l << " expert " << e;
}

}  // namespace
}  // namespace ridge
