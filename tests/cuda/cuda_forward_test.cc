// The CUDA forward pass against the CPU one: logits of small random models of every weight type
// (prefill through the GEMV and through cuBLASLt, decode through CUDA graphs, ragged batches), the
// engine's greedy output on both devices, and greedy equality on the default model when it is
// present. Skipped without a CUDA device.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "backend/cuda/cuda_forward.h"
#include "cuda_test_util.h"
#include "engine/engine.h"
#include "model/gguf/gguf_file.h"
#include "model/forward.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "model/synth/synth_model.h"
#include "tiny_model.h"

namespace ridge::cuda {
namespace {

// Small models with head_dim 64 (the smallest the attention kernel takes) and peaked distributions.
const Model& tiny_model(DType type) {
  static std::map<DType, std::unique_ptr<Model>> models;
  auto& m = models[type];
  if (!m)
    ridge::test::with_tiny_model_file(ridge::test::tiny_options(type, 256, 4, 512, 512), "cuda_forward_test",
                               [&](const std::string& path) { m = std::make_unique<Model>(load_model(path)); });
  return *m;
}

std::vector<int32_t> random_tokens(int n, uint32_t seed, int64_t vocab) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& id : t) id = int32_t(rng() % uint32_t(vocab));
  return t;
}

// Logits agree to `tol` of their scale, and the greedy choice agrees wherever the CPU's is clear.
::testing::AssertionResult logits_agree(const std::vector<float>& got, const std::vector<float>& want, int64_t vocab,
                                        float tol) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t r = 0; r * size_t(vocab) < want.size(); ++r) {
    const float* g = got.data() + r * size_t(vocab);
    const float* w = want.data() + r * size_t(vocab);
    float scale = 1.0f;
    for (int64_t i = 0; i < vocab; ++i) scale = std::max(scale, std::fabs(w[i]));
    for (int64_t i = 0; i < vocab; ++i)
      if (!(std::fabs(g[i] - w[i]) <= tol * scale))
        return ::testing::AssertionFailure() << "row " << r << " token " << i << ": " << g[i] << " vs " << w[i];
    const int64_t best = std::max_element(w, w + vocab) - w;
    float second = -INFINITY;
    for (int64_t i = 0; i < vocab; ++i)
      if (i != best) second = std::max(second, w[i]);
    if (w[best] - second > 4 * tol * scale && std::max_element(g, g + vocab) - g != best)
      return ::testing::AssertionFailure() << "row " << r << ": greedy token differs";
  }
  return ::testing::AssertionSuccess();
}

// The same sequences on both devices: a prompt, then single-token decode steps.
void compare_sequence(const Model& model, int prompt_len, int steps, float prompt_tol, float decode_tol,
                      KvDtype kv = KvDtype::F16) {
  const ModelSpec& s = model.spec;
  ModelForward cpu(model, 2);
  CudaForward gpu(model);
  const int32_t block = 16, n_blocks = 8;
  KvStore host(cpu.kv_layout(block, n_blocks, kv));
  DeviceKvStore dev(gpu.kv_layout(block, n_blocks, kv));
  const std::vector<BlockId> table = {5, 2, 7, 0, 1, 3, 4, 6};
  std::vector<int32_t> tokens = random_tokens(prompt_len + steps, 9, s.n_vocab);
  std::vector<float> want, got;
  SequenceRun run{prompt_len, 0, table, LogitsWanted::All};
  cpu.forward(TokenBatch{std::span(tokens).first(size_t(prompt_len)), std::span(&run, 1)}, host, want);
  gpu.forward(TokenBatch{std::span(tokens).first(size_t(prompt_len)), std::span(&run, 1)}, dev, got);
  ASSERT_TRUE(logits_agree(got, want, s.n_vocab, prompt_tol)) << "prompt of " << prompt_len;
  for (int i = 0; i < steps; ++i) {
    run = {1, prompt_len + i, table, LogitsWanted::Last};
    const auto one = std::span(tokens).subspan(size_t(prompt_len + i), 1);
    cpu.forward(TokenBatch{one, std::span(&run, 1)}, host, want);
    gpu.forward(TokenBatch{one, std::span(&run, 1)}, dev, got);
    ASSERT_TRUE(logits_agree(got, want, s.n_vocab, decode_tol)) << "decode step " << i;
  }
}

TEST(CudaForward, MatchesTheCpuForEveryWeightType) {
  RIDGE_REQUIRE_CUDA();
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q6_K, DType::F16, DType::BF16, DType::F32}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    compare_sequence(tiny_model(type), 5, 6, 5e-3f, 5e-3f);    // GEMV prefill, graph decode
    compare_sequence(tiny_model(type), 13, 1, 5e-3f, 5e-3f);   // GEMV prefill in two launches
    compare_sequence(tiny_model(type), 40, 2, 3e-2f, 3e-2f);   // cuBLASLt BF16 prefill
  }
}

TEST(CudaForward, MatchesTheCpuForEveryKvType) {
  RIDGE_REQUIRE_CUDA();
  for (KvDtype kv : {KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    SCOPED_TRACE(std::string(kv_dtype_name(kv)));
    compare_sequence(tiny_model(DType::Q8_0), 7, 4, 1e-2f, 1e-2f, kv);
  }
}

TEST(CudaForward, RaggedBatchesAndGraphsGiveTheSameLogits) {
  RIDGE_REQUIRE_CUDA();
  const Model& model = tiny_model(DType::Q4_1);
  const int64_t vocab = model.spec.n_vocab;
  ModelForward cpu(model, 2);
  CudaForwardOptions eager_options;
  eager_options.graphs = false;
  CudaForward graphs(model), eager(model, eager_options);
  const KvLayout layout = cpu.kv_layout(16, 12, KvDtype::F16);
  KvStore host(layout);
  DeviceKvStore dev_graphs(layout), dev_eager(layout);
  const std::vector<BlockId> ta = {0, 1, 2}, tb = {3, 4}, tc = {5, 6, 7, 8};
  const std::vector<int32_t> prompt = random_tokens(3 + 7 + 20, 4, vocab);
  // One step: three prompts of different lengths, the middle one wanting no logits.
  const std::vector<SequenceRun> first = {{3, 0, ta, LogitsWanted::Last}, {7, 0, tb, LogitsWanted::None},
                                          {20, 0, tc, LogitsWanted::All}};
  std::vector<float> want, got, got_eager;
  cpu.forward(TokenBatch{prompt, first}, host, want);
  graphs.forward(TokenBatch{prompt, first}, dev_graphs, got);
  eager.forward(TokenBatch{prompt, first}, dev_eager, got_eager);
  ASSERT_TRUE(logits_agree(got, want, vocab, 3e-2f));
  ASSERT_TRUE(logits_agree(got_eager, got, vocab, 1e-6f));
  // Decode steps of the three together (a graph of bucket 4 with one padding row).
  for (int i = 0; i < 5; ++i) {
    const std::vector<int32_t> next = random_tokens(3, 100 + i, vocab);
    const std::vector<SequenceRun> runs = {{1, 3 + i, ta, LogitsWanted::Last}, {1, 7 + i, tb, LogitsWanted::Last},
                                           {1, 20 + i, tc, LogitsWanted::Last}};
    cpu.forward(TokenBatch{next, runs}, host, want);
    graphs.forward(TokenBatch{next, runs}, dev_graphs, got);
    eager.forward(TokenBatch{next, runs}, dev_eager, got_eager);
    ASSERT_TRUE(logits_agree(got, want, vocab, 3e-2f)) << "step " << i;
    ASSERT_TRUE(logits_agree(got_eager, got, vocab, 1e-4f)) << "step " << i;  // same kernels, other split-K
    std::vector<int32_t> ids;
    graphs.forward_argmax(TokenBatch{next, runs}, dev_graphs, ids);  // same tokens again: same K/V rewritten
    ASSERT_EQ(ids.size(), 3u);
    for (int r = 0; r < 3; ++r)
      EXPECT_EQ(ids[size_t(r)], std::max_element(got.begin() + r * vocab, got.begin() + (r + 1) * vocab) - (got.begin() + r * vocab));
  }
  const CostLedger& c = graphs.costs();
  EXPECT_GT(c[KernelKind::Gemv].bytes, 0);
  EXPECT_GT(c[KernelKind::Attention].flops, 0);
}

// Greedy generations of several prompts through the engine on the CPU and on the GPU.
std::vector<std::vector<int32_t>> engine_greedy(const Model& model, const Tokenizer& tokenizer, Device device,
                                                const std::vector<std::vector<int32_t>>& prompts, int32_t max_tokens) {
  EngineConfig c;
  c.device = device;
  c.n_threads = 2;
  c.n_ctx = 512;
  c.max_num_seqs = 4;
  c.max_batched_tokens = 12;  // every step below the GEMM threshold: the CPU's arithmetic on the GPU
  Engine engine(model, tokenizer, c);
  std::vector<std::vector<int32_t>> out(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    RequestOptions r;
    r.prompt = prompts[i];
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    engine.submit(std::move(r), [&out, i](const TokenEvent& e) {
      if (e.has_token) out[i].push_back(e.sample.token);
    });
  }
  engine.run_until_idle();
  return out;
}

TEST(CudaForward, EngineGreedyOutputEqualsTheCpus) {
  RIDGE_REQUIRE_CUDA();
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  ridge::test::with_tiny_model_file(ridge::test::tiny_options(DType::Q8_0, 256, 4, 512, 512), "cuda_engine", [&](const std::string& path) {
    model = std::make_unique<Model>(load_model(path));
    tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_gguf(gguf::GgufFile::open(path)));
  });
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 4; ++i) prompts.push_back(random_tokens(3 + 5 * i, 50 + i, 500));
  EXPECT_EQ(engine_greedy(*model, *tokenizer, Device::Cuda, prompts, 16), engine_greedy(*model, *tokenizer, Device::Cpu, prompts, 16));
}

TEST(CudaForward, DefaultModelGreedyEqualsTheCpu) {
  RIDGE_REQUIRE_CUDA();
  const std::string path = models_dir() + "/" + kDefaultModelFile;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "the default model is not at " << path;
  const auto file = gguf::GgufFile::open(path);
  const Tokenizer tokenizer = Tokenizer::from_gguf(file);
  const Model model = load_model(path);
  std::vector<std::vector<int32_t>> prompts;
  for (const char* text : {"The capital of France is", "Once upon a time, there was a little robot who",
                           "def fibonacci(n):\n    "})
    prompts.push_back(tokenizer.encode(text, true, true));
  const auto cpu = engine_greedy(model, tokenizer, Device::Cpu, prompts, 32);
  const auto gpu = engine_greedy(model, tokenizer, Device::Cuda, prompts, 32);
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(gpu[i], cpu[i]) << "prompt " << i;
}

}  // namespace
}  // namespace ridge::cuda
