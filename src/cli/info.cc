// ridge info MODEL: what a model file holds. Architecture and key hyperparameters, a table of
// tensors (shape, type, size), bytes by type, and totals; --json for machines, --metadata for
// every key. Shapes are in GGUF order: the first extent is the contiguous row.
#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"

namespace ridge::cli {
namespace {

using nlohmann::json;

struct InfoArgs {
  std::string model = "default";
  bool json = false;
  bool metadata = false;
};

// The hyperparameters people look for first, by ridge's name and the GGUF key under `{arch}.`.
struct Hyperparameter {
  const char* label;
  const char* key;
};
constexpr Hyperparameter kHyperparameters[] = {
    {"n_layer", "block_count"},
    {"n_embd", "embedding_length"},
    {"n_head", "attention.head_count"},
    {"n_head_kv", "attention.head_count_kv"},
    {"n_ff", "feed_forward_length"},
    {"n_vocab", "vocab_size"},
    {"n_ctx_train", "context_length"},
    {"head_dim", "attention.key_length"},
    {"rope_dim", "rope.dimension_count"},
    {"rope_theta", "rope.freq_base"},
    {"rope_scaling", "rope.scaling.type"},
    {"rope_scale", "rope.scaling.factor"},
    {"rms_eps", "attention.layer_norm_rms_epsilon"},
    {"n_expert", "expert_count"},
    {"n_expert_used", "expert_used_count"},
};

json to_json(const gguf::Value& v) {
  return std::visit(
      [&v](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<gguf::Value>>) {
          json items = json::array();
          for (const auto& item : x) items.push_back(to_json(item));
          return items;
        } else if constexpr (std::is_same_v<T, double>) {
          // An f32 is held as a double; go through its shortest decimal so 1e-5f prints as 1e-05.
          return v.type == gguf::ValueType::F32 ? std::stod(fmt::format("{}", float(x))) : x;
        } else {
          return x;
        }
      },
      v.data);
}

struct TypeTotal {
  int64_t n_tensors = 0;
  int64_t n_params = 0;
  int64_t n_bytes = 0;
};

struct Summary {
  std::string arch;
  std::vector<std::pair<std::string, json>> hyperparameters;  // label -> value, present keys only
  std::map<DType, TypeTotal> by_type;
  TypeTotal total;
};

Summary summarize(const gguf::GgufFile& file) {
  Summary s;
  s.arch = file.get_string("general.architecture").value_or("");
  for (const auto& h : kHyperparameters) {
    if (const auto* v = file.find(s.arch + "." + h.key)) s.hyperparameters.emplace_back(h.label, to_json(*v));
  }
  const bool has_vocab = std::any_of(s.hyperparameters.begin(), s.hyperparameters.end(), [](const auto& h) { return h.first == "n_vocab"; });
  if (const auto* tokens = file.find("tokenizer.ggml.tokens"); tokens && !has_vocab && tokens->type == gguf::ValueType::ARRAY)
    s.hyperparameters.emplace_back("n_vocab", tokens->as_array().size());
  for (const auto& t : file.tensors()) {
    for (TypeTotal* total : {&s.by_type[t.type], &s.total}) {
      total->n_tensors += 1;
      total->n_params += t.n_elements;
      total->n_bytes += t.n_bytes;
    }
  }
  return s;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string human_count(int64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f}B", double(n) / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.2f}M", double(n) / 1e6);
  if (n >= 1'000) return fmt::format("{:.1f}K", double(n) / 1e3);
  return fmt::format("{}", n);
}

std::string human_bytes(uint64_t n) {
  if (n >= (uint64_t(1) << 30)) return fmt::format("{:.2f} GiB", double(n) / double(uint64_t(1) << 30));
  if (n >= (uint64_t(1) << 20)) return fmt::format("{:.1f} MiB", double(n) / double(uint64_t(1) << 20));
  if (n >= (uint64_t(1) << 10)) return fmt::format("{:.1f} KiB", double(n) / 1024.0);
  return fmt::format("{} B", n);
}

// Metadata strings are not guaranteed UTF-8: replace bad bytes rather than fail.
std::string safe_dump(const json& value, int indent = -1) { return value.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string display(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) return fmt::format("[{} values, first {}]", value.size(), value.empty() ? "-" : safe_dump(value[0]));
  return safe_dump(value);
}

void print_text(const std::string& path, const gguf::GgufFile& file, const Summary& s, bool with_metadata) {
  std::printf("file          %s\n", path.c_str());
  std::printf("format        GGUF v%u, %s, %zu metadata keys, %zu tensors, data at byte %llu (alignment %llu)\n", file.version(),
              human_bytes(file.file_size()).c_str(), file.metadata().size(), file.tensors().size(),
              (unsigned long long)file.data_offset(), (unsigned long long)file.alignment());
  if (file.shards().size() > 1) std::printf("split         %zu files, sizes and tensors of all counted\n", file.shards().size());
  std::printf("architecture  %s\n", s.arch.empty() ? "(not set)" : s.arch.c_str());
  if (const auto* name = file.find("general.name")) std::printf("name          %s\n", display(to_json(*name)).c_str());
  if (!s.hyperparameters.empty()) {
    std::printf("\nhyperparameters\n");
    for (const auto& [label, value] : s.hyperparameters) std::printf("  %-14s %s\n", label.c_str(), display(value).c_str());
  }
  if (with_metadata) {
    std::printf("\nmetadata\n");
    for (const auto& [key, value] : file.metadata())
      std::printf("  %-44s %-7s %s\n", key.c_str(), std::string(gguf::value_type_name(value.type)).c_str(),
                  value.to_display_string().c_str());
  }
  std::printf("\ntensors (shape in GGUF order, row first)\n  %-36s %-5s %-22s %12s %12s\n", "name", "type", "shape", "params", "bytes");
  for (const auto& t : file.tensors())
    std::printf("  %-36s %-5s %-22s %12lld %12lld\n", t.name.c_str(), std::string(dtype_name(t.type)).c_str(),
                shape_string(t.shape).c_str(), (long long)t.n_elements, (long long)t.n_bytes);
  std::printf("\nbytes by type\n");
  for (const auto& [type, total] : s.by_type) {
    const double share = s.total.n_bytes > 0 ? 100.0 * double(total.n_bytes) / double(s.total.n_bytes) : 0.0;
    std::printf("  %-5s %5lld tensors %10s params %12s %6.1f%%\n", std::string(dtype_name(type)).c_str(), (long long)total.n_tensors,
                human_count(total.n_params).c_str(), human_bytes(uint64_t(total.n_bytes)).c_str(), share);
  }
  std::printf("\ntotal         %lld parameters (%s), %lld bytes of tensors (%s), %.2f bits per parameter\n",
              (long long)s.total.n_params, human_count(s.total.n_params).c_str(), (long long)s.total.n_bytes,
              human_bytes(uint64_t(s.total.n_bytes)).c_str(),
              s.total.n_params > 0 ? 8.0 * double(s.total.n_bytes) / double(s.total.n_params) : 0.0);
}

void print_json(const std::string& path, const gguf::GgufFile& file, const Summary& s, bool with_metadata) {
  json out = {{"path", path},
              {"version", file.version()},
              {"file_size", file.file_size()},
              {"n_shards", file.shards().size()},
              {"alignment", file.alignment()},
              {"data_offset", file.data_offset()},
              {"n_metadata", file.metadata().size()},
              {"architecture", s.arch}};
  if (const auto* name = file.find("general.name")) out["name"] = to_json(*name);
  out["hyperparameters"] = json::object();
  for (const auto& [label, value] : s.hyperparameters) out["hyperparameters"][label] = value;
  out["tensors"] = json::array();
  for (const auto& t : file.tensors())
    out["tensors"].push_back({{"name", t.name}, {"type", dtype_name(t.type)}, {"shape", t.shape}, {"n_params", t.n_elements},
                              {"n_bytes", t.n_bytes}, {"offset", t.offset}});
  out["bytes_by_type"] = json::object();
  for (const auto& [type, total] : s.by_type)
    out["bytes_by_type"][std::string(dtype_name(type))] = {
        {"n_tensors", total.n_tensors}, {"n_params", total.n_params}, {"n_bytes", total.n_bytes}};
  out["total"] = {{"n_tensors", s.total.n_tensors}, {"n_params", s.total.n_params}, {"n_bytes", s.total.n_bytes}};
  if (with_metadata) {
    out["metadata"] = json::object();
    for (const auto& [key, value] : file.metadata()) out["metadata"][key] = to_json(value);
  }
  std::printf("%s\n", safe_dump(out, 2).c_str());
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print a model file's architecture, hyperparameters, tensors and sizes");
  auto args = std::make_shared<InfoArgs>();
  cmd->add_option("model", args->model, "GGUF file, or 'default'");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--metadata", args->metadata, "also list every metadata key and value");
  cmd->callback([args] {
    const std::string path = resolve_model_path(args->model);
    const auto file = gguf::GgufFile::open(path);
    const Summary summary = summarize(file);
    if (args->json)
      print_json(path, file, summary, args->metadata);
    else
      print_text(path, file, summary, args->metadata);
  });
}

}  // namespace ridge::cli
