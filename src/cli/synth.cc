// ridge synth: write a GGUF of random weights for a named model shape (or one given by flags) in a
// chosen weight type, with a byte-level BPE tokenizer, so ridge and llama.cpp can both run it.
// Benchmarks use these files to measure shapes nobody has downloaded.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "core/error.h"
#include "model/model_store.h"
#include "model/synth/synth_model.h"
#include "plan/model_catalog.h"

namespace ridge::cli {
namespace {

struct SynthArgs {
  std::string shape;
  std::string type = "Q4_0";
  std::string embd_type, output_type;
  std::string output;
  uint64_t seed = 1;
  float stddev = 0.02f;
  bool force = false;
  bool list = false;
  // Overrides of the named shape (or the whole shape when none is named); 0 = unset.
  int64_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_vocab = 0, head_dim = 0, n_ctx = 0;
  float rope_theta = 0;
  std::string arch;
  std::optional<bool> tied;
};

DType parse_type(const std::string& name) {
  const auto type = dtype_from_name(name);
  if (!type) fail("unknown weight type '{}'", name);
  return *type;
}

ModelSpec build_spec(const SynthArgs& a) {
  ModelSpec s;
  if (!a.shape.empty()) {
    auto named = plan::named_model_spec(a.shape);
    if (!named) fail("no model shape named '{}' (ridge synth --list shows them)", a.shape);
    s = *named;
  } else {
    if (!a.n_embd || !a.n_layer || !a.n_head || !a.n_ff || !a.n_vocab)
      fail("name a shape, or give --n-embd, --n-layer, --n-head, --n-ff and --n-vocab");
    s.arch = "llama";
    s.name = fmt::format("custom-{}x{}", a.n_layer, a.n_embd);
    s.n_ctx_train = 4096;
  }
  auto set = [](auto& field, auto value) {
    if (value) field = value;
  };
  set(s.n_embd, a.n_embd);
  set(s.n_layer, a.n_layer);
  set(s.n_head, a.n_head);
  set(s.n_ff, a.n_ff);
  set(s.n_vocab, a.n_vocab);
  set(s.n_ctx_train, a.n_ctx);
  set(s.rope_theta, a.rope_theta);
  if (!a.arch.empty()) s.arch = a.arch;
  if (a.tied) s.tied_embeddings = *a.tied;
  if (a.n_head_kv) s.n_head_kv = a.n_head_kv;
  if (!s.n_head_kv) s.n_head_kv = s.n_head;
  if (a.head_dim || a.n_embd || a.n_head) s.head_dim = a.head_dim ? a.head_dim : s.n_embd / s.n_head;
  s.rope_dim = s.head_dim;
  s.qkv_bias = s.arch == "qwen2";
  if (s.arch == "qwen2") s.rope_style = RopeStyle::NeoX;
  return s;
}

void run_synth(const SynthArgs& a) {
  if (a.list) {
    for (const auto& name : plan::named_model_names()) std::printf("%s\n", name.c_str());
    return;
  }
  synth::SynthOptions o;
  o.spec = build_spec(a);
  o.type = parse_type(a.type);
  if (!a.embd_type.empty()) o.embd_type = parse_type(a.embd_type);
  if (!a.output_type.empty()) o.output_type = parse_type(a.output_type);
  o.seed = a.seed;
  o.stddev = a.stddev;
  const std::string path = !a.output.empty() ? a.output
                                             : fmt::format("{}/synth/{}.{}.gguf", ridge_home(), o.spec.name, dtype_name(o.type));
  if (std::filesystem::exists(path) && !a.force) fail("{} exists (--force overwrites it)", path);
  synth::write_synth_model(o, path);
  std::printf("%s\n", path.c_str());
}

}  // namespace

void add_synth_command(CLI::App& app) {
  auto a = std::make_shared<SynthArgs>();
  CLI::App* cmd = app.add_subcommand("synth", "Write a GGUF of random weights for a model shape");
  cmd->add_option("shape", a->shape, "Named shape (smollm2-135m, tinyllama-1.1b, llama-3.2-1b, llama-3-8b, ...)");
  cmd->add_option("-t,--type", a->type, "Weight type of the layers: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K")
      ->capture_default_str();
  cmd->add_option("--embd-type", a->embd_type, "Type of token_embd (default: the float type, else Q8_0)");
  cmd->add_option("--output-type", a->output_type, "Type of output.weight (default: the float type or Q8_0, else Q6_K)");
  cmd->add_option("-o,--output", a->output, "Output file (default $RIDGE_HOME/synth/SHAPE.TYPE.gguf)");
  cmd->add_option("--seed", a->seed, "Random seed")->capture_default_str();
  cmd->add_option("--std", a->stddev, "Standard deviation of the weights")->capture_default_str();
  cmd->add_flag("-f,--force", a->force, "Overwrite an existing file");
  cmd->add_flag("--list", a->list, "List the named shapes");
  cmd->add_option("--n-embd", a->n_embd, "Hidden size");
  cmd->add_option("--n-layer", a->n_layer, "Layers");
  cmd->add_option("--n-head", a->n_head, "Query heads");
  cmd->add_option("--n-head-kv", a->n_head_kv, "Key/value heads (default: --n-head)");
  cmd->add_option("--n-ff", a->n_ff, "Feed-forward size");
  cmd->add_option("--n-vocab", a->n_vocab, "Vocabulary size (at least 258)");
  cmd->add_option("--head-dim", a->head_dim, "Head size (default n_embd / n_head)");
  cmd->add_option("--n-ctx", a->n_ctx, "Training context length written to the file");
  cmd->add_option("--rope-theta", a->rope_theta, "RoPE base");
  cmd->add_option("--arch", a->arch, "Architecture: llama, mistral, qwen2");
  cmd->add_flag("--tied{true},--untied{false}", a->tied, "Output projection shares token_embd");
  cmd->callback([a] { run_synth(*a); });
}

}  // namespace ridge::cli
