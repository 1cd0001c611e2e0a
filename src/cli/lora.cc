// ridge lora merge BASE ADAPTER OUT --type T: the base model with a LoRA adapter folded into its
// weights (W + scale * B * A, in f32), written as a GGUF of file type T by the quantizer, for users
// who want one file instead of an adapter at run time.
#include <cstdio>
#include <regex>

#include "cli/commands.h"
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/load_gguf.h"
#include "model/lora/lora_adapter.h"
#include "model/model_store.h"
#include "quant/file_type.h"
#include "quant/quantize_model.h"

namespace ridge::cli {
namespace {

struct MergeArgs {
  std::string base, adapter, output, type;
  float scale = 1.0f;
  int threads = 0;
  bool quiet = false;
};

// "blk.7.attn_q.weight" -> (7, Q).
std::optional<std::pair<int64_t, lora::Target>> target_of(const std::string& tensor) {
  static const std::regex name(R"(blk\.(\d+)\.(attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down)\.weight)");
  std::smatch m;
  if (!std::regex_match(tensor, m, name)) return std::nullopt;
  static const std::map<std::string, lora::Target> kinds = {
      {"attn_q", lora::Target::kQ},      {"attn_k", lora::Target::kK},   {"attn_v", lora::Target::kV},
      {"attn_output", lora::Target::kO}, {"ffn_gate", lora::Target::kGate}, {"ffn_up", lora::Target::kUp},
      {"ffn_down", lora::Target::kDown}};
  return std::pair{std::stoll(m[1].str()), kinds.at(m[2].str())};
}

void merge(const MergeArgs& args) {
  const std::string base = resolve_model_path(args.base);
  const ModelSpec spec = model_spec_from_gguf(gguf::GgufFile::open(base));
  const auto adapter = lora::load_adapter(args.adapter, spec, {args.scale, /*f16=*/false});
  const auto file_type = quant::file_type_from_name(args.type);
  if (!file_type) fail("--type: unknown file type '{}' (F32, F16, BF16, Q8_0, Q4_K_M, ... as ridge quantize takes)", args.type);

  quant::RowTransform transform;
  transform.applies = [&](const std::string& tensor) {
    const auto t = target_of(tensor);
    return t && adapter->matrix(t->first, t->second);
  };
  transform.apply = [&](const std::string& tensor, int64_t row, float* values, int64_t n) {
    const auto t = target_of(tensor);
    const lora::LoraMatrix& m = *adapter->matrix(t->first, t->second);
    if (n != m.d_in || row >= m.d_out) fail("tensor '{}' does not have the adapter's shape", tensor);
    // values[i] += scale * sum_j B[row][j] * A[j][i]
    for (int64_t j = 0; j < m.rank; ++j) {
      const float b = m.scale * m.b_t[size_t(j * m.d_out + row)];
      for (int64_t i = 0; i < n; ++i) values[i] += b * m.a_t[size_t(i * m.rank + j)];
    }
  };
  quant::QuantizeOptions options;
  options.input = base;
  options.output = args.output;
  options.rules.file_type = *file_type;
  options.threads = args.threads;
  options.progress = !args.quiet;
  options.transform = &transform;
  const quant::QuantizeReport report = quant::quantize_gguf(options);
  std::fprintf(stderr, "merged %lld adapter matrices (rank %lld) into %s: %.1f MiB in %.1f s\n", (long long)adapter->n_matrices(),
               (long long)adapter->rank, args.output.c_str(), double(report.bytes_out) / double(1 << 20), report.seconds);
}

}  // namespace

void add_lora_command(CLI::App& app) {
  auto* lora = app.add_subcommand("lora", "LoRA adapters: merge one into its base model");
  lora->require_subcommand(1);
  auto* cmd = lora->add_subcommand("merge", "Write BASE with ADAPTER folded into its weights as one GGUF of --type");
  auto a = std::make_shared<MergeArgs>();
  cmd->add_option("base", a->base, "the base model (GGUF, or a fetched model's name)")->required();
  cmd->add_option("adapter", a->adapter, "a PEFT directory or a GGUF LoRA file")->required();
  cmd->add_option("output", a->output, "the merged GGUF to write")->required();
  cmd->add_option("--type", a->type, "file type of the result: F16 keeps the merge exact; Q8_0, Q4_K_M, ... requantize")
      ->required();
  cmd->add_option("--lora-scale", a->scale, "the adapter's scale, times its alpha / rank")->capture_default_str();
  cmd->add_option("-t,--threads", a->threads, "threads (0: one per core)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  cmd->callback([a] { merge(*a); });
}

}  // namespace ridge::cli
