#include "serve/lora_adapters.h"

#include <algorithm>
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
  std::shared_ptr<ServeMetrics> metrics;
  double load_seconds = 0;
};

LoraAdapters::LoraAdapters(CompletionBackend& base, const ModelSpec& spec, LoraServeConfig config, const loadgen::Slo& slo)
    : base_(base), spec_(spec), config_(std::move(config)), slo_(slo) {
  if (config_.max_loras < 1) fail("--max-loras must be at least 1");
}

LoraAdapters::~LoraAdapters() = default;

std::shared_ptr<LoraAdapters::Entry> LoraAdapters::make(const std::string& name, const std::string& path) {
  const auto start = Clock::now();
  auto e = std::make_shared<Entry>();
  e->name = name;
  e->adapter = lora::load_adapter(path, spec_, {1.0f, config_.f16});
  e->backend = std::make_unique<AdapterBackend>(base_, e->adapter, name);
  e->load_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log_info("lora: {} (rank {}, {} matrices, {:.1f} MiB) read in {:.3f} s", name, e->adapter->rank, e->adapter->n_matrices(),
           double(e->adapter->bytes()) / double(1 << 20), e->load_seconds);
  return e;
}

LoraAdapters::Slot& LoraAdapters::new_slot(const std::string& name, const std::string& path) {
  Slot& slot = slots_[name];
  slot.path = path;
  slot.metrics = std::make_shared<ServeMetrics>();
  slot.metrics->set_slo(slo_);
  slot.last_used = Clock::now();
  return slot;
}

void LoraAdapters::swap_out_idle() {
  for (;;) {
    int32_t in_memory = 0;
    Slot* victim = nullptr;
    for (auto& [name, slot] : slots_) {
      if (!slot.entry) continue;
      ++in_memory;
      // Idle: only the slot holds it.
      if (slot.entry.use_count() == 1 && (!victim || slot.last_used < victim->last_used)) victim = &slot;
    }
    if (in_memory <= config_.max_loras || !victim) return;
    log_info("lora: swapping out {} (least recently used; --max-loras {})", victim->entry->name, config_.max_loras);
    victim->entry.reset();
    ++evictions_;
    ++unloads_;
  }
}

void LoraAdapters::insert(Slot& slot, std::shared_ptr<Entry> e) {
  e->metrics = slot.metrics;
  slot.entry = std::move(e);
  slot.last_used = Clock::now();
  ++loads_;
  swap_out_idle();
}

void LoraAdapters::add(const std::string& name, const std::string& path) {
  if (!models::is_valid_model_name(name)) fail("'{}' is not a usable adapter name (no '/', '..', quotes or spaces)", name);
  auto e = make(name, path);
  std::lock_guard lock(mutex_);
  if (slots_.count(name)) fail("two adapters are named '{}'", name);
  insert(new_slot(name, path), std::move(e));
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
    if (slots_.count(name)) throw ApiError(400, fmt::format("an adapter named '{}' is loaded already", name), "lora_name");
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
  if (slots_.count(name)) throw ApiError(400, fmt::format("an adapter named '{}' is loaded already", name), "lora_name");
  insert(new_slot(name, real), std::move(e));
  return {{"success", true}, {"lora_name", name}, {"rank", rank}, {"load_seconds", seconds}};
}

json LoraAdapters::unload(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = slots_.find(name);
  if (it == slots_.end()) throw ApiError(404, fmt::format("no adapter named '{}' is loaded", name), "lora_name", "model_not_found");
  const int64_t running = it->second.entry ? it->second.entry.use_count() - 1 : 0;
  if (it->second.entry) ++unloads_;
  slots_.erase(it);  // requests holding it finish with it
  return {{"success", true}, {"lora_name", name}, {"requests_running", running}};
}

std::shared_ptr<LoraAdapters::Entry> LoraAdapters::acquire(const std::string& name) {
  std::string path;
  {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(name);
    if (it == slots_.end()) return nullptr;
    it->second.last_used = Clock::now();
    if (it->second.entry) return it->second.entry;
    path = it->second.path;
  }
  // Swapped out: read it again (outside the lock; a concurrent reader's copy wins if it is first).
  std::shared_ptr<Entry> e;
  try {
    e = make(name, path);
  } catch (const Error& err) {
    log_warning("lora: {} could not be read again: {}", name, err.what());
    throw ApiError(503, fmt::format("the adapter '{}' could not be read again", name), "model", "model_load_failed");
  }
  std::lock_guard lock(mutex_);
  auto it = slots_.find(name);
  if (it == slots_.end()) return nullptr;  // forgotten meanwhile
  if (it->second.entry) return it->second.entry;
  std::shared_ptr<Entry> held = e;  // held before the swap-out looks, so it is not the one swapped
  insert(it->second, std::move(e));
  return held;
}

CompletionBackend& LoraAdapters::backend(Entry& e) { return *e.backend; }
ServeMetrics& LoraAdapters::metrics(Entry& e) { return *e.metrics; }

bool LoraAdapters::empty() const {
  std::lock_guard lock(mutex_);
  return slots_.empty();
}

json LoraAdapters::models(int64_t created, const std::string& parent) const {
  std::lock_guard lock(mutex_);
  json rows = json::array();
  for (const auto& [name, slot] : slots_) {
    json row = {{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "ridge"}, {"parent", parent},
                {"root", parent}, {"max_model_len", base_.n_ctx()}, {"lora", {{"in_memory", bool(slot.entry)}}}};
    if (slot.entry) {
      const lora::LoraAdapter& a = *slot.entry->adapter;
      row["lora"].update({{"rank", a.rank}, {"alpha", a.alpha}, {"format", a.source_format}, {"matrices", a.n_matrices()},
                          {"bytes", a.bytes()}});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> LoraAdapters::prometheus() {
  std::vector<std::pair<std::string, std::shared_ptr<ServeMetrics>>> all;
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, slot] : slots_) all.emplace_back(name, slot.metrics);
  }
  std::vector<std::pair<std::string, std::string>> out;
  const EngineStats none{};
  for (auto& [name, m] : all) out.emplace_back(name, m->prometheus(none));
  return out;
}

std::string LoraAdapters::counters() const {
  std::lock_guard lock(mutex_);
  return fmt::format(
      "# HELP ridge:lora_adapters_loaded LoRA adapters in memory now.\n# TYPE ridge:lora_adapters_loaded gauge\nridge:lora_adapters_loaded {}\n"
      "# HELP ridge:lora_loads_total LoRA adapters loaded.\n# TYPE ridge:lora_loads_total counter\nridge:lora_loads_total {}\n"
      "# HELP ridge:lora_unloads_total LoRA adapters unloaded.\n# TYPE ridge:lora_unloads_total counter\nridge:lora_unloads_total {}\n"
      "# HELP ridge:lora_evictions_total LoRA adapters swapped out to make room (--max-loras).\n"
      "# TYPE ridge:lora_evictions_total counter\nridge:lora_evictions_total {}\n",
      std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return bool(s.second.entry); }), loads_, unloads_, evictions_);
}

}  // namespace ridge
