#include "serve/lora_adapters.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "models/model_source.h"
#include "serve/api_error.h"

namespace ridge {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The base engine's backend with one adapter attached to every request it submits.
class AdapterBackend final : public CompletionBackend {
 public:
  AdapterBackend(CompletionBackend& base, std::shared_ptr<const lora::LoraAdapter> adapter, std::string name)
      : base_(base), adapter_(std::move(adapter)), name_(std::move(name)) {}
  RequestId submit(RequestOptions options, EventCallback on_event) override {
    options.adapter = adapter_;
    return base_.submit(std::move(options), std::move(on_event));
  }
  void cancel(RequestId id) override { base_.cancel(id); }
  EngineStats stats() const override { return base_.stats(); }
  std::vector<int32_t> tokenize(std::string_view text, bool add_special) const override { return base_.tokenize(text, add_special); }
  std::string apply_chat_template(std::span<const ChatMessage> m, const ChatRenderOptions& o) const override {
    return base_.apply_chat_template(m, o);
  }
  const chat::ToolFormat* tool_format() const override { return base_.tool_format(); }
  std::string apply_tool_template(std::span<const ChatMessage> m, std::span<const chat::Tool> t, const ChatRenderOptions& o) const override {
    return base_.apply_tool_template(m, t, o);
  }
  const chat::ReasoningTags* reasoning_tags() const override { return base_.reasoning_tags(); }
  std::optional<ThinkingGate> thinking_gate() const override { return base_.thinking_gate(); }
  std::string token_piece(int32_t token) const override { return base_.token_piece(token); }
  int32_t n_vocab() const override { return base_.n_vocab(); }
  int64_t n_ctx() const override { return base_.n_ctx(); }
  std::string model_id() const override { return name_; }
  std::string unavailable() const override { return base_.unavailable(); }
  std::shared_ptr<const grammar::CompiledGrammar> compile_grammar(const grammar::GrammarSpec& spec) override {
    return base_.compile_grammar(spec);
  }

 private:
  CompletionBackend& base_;
  std::shared_ptr<const lora::LoraAdapter> adapter_;
  std::string name_;
};

}  // namespace

struct LoraAdapters::Entry {
  std::string name;
  std::shared_ptr<const lora::LoraAdapter> adapter;
  std::unique_ptr<AdapterBackend> backend;
  ServeMetrics metrics;
  Clock::time_point last_used = Clock::now();
  double load_seconds = 0;
};

LoraAdapters::LoraAdapters(CompletionBackend& base, const ModelSpec& spec, LoraServeConfig config, const loadgen::Slo& slo)
    : base_(base), spec_(spec), config_(std::move(config)), slo_(slo) {
  if (config_.max_loras < 1) fail("--max-loras must be at least 1");
}

LoraAdapters::~LoraAdapters() = default;

std::shared_ptr<LoraAdapters::Entry> LoraAdapters::make(const std::string& name, const std::string& path) {
  if (!models::is_valid_model_name(name)) fail("'{}' is not a usable adapter name (no '/', '..', quotes or spaces)", name);
  const auto start = Clock::now();
  auto e = std::make_shared<Entry>();
  e->name = name;
  e->adapter = lora::load_adapter(path, spec_);
  e->backend = std::make_unique<AdapterBackend>(base_, e->adapter, name);
  e->metrics.set_slo(slo_);
  e->load_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log_info("lora: {} (rank {}, {} matrices, {:.1f} MiB) loaded in {:.3f} s", name, e->adapter->rank, e->adapter->n_matrices(),
           double(e->adapter->bytes()) / double(1 << 20), e->load_seconds);
  return e;
}

void LoraAdapters::insert(std::shared_ptr<Entry> e) {
  while (int32_t(entries_.size()) >= config_.max_loras) {
    // The least recently used adapter no request holds (the map holds one reference).
    std::map<std::string, std::shared_ptr<Entry>>::iterator victim = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->second.use_count() == 1 && (victim == entries_.end() || it->second->last_used < victim->second->last_used)) victim = it;
    if (victim == entries_.end())
      throw ApiError(503, fmt::format("all {} adapters (--max-loras) have requests running; try again", config_.max_loras), "lora_name");
    log_info("lora: unloading {} (least recently used) to make room for {}", victim->first, e->name);
    entries_.erase(victim);
    ++evictions_;
    ++unloads_;
  }
  entries_[e->name] = std::move(e);
  ++loads_;
}

void LoraAdapters::add(const std::string& name, const std::string& path) {
  auto e = make(name, path);
  std::lock_guard lock(mutex_);
  if (entries_.count(name)) fail("two adapters are named '{}'", name);
  if (int32_t(entries_.size()) >= config_.max_loras) fail("more --lora adapters than --max-loras {}", config_.max_loras);
  insert(std::move(e));
}

std::string LoraAdapters::checked_path(const std::string& path) const {
  if (config_.dir.empty())
    throw ApiError(404, "loading LoRA adapters at run time is off: start ridge serve with --lora-dir DIR to allow it");
  if (path.empty()) throw ApiError(400, "'lora_path' is empty", "lora_path");
  if (path.find("..") != std::string::npos) throw ApiError(400, "'lora_path' may not contain '..'", "lora_path");
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(config_.dir, ec);
  const fs::path candidate = fs::path(path).is_absolute() ? fs::path(path) : fs::path(config_.dir) / path;
  const fs::path real = fs::weakly_canonical(candidate, ec);
  if (ec) throw ApiError(400, "'lora_path' cannot be resolved", "lora_path");
  const auto [r, c] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  if (r != root.end()) throw ApiError(400, "'lora_path' must name an adapter inside the server's --lora-dir", "lora_path");
  return real.string();
}

json LoraAdapters::load(const std::string& name, const std::string& path) {
  const std::string real = checked_path(path);
  if (!models::is_valid_model_name(name)) throw ApiError(400, "'lora_name' is not a usable name (no '/', '..', quotes or spaces)", "lora_name");
  {
    std::lock_guard lock(mutex_);
    if (entries_.count(name)) throw ApiError(400, fmt::format("an adapter named '{}' is loaded already", name), "lora_name");
  }
  std::shared_ptr<Entry> e;
  try {
    e = make(name, real);
  } catch (const Error& err) {
    // The operator's log has the path; the client gets the reason without it.
    std::string message = err.what();
    for (size_t at; (at = message.find(real)) != std::string::npos;) message.replace(at, real.size(), "the adapter");
    throw ApiError(400, message, "lora_path");
  }
  const double seconds = e->load_seconds;
  const int64_t rank = e->adapter->rank;
  std::lock_guard lock(mutex_);
  if (entries_.count(name)) throw ApiError(400, fmt::format("an adapter named '{}' is loaded already", name), "lora_name");
  insert(std::move(e));
  return {{"success", true}, {"lora_name", name}, {"rank", rank}, {"load_seconds", seconds}};
}

json LoraAdapters::unload(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(name);
  if (it == entries_.end()) throw ApiError(404, fmt::format("no adapter named '{}' is loaded", name), "lora_name", "model_not_found");
  const int64_t running = it->second.use_count() - 1;
  entries_.erase(it);  // requests holding it finish with it
  ++unloads_;
  return {{"success", true}, {"lora_name", name}, {"requests_running", running}};
}

std::shared_ptr<LoraAdapters::Entry> LoraAdapters::acquire(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return nullptr;
  it->second->last_used = Clock::now();
  return it->second;
}

CompletionBackend& LoraAdapters::backend(Entry& e) { return *e.backend; }
ServeMetrics& LoraAdapters::metrics(Entry& e) { return e.metrics; }

bool LoraAdapters::empty() const {
  std::lock_guard lock(mutex_);
  return entries_.empty();
}

json LoraAdapters::models(int64_t created, const std::string& parent) const {
  std::lock_guard lock(mutex_);
  json rows = json::array();
  for (const auto& [name, e] : entries_)
    rows.push_back({{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "ridge"}, {"parent", parent},
                    {"root", parent}, {"max_model_len", base_.n_ctx()},
                    {"lora", {{"rank", e->adapter->rank}, {"alpha", e->adapter->alpha}, {"format", e->adapter->source_format},
                              {"matrices", e->adapter->n_matrices()}, {"bytes", e->adapter->bytes()}}}});
  return rows;
}

std::vector<std::pair<std::string, std::string>> LoraAdapters::prometheus() {
  std::vector<std::shared_ptr<Entry>> all;
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, e] : entries_) all.push_back(e);
  }
  std::vector<std::pair<std::string, std::string>> out;
  const EngineStats none{};
  for (auto& e : all) out.emplace_back(e->name, e->metrics.prometheus(none));
  return out;
}

std::string LoraAdapters::counters() const {
  std::lock_guard lock(mutex_);
  return fmt::format(
      "# HELP ridge:lora_adapters_loaded LoRA adapters held now.\n# TYPE ridge:lora_adapters_loaded gauge\nridge:lora_adapters_loaded {}\n"
      "# HELP ridge:lora_loads_total LoRA adapters loaded.\n# TYPE ridge:lora_loads_total counter\nridge:lora_loads_total {}\n"
      "# HELP ridge:lora_unloads_total LoRA adapters unloaded.\n# TYPE ridge:lora_unloads_total counter\nridge:lora_unloads_total {}\n"
      "# HELP ridge:lora_evictions_total LoRA adapters unloaded to make room (--max-loras).\n"
      "# TYPE ridge:lora_evictions_total counter\nridge:lora_evictions_total {}\n",
      entries_.size(), loads_, unloads_, evictions_);
}

}  // namespace ridge
