// ridge logits: next-token logits at every position of a token sequence (for conformance
// checks against other engines and for perplexity-style evaluation).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "backend/paged_forward.h"
#include "cli/commands.h"
#include "cli/parallel_options.h"
#include "dist/lockstep.h"
#include "dist/world.h"
#include "core/error.h"
#include "model/lora/lora_adapter.h"
#include "model/forward.h"
#include "model/model_loader.h"
#include "model/model_store.h"

namespace ridge::cli {
namespace {

std::vector<int32_t> parse_ids(const std::string& csv) {
  std::vector<int32_t> ids;
  std::stringstream in(csv);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      ids.push_back(int32_t(std::stol(item)));
    } catch (const std::exception&) {
      fail("'{}' is not a token id", item);
    }
  }
  return ids;
}

struct LogitsOptions {
  std::string model = "default";
  std::string tokens;
  std::string out;
  int64_t batch = 0;
  std::string kv_dtype = "f16";
  std::string numerics = "native";
  std::string lora;  // a PEFT directory or GGUF LoRA file
  float lora_scale = 1.0f;
  std::string lora_dtype = "f16";
  ParallelCliOptions parallel;
};

// Split across ranks: the same passes through the lockstep forward of rank 0 (dist/lockstep.h).
void run_logits_split(const LogitsOptions& o, const std::vector<int32_t>& ids, dist::Parallel& parallel) {
  const auto shard = shard_request(&parallel, o.parallel);
  const Model model = load_model(resolve_model_path(o.model), shard.get());
  if (!parallel.is_driver()) return dist::run_worker(model, default_threads(0), parallel);
  const auto kv_dtype = parse_kv_dtype(o.kv_dtype);
  if (!kv_dtype) fail("unknown --kv-dtype '{}' (f16, bf16, fp8, int8)", o.kv_dtype);
  const auto n = int64_t(ids.size());
  PagedForwardConfig c;
  c.n_threads = default_threads(0);
  c.kv_dtype = *kv_dtype;
  c.block_size = dist::default_kv_block_size(parallel.sizes.kvp);
  c.n_blocks = int32_t((n + c.block_size - 1) / c.block_size);
  c.n_ctx = n;
  c.parallel = &parallel;
  const auto forward = make_paged_forward(model, c);
  std::vector<BlockId> blocks(size_t(c.n_blocks));
  for (size_t b = 0; b < blocks.size(); ++b) blocks[b] = BlockId(b);
  std::ofstream out(o.out, std::ios::binary);
  if (!out) fail("cannot write '{}'", o.out);
  const int64_t batch = o.batch > 0 ? o.batch : n;
  std::vector<float> logits;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t count = std::min(n - start, batch);
    const SequenceRun run{count, start, blocks, LogitsWanted::All, /*prompt_end=*/n};  // a text read as a prompt
    forward->forward(TokenBatch{std::span(ids).subspan(size_t(start), size_t(count)), std::span(&run, 1)}, logits);
    out.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
  }
  std::printf("wrote %lld x %lld logits to %s (%d ranks)\n", (long long)n, (long long)model.spec.n_vocab, o.out.c_str(),
              parallel.sizes.world());
}

void run_logits(const LogitsOptions& o) {
  const auto ids = parse_ids(o.tokens);
  if (ids.empty()) fail("--tokens is empty");
  if (dist::Parallel* parallel = parallel_for(o.parallel)) {
    if (!o.lora.empty()) fail("--lora: LoRA adapters are not supported on a model split across ranks yet");
    return run_logits_split(o, ids, *parallel);
  }
  const Model model = load_model(resolve_model_path(o.model));
  ModelForward forward(model);
  std::shared_ptr<const lora::LoraAdapter> adapter;
  if (!o.lora.empty()) {
    adapter = lora::load_adapter(o.lora, model.spec, {o.lora_scale, o.lora_dtype == "f16"});
    forward.set_adapter(adapter.get());
  }
  const auto numerics = parse_numerics(o.numerics);
  if (!numerics) fail("unknown --numerics '{}' (native, ggml)", o.numerics);
  forward.set_numerics(*numerics);
  const auto kv_dtype = parse_kv_dtype(o.kv_dtype);
  if (!kv_dtype) fail("unknown --kv-dtype '{}' (f16, bf16, fp8, int8)", o.kv_dtype);
  KvCache cache = forward.make_cache(int64_t(ids.size()), *kv_dtype);
  const int64_t n_vocab = model.spec.n_vocab;
  const int64_t batch = o.batch > 0 ? o.batch : int64_t(ids.size());
  std::ofstream out(o.out, std::ios::binary);
  if (!out) fail("cannot write '{}'", o.out);
  std::vector<float> logits;
  for (size_t start = 0; start < ids.size(); start += size_t(batch)) {
    const size_t count = std::min(ids.size() - start, size_t(batch));
    forward.forward(std::span(ids).subspan(start, count), cache, /*all_logits=*/true, logits, /*prompt=*/true);
    out.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(count * size_t(n_vocab) * sizeof(float)));
  }
  std::printf("wrote %zu x %lld logits to %s\n", ids.size(), (long long)n_vocab, o.out.c_str());
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Write the logits at every position of a token sequence (f32, row-major)");
  auto o = std::make_shared<LogitsOptions>();
  cmd->add_option("-m,--model", o->model, "GGUF file, a Hugging Face checkpoint directory, or 'default'");
  cmd->add_option("--tokens", o->tokens, "comma-separated token ids")->required();
  cmd->add_option("-o,--out", o->out, "output file: (n_tokens, n_vocab) little-endian f32")->required();
  cmd->add_option("--batch", o->batch, "tokens per forward pass (default: all at once)");
  cmd->add_option("--kv-dtype", o->kv_dtype, "KV cache type: f16, bf16, fp8, int8 (to measure their accuracy cost)")->capture_default_str();
  cmd->add_option("--numerics", o->numerics, "native, or ggml: llama.cpp's CPU arithmetic bit for bit")->capture_default_str();
  cmd->add_option("--lora", o->lora, "a LoRA adapter applied to the model (a PEFT directory or a GGUF LoRA file)");
  cmd->add_option("--lora-scale", o->lora_scale, "the adapter's scale, times its alpha / rank")->capture_default_str();
  cmd->add_option("--lora-dtype", o->lora_dtype, "the adapter's A and B in memory: f16 (half the bytes) or f32 (as read)")
      ->check(CLI::IsMember({"f16", "f32"}))
      ->capture_default_str();
  add_parallel_options(cmd, o->parallel);
  cmd->callback([o] { run_logits(*o); });
}

}  // namespace ridge::cli
