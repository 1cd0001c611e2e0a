#include "cli/engine_options.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "dist/lockstep.h"
#include "kv_events/zmq_publisher.h"
#include "model/kv_shape.h"
#include "model/model_identity.h"
#include "model/kv_shape.h"
#include "model/load_gguf.h"
#include "model/model_loader.h"
#include "model/model_store.h"

namespace ridge::cli {

void add_engine_options(CLI::App* cmd, EngineCliOptions& o) {
  EngineConfig& c = o.config;
  cmd->add_option("-m,--model", o.model, "GGUF file, a Hugging Face checkpoint directory (config.json, safetensors, tokenizer.json), or 'default' (SmolLM2-135M-Instruct Q4_1)")->capture_default_str();
  cmd->add_option("-t,--threads", c.n_threads, "threads (default: all cores)");
  cmd->add_option("-c,--ctx-size", c.n_ctx, "max tokens of one sequence, prompt and output (default: the model's)");
  cmd->add_option("--kv-memory", o.kv_memory, "KV cache budget, e.g. 512MiB, 2GiB (default: room for every sequence at full length, at most 20% of RAM)");
  cmd->add_option("--kv-dtype", o.kv_dtype, "KV cache type: f16, bf16, fp8 (E4M3), int8")->capture_default_str();
  cmd->add_option("--block-size", c.block_size, "tokens per KV block")->capture_default_str();
  o.max_num_seqs_flag = cmd->add_option("--max-num-seqs", c.max_num_seqs, "sequences running at once")->capture_default_str();
  o.max_batched_tokens_flag = cmd->add_option("--max-batched-tokens", c.max_batched_tokens, "tokens per engine step (longer prompts are prefilled in chunks)")->capture_default_str();
  o.prefill_chunk_flag = cmd->add_option("--prefill-chunk", c.prefill_chunk, "prompt tokens per step while other requests decode, bounding their inter-token latency (0: up to --max-batched-tokens)")->capture_default_str();
  cmd->add_flag("--no-prefix-caching", o.no_prefix_caching, "do not reuse the KV of shared prompt prefixes");
  cmd->add_flag("--priorities", c.priorities, "schedule by request priority (smaller first), then arrival");
  cmd->add_option("--device", o.device, "cpu, cuda, or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_option("--speculative", o.speculative,
                  "speculative decoding: off, ngram (prompt lookup, always), draft (the draft model, always "
                  "--num-speculative-tokens), auto (the draft model, else prompt lookup, where the measured step cost "
                  "and acceptance say it pays)")->capture_default_str();
  cmd->add_option("--draft-model,--model-draft", o.draft_model,
                  "draft model for speculative decoding (GGUF file or model name; same vocabulary as the model)");
  cmd->add_option("--draft-p-min", c.draft_p_min,
                  "a request stops drafting after a token the draft model gives less than this probability (0: always "
                  "--num-speculative-tokens)")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  cmd->add_option("--draft-vocab-size", c.draft_vocab_size,
                  "the draft's head scores only the first N token ids (the frequent ones; 0: the whole vocabulary); "
                  "output is unchanged, the draft runs faster, acceptance may drop")
      ->capture_default_str();
  cmd->add_option("--num-speculative-tokens", c.num_speculative_tokens, "draft tokens per request per step, at most")
      ->capture_default_str();
  cmd->add_option("--spec-ngram-min", c.ngram.min_n, "prompt lookup: shortest suffix that counts as a match")->capture_default_str();
  cmd->add_option("--spec-ngram-max", c.ngram.max_n, "prompt lookup: longest suffix tried")->capture_default_str();
  cmd->add_option("--kv-events-endpoint", o.kv_events_endpoint,
                  "publish KV cache events (vLLM's schema, ZeroMQ PUB) for KV-aware routers: tcp://*:5557 is bound, "
                  "an address without '*' is connected to (vLLM's rule); empty: off");
  cmd->add_option("--kv-events-replay-endpoint", o.kv_events_replay_endpoint,
                  "ZeroMQ ROUTER endpoint (bound) that replays kept event batches from a sequence number");
  cmd->add_option("--kv-events-topic", o.kv_events_topic, "topic frame of every KV event message");
  cmd->add_option("--kv-events-encoding", o.kv_events_encoding,
                  "events as tagged arrays (array: vLLM's original form, read by every router) or tagged maps "
                  "(map: vLLM's form since it dropped array_like)")->capture_default_str();
  cmd->add_option("--kv-offload-ram", o.kv_offload_ram,
                  "host memory for prefix-cache blocks evicted from the KV pool (e.g. 4GiB; a later prefix hit loads "
                  "them back instead of computing them)");
  cmd->add_option("--kv-offload-dir", o.kv_offload_dir,
                  "directory of the disk tier below --kv-offload-ram (kept across restarts; checksummed)");
  cmd->add_option("--kv-offload-size", o.kv_offload_size, "the disk tier's budget")->capture_default_str();
  cmd->add_option("--chat-template", o.chat_template, "chat format overriding the model's (chatml, llama2, llama3, mistral, gemma, phi3, ...), or a Jinja template's text");
  cmd->add_option_function<std::string>(
      "--chat-template-file",
      [&o](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        if (!in) fail("cannot read --chat-template-file '{}'", path);
        o.chat_template.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      },
      "a Jinja chat template overriding the model's (llama.cpp's flag)");
  add_parallel_options(cmd, o.parallel);
}

int64_t parse_bytes(const std::string& text) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    fail("'{}' is not a size (try 512MiB or 2GiB)", text);
  }
  std::string unit = text.substr(end);
  for (const char* suffix : {"iB", "B"})
    if (unit.size() > std::strlen(suffix) && unit.ends_with(suffix)) unit.resize(unit.size() - std::strlen(suffix));
  double scale = 0;
  if (unit.empty() || unit == "M" || unit == "m") scale = double(1 << 20);
  else if (unit == "K" || unit == "k") scale = 1024.0;
  else if (unit == "G" || unit == "g") scale = double(1 << 30);
  else if (unit == "T" || unit == "t") scale = std::ldexp(1.0, 40);
  else if (unit == "B") scale = 1.0;
  if (scale == 0 || !(value > 0) || !std::isfinite(value)) fail("'{}' is not a size (try 512MiB or 2GiB)", text);
  return int64_t(value * scale);
}

EngineConfig engine_config(const EngineCliOptions& o) {
  EngineConfig c = o.config;
  if (!o.kv_memory.empty()) c.kv_memory_bytes = parse_bytes(o.kv_memory);
  const auto dtype = parse_kv_dtype(o.kv_dtype);
  if (!dtype) fail("unknown --kv-dtype '{}' (f16, bf16, fp8, int8)", o.kv_dtype);
  c.kv_dtype = *dtype;
  c.prefix_caching = !o.no_prefix_caching;
  c.device = parse_device_or_fail(o.device);
  if (o.speculative == "off") c.speculative = SpeculativeMode::kOff;
  else if (o.speculative == "ngram") c.speculative = SpeculativeMode::kNgram;
  else if (o.speculative == "draft") c.speculative = SpeculativeMode::kDraft;
  else if (o.speculative == "auto") c.speculative = SpeculativeMode::kAuto;
  else fail("unknown --speculative '{}' (off, ngram, draft, auto)", o.speculative);
  if (c.num_speculative_tokens < 0 || c.num_speculative_tokens > 16)
    fail("--num-speculative-tokens must be in 0..16, got {}", c.num_speculative_tokens);
  if (c.ngram.min_n < 1 || c.ngram.max_n < c.ngram.min_n)
    fail("--spec-ngram-min must be >= 1 and --spec-ngram-max >= it (got {} and {})", c.ngram.min_n, c.ngram.max_n);
  if (!kv_events::parse_event_encoding(o.kv_events_encoding))
    fail("unknown --kv-events-encoding '{}' (array, map)", o.kv_events_encoding);
  if (o.kv_events_endpoint.empty() && (!o.kv_events_replay_endpoint.empty() || !o.kv_events_topic.empty()))
    fail("--kv-events-replay-endpoint and --kv-events-topic need --kv-events-endpoint");
  return c;
}

namespace {

// The publisher of --kv-events-endpoint; the blocks' medium is where this engine keeps its KV.
std::shared_ptr<KvEventSink> kv_event_publisher(const EngineCliOptions& o, const EngineConfig& c) {
  kv_events::ZmqPublisherOptions p;
  p.endpoint = o.kv_events_endpoint;
  p.replay_endpoint = o.kv_events_replay_endpoint;
  p.topic = o.kv_events_topic;
  p.format.encoding = *kv_events::parse_event_encoding(o.kv_events_encoding);
  p.format.medium = resolve_device(c.device) == Device::Cuda ? "GPU" : "CPU";
  std::shared_ptr<kv_events::ZmqPublisher> publisher = kv_events::make_zmq_publisher(p);
  log_info("kv events: {} {}{}{}", publisher->bound() ? "publishing on" : "publishing to", publisher->endpoint(),
           p.replay_endpoint.empty() ? "" : ", replay on ", publisher->replay_endpoint());
  if (!c.prefix_caching) log_warning("kv events: --no-prefix-caching: no block is cached, so none is published");
  return publisher;
}

}  // namespace

EngineConfig engine_config(const EngineCliOptions& o, const LoadedModel& m) {
  EngineConfig c = engine_config(o);
  c.parallel = parallel_for(o.parallel);
  c.n_threads = default_threads(c.n_threads);
  if (c.parallel && c.device == Device::Auto) c.device = Device::Cpu;
  if (m.draft) c.draft_model = &m.draft->model;
  if (m.draft && o.speculative == "off") c.speculative = SpeculativeMode::kDraft;  // a draft model asks for it
  if (!o.kv_events_endpoint.empty()) c.kv_events = kv_event_publisher(o, c);
  if (!o.kv_offload_ram.empty() || !o.kv_offload_dir.empty()) {
    const KvLayout layout = kv_layout_of(m.model.spec, c.block_size, 1, c.kv_dtype);
    KvTierConfig t;
    t.ram_bytes = o.kv_offload_ram.empty() ? 0 : parse_bytes(o.kv_offload_ram);
    t.disk_dir = o.kv_offload_dir;
    t.disk_bytes = o.kv_offload_dir.empty() ? 0 : parse_bytes(o.kv_offload_size);
    t.model_identity = model_identity_hex(m.model) + "/" + kv_tier_identity(layout);
    t.block_bytes = layout.bytes_per_token_per_layer() * layout.n_layer * c.block_size;
    t.block_size = c.block_size;
    c.kv_tiers = std::make_shared<KvTiers>(t);
  }
  return c;
}

bool run_as_worker(const EngineCliOptions& o, const LoadedModel& m) {
  dist::Parallel* p = parallel_for(o.parallel);
  if (!p || p->is_driver()) return false;
  dist::run_worker(m.model, default_threads(o.config.n_threads), *p);
  return true;
}

std::unique_ptr<LoadedModel> load_model_for_engine(const EngineCliOptions& o) {
  const dist::Parallel* parallel = parallel_for(o.parallel);
  const auto shard = shard_request(parallel, o.parallel);
  auto m = load_model_for_engine(o.model, o.chat_template, shard.get());
  // The draft model runs beside the scheduler, on rank 0 alone.
  if (o.draft_model.empty() || (parallel && !parallel->is_driver())) return m;
  m->draft = load_model_for_engine(o.draft_model, "");
  const Tokenizer& a = m->tokenizer;
  const Tokenizer& b = m->draft->tokenizer;
  bool same = a.n_vocab() == b.n_vocab();
  for (int32_t id = 0; same && id < a.n_vocab(); ++id) same = a.token_text(id) == b.token_text(id);
  if (!same)
    fail("the draft model {} does not share the vocabulary of {} ({} and {} tokens)", m->draft->name, m->name,
         b.n_vocab(), a.n_vocab());
  return m;
}

namespace {

// The model's own template, else the override; with neither usable, completions still work and chat
// falls back to the family's turn format (Gemma base models ship without a template), else ChatML.
ChatTemplate model_chat_template(const std::optional<std::string>& jinja, const std::string& override_name,
                                 const std::string& arch) {
  ChatTemplate chat;
  try {
    chat = select_chat_template(jinja, override_name);
  } catch (const Error&) {
    if (!override_name.empty()) throw;
    chat = select_chat_template(std::nullopt, arch.rfind("gemma", 0) == 0 ? "gemma" : "chatml");
  }
  if (chat.source.empty()) chat.source = jinja.value_or("");
  return chat;
}

}  // namespace

std::optional<std::string> hf_chat_template(const std::string& dir, const Tokenizer& tokenizer) {
  if (!tokenizer.chat_template().empty()) return tokenizer.chat_template();
  std::ifstream in(std::filesystem::path(dir) / "chat_template.jinja", std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::unique_ptr<LoadedModel> load_model_for_engine(const std::string& model, const std::string& chat_template_override,
                                                   const ShardRequest* shard) {
  const std::string path = resolve_model_path(model);
  if (std::filesystem::is_directory(path)) {
    // config.json + safetensors + tokenizer.json, as Hugging Face checkpoints come.
    auto m = std::unique_ptr<LoadedModel>(new LoadedModel{nullptr, load_model(path, shard), Tokenizer::from_hf_dir(path), {}, {}});
    const std::filesystem::path dir = std::filesystem::path(path).lexically_normal();
    m->name = (dir.has_filename() ? dir : dir.parent_path()).filename().string();  // "DIR/" too
    m->chat = model_chat_template(hf_chat_template(path, m->tokenizer), chat_template_override, m->model.spec.arch);
    return m;
  }
  auto file = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
  auto m = std::unique_ptr<LoadedModel>(new LoadedModel{file, load_gguf_model(file, shard), Tokenizer::from_gguf(*file), {}, {}});
  m->name = std::filesystem::path(path).stem().string();
  m->chat = model_chat_template(file->get_string("tokenizer.chat_template"), chat_template_override, m->model.spec.arch);
  return m;
}

std::vector<int32_t> encode_chat(const LoadedModel& m, const std::vector<ChatMessage>& messages) {
  ChatTemplateOptions options;
  options.default_system_prompt = m.chat.default_system_prompt;
  use_vocabulary_tokens(options, m.tokenizer);  // the model's Jinja template first, with its BOS / EOS
  return m.tokenizer.encode(render_chat_template(m.chat, messages, options), /*add_special=*/true, /*parse_special=*/true);
}

void print_memory_plan(const Engine& engine, const LoadedModel& m) {
  const KvMemoryPlan& p = engine.memory_plan();
  const EngineConfig& c = engine.config();
  auto mib = [](int64_t bytes) { return double(bytes) / double(1 << 20); };
  const KvLayout kv = kv_layout_of(m.model.spec, c.block_size, 1, c.kv_dtype);
  const std::string shape = kv.keys_only ? fmt::format("{} layers x one latent row of {}", kv.n_layer, kv.head_dim)
                                         : fmt::format("{} layers x 2 x {} kv heads x {} dims", kv.n_layer, kv.n_kv_heads, kv.head_dim);
  const int kvp = c.parallel ? c.parallel->sizes.kvp : 1;
  const std::string helix = kvp > 1 ? fmt::format(" per rank (Helix {}: each rank keeps 1/{} of every block)", kvp, kvp) : "";
  const std::string text = fmt::format(
      "memory plan: weights {:.1f} MiB | KV {} {} bytes/token{} ({}) | "
      "pool {:.1f} MiB = {} blocks x {} tokens = {} tokens = {} sequences of {} tokens",
      mib(engine.weight_bytes()), kv_dtype_name(c.kv_dtype), p.bytes_per_token, helix, shape,
      mib(int64_t(p.n_blocks) * p.bytes_per_block), p.n_blocks, c.block_size, p.n_tokens, p.full_context_seqs, c.n_ctx);
  log_line(LogLevel::kInfo, text,
           {{"weight_bytes", engine.weight_bytes()}, {"kv_dtype", kv_dtype_name(c.kv_dtype)}, {"kv_bytes_per_token", p.bytes_per_token},
            {"kv_blocks", p.n_blocks}, {"block_size", c.block_size}, {"kv_tokens", p.n_tokens},
            {"full_context_sequences", p.full_context_seqs}, {"ctx_size", c.n_ctx}, {"kv_parallel", kvp}});
}

}  // namespace ridge::cli
