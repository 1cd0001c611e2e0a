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
  // Overrides for which 0 is a value (no shared expert, no query bottleneck, ...): unset when absent.
  std::optional<int64_t> n_expert, n_expert_used, n_ff_expert, n_shared_expert, n_ff_shared, n_layer_dense_lead;
  std::optional<int64_t> kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim;
  std::optional<int64_t> sliding_window, swa_pattern;
  std::string arch;
  bool tied = false, untied = false;
  std::string vocab_from;
};

DType parse_type(const std::string& name) {
  const auto type = dtype_from_name(name);
  if (!type) fail("unknown weight type '{}'", name);
  return *type;
}

ModelSpec base_spec(const SynthArgs& a) {
  if (!a.shape.empty()) {
    auto named = plan::named_model_spec(a.shape);
    if (!named) fail("no model shape named '{}' (ridge synth --list shows them)", a.shape);
    return *named;
  }
  if (!a.n_embd || !a.n_layer || !a.n_head || !a.n_ff || !a.n_vocab)
    fail("name a shape, or give --n-embd, --n-layer, --n-head, --n-ff and --n-vocab");
  ModelSpec s;
  s.arch = "llama";
  s.name = fmt::format("custom-{}x{}", a.n_layer, a.n_embd);
  s.n_ctx_train = 4096;
  return s;
}

// Experts, latent attention and sliding windows.
void override_extras(const SynthArgs& a, ModelSpec& s) {
  auto set = [](int64_t& field, const std::optional<int64_t>& value) {
    if (value) field = *value;
  };
  set(s.n_expert, a.n_expert);
  set(s.n_expert_used, a.n_expert_used);
  set(s.n_ff_expert, a.n_ff_expert);
  set(s.n_shared_expert, a.n_shared_expert);
  set(s.n_ff_shared, a.n_ff_shared);
  set(s.n_layer_dense_lead, a.n_layer_dense_lead);
  set(s.kv_lora_rank, a.kv_lora_rank);
  set(s.q_lora_rank, a.q_lora_rank);
  set(s.qk_rope_head_dim, a.qk_rope_head_dim);
  set(s.qk_nope_head_dim, a.qk_nope_head_dim);
  set(s.v_head_dim, a.v_head_dim);
  set(s.sliding_window, a.sliding_window);
  set(s.swa_pattern, a.swa_pattern);
}

// True when flags change a named shape, whose file then must not take the shape's own name.
bool changes_shape(const SynthArgs& a) {
  const bool sizes = a.n_embd || a.n_layer || a.n_head || a.n_head_kv || a.n_ff || a.n_vocab || a.head_dim ||
                     a.n_ctx || a.rope_theta != 0 || !a.arch.empty() || a.tied || a.untied;
  const bool extras = a.n_expert || a.n_expert_used || a.n_ff_expert || a.n_shared_expert || a.n_ff_shared ||
                      a.n_layer_dense_lead || a.kv_lora_rank || a.q_lora_rank || a.qk_rope_head_dim ||
                      a.qk_nope_head_dim || a.v_head_dim || a.sliding_window || a.swa_pattern;
  return sizes || extras;
}

ModelSpec build_spec(const SynthArgs& a) {
  ModelSpec s = base_spec(a);
  if (!a.shape.empty() && changes_shape(a)) s.name += "-custom";
  // A head size that is n_embd / n_head follows the new sizes; a shape's own (Qwen 3: 128) stays.
  const bool derived_head = s.head_dim == 0 || s.head_dim * s.n_head == s.n_embd;
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
  if (a.tied || a.untied) s.tied_embeddings = a.tied;
  if (a.n_head_kv) s.n_head_kv = a.n_head_kv;
  // Fewer query heads than the shape's KV heads: one KV head per query head.
  if (!s.n_head_kv || s.n_head_kv > s.n_head) s.n_head_kv = s.n_head;
  if (a.head_dim) {
    s.head_dim = a.head_dim;
  } else if (derived_head && (a.n_embd || a.n_head)) {
    s.head_dim = s.n_embd / s.n_head;
  }
  override_extras(a, s);
  synth::apply_arch_conventions(s);
  return s;
}

void list_shapes() {
  for (const auto& name : plan::named_model_names()) {
    const ModelSpec s = *plan::named_model_spec(name);
    std::string extra;
    if (s.is_moe()) extra += fmt::format(", {} experts ({} used, width {})", s.n_expert, s.n_expert_used, s.n_ff_expert);
    if (s.shared_ff() > 0) extra += fmt::format(", shared width {}", s.shared_ff());
    if (s.is_mla()) extra += fmt::format(", MLA latent {}", s.kv_lora_rank);
    if (s.sliding_window > 0) extra += fmt::format(", window {}", s.sliding_window);
    fmt::print("{:<18} {:<9} {:>3} layers, n_embd {}, heads {}/{}, vocab {}{}\n", name, s.arch, s.n_layer, s.n_embd,
               s.n_head, s.n_head_kv, s.n_vocab, extra);
  }
}

void run_synth(SynthArgs a) {
  if (a.list) return list_shapes();
  synth::SynthOptions o;
  if (!a.vocab_from.empty()) {
    o.vocab_from = a.vocab_from;
    a.n_vocab = synth::vocab_size_of(a.vocab_from);
  }
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
  cmd->add_option("shape", a->shape, "Named shape (smollm2-135m, qwen3-0.6b, qwen3-30b-a3b, deepseek-v2-lite, ...; --list)");
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
  cmd->add_option("--vocab-from", a->vocab_from,
                  "GGUF whose tokenizer and chat template the file takes (its token count sets --n-vocab)");
  cmd->add_option("--head-dim", a->head_dim, "Head size (default: the shape's own, or n_embd / n_head)");
  cmd->add_option("--n-ctx", a->n_ctx, "Training context length written to the file");
  cmd->add_option("--rope-theta", a->rope_theta, "RoPE base");
  cmd->add_option("--n-expert", a->n_expert, "Routed experts (0: dense)");
  cmd->add_option("--n-expert-used", a->n_expert_used, "Experts per token");
  cmd->add_option("--n-ff-expert", a->n_ff_expert, "Width of one expert");
  cmd->add_option("--n-shared-expert", a->n_shared_expert, "Shared experts every token uses");
  cmd->add_option("--n-ff-shared", a->n_ff_shared, "Width of the shared experts together (default: count x expert width)");
  cmd->add_option("--n-layer-dense-lead", a->n_layer_dense_lead, "Leading layers with a dense FFN (DeepSeek)");
  cmd->add_option("--kv-lora-rank", a->kv_lora_rank, "Latent attention: width of the KV latent");
  cmd->add_option("--q-lora-rank", a->q_lora_rank, "Latent attention: width of the query bottleneck (0: none)");
  cmd->add_option("--qk-rope-head-dim", a->qk_rope_head_dim, "Latent attention: rotated key dimensions per head");
  cmd->add_option("--qk-nope-head-dim", a->qk_nope_head_dim, "Latent attention: unrotated key dimensions per head");
  cmd->add_option("--v-head-dim", a->v_head_dim, "Latent attention: value dimensions per head");
  cmd->add_option("--sliding-window", a->sliding_window, "Positions a sliding-window layer sees (Gemma 3)");
  cmd->add_option("--swa-pattern", a->swa_pattern, "Every n-th layer is global, the others slide (0: all slide)");
  std::string archs;
  for (const auto& name : synth::synth_architectures()) archs += (archs.empty() ? "" : ", ") + name;
  cmd->add_option("--arch", a->arch, "Architecture: " + archs);
  // Two plain flags: CLI11 gives a std::optional<bool> flag a value even when neither is passed.
  CLI::Option* tied = cmd->add_flag("--tied", a->tied, "Output projection shares token_embd");
  cmd->add_flag("--untied", a->untied, "Output projection of its own")->excludes(tied);
  cmd->callback([a] { run_synth(*a); });
}

}  // namespace ridge::cli
