// ridge run: generate text for a prompt or a chat message, streaming it to stdout,
// then report prompt/generated token counts and prefill/decode speed on stderr.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backend/device.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/parallel_options.h"
#include "dist/lockstep.h"
#include "core/error.h"
#include "model/lora/lora_adapter.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "engine/grammar_vocab.h"
#include "grammar/compiled_grammar.h"
#include "grammar/grammar_spec.h"
#include "model/gguf/gguf_file.h"
#include "model/load_gguf.h"
#include "model/model_loader.h"
#include "model/model_store.h"
#include "tokenizer/chat_template.h"

namespace ridge::cli {
namespace {

struct RunOptions {
  std::string model = "default";
  std::string prompt;
  std::string prompt_file;
  bool chat = false;
  std::string system;
  std::string chat_template;
  int64_t n_ctx = 4096;
  int threads = 0;
  bool show_logprobs = false;
  bool no_stats = false;
  bool json = false;
  std::string device = "auto";
  std::string numerics = "native";
  std::vector<int32_t> prompt_tokens;
  GenerationRequest request;
  // Structured output (llama.cpp's flag names, plus --regex and --choice).
  std::string grammar, grammar_file, json_schema, json_schema_file, regex, whitespace = "compact";
  std::vector<std::string> choices;
  bool no_jump_forward = false;
  std::string lora;  // a PEFT directory or GGUF LoRA file
  float lora_scale = 1.0f;
  std::string lora_dtype = "f16";
  std::shared_ptr<const lora::LoraAdapter> adapter;  // loaded from it
  ParallelCliOptions parallel;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read prompt file '{}'", path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

grammar::GrammarSpec grammar_spec(const RunOptions& o) {
  grammar::GrammarSpec spec;
  int given = 0;
  auto set = [&](grammar::GrammarSpec::Kind kind, std::string source) {
    ++given;
    spec.kind = kind;
    spec.source = std::move(source);
  };
  if (!o.grammar.empty()) set(grammar::GrammarSpec::Kind::kGbnf, o.grammar);
  if (!o.grammar_file.empty()) set(grammar::GrammarSpec::Kind::kGbnf, read_file(o.grammar_file));
  if (!o.json_schema.empty()) set(grammar::GrammarSpec::Kind::kJsonSchema, o.json_schema);
  if (!o.json_schema_file.empty()) set(grammar::GrammarSpec::Kind::kJsonSchema, read_file(o.json_schema_file));
  if (!o.regex.empty()) set(grammar::GrammarSpec::Kind::kRegex, o.regex);
  if (!o.choices.empty()) {
    set(grammar::GrammarSpec::Kind::kChoice, {});
    spec.choices = o.choices;
  }
  if (given > 1) fail("give one of --grammar, --grammar-file, --json-schema, --json-schema-file, --regex, --choice");
  const auto policy = grammar::whitespace_from_name(o.whitespace);
  if (!policy) fail("--whitespace must be compact, flexible or spaced, not '{}'", o.whitespace);
  spec.whitespace = *policy;
  return spec;
}

std::string build_prompt_text(const RunOptions& o, const std::optional<std::string>& model_template) {
  std::string text = o.prompt_file.empty() ? o.prompt : read_file(o.prompt_file);
  if (!o.chat) return text;
  const ChatTemplate tmpl = select_chat_template(model_template, o.chat_template);
  std::vector<ChatMessage> messages;
  if (!o.system.empty()) messages.push_back({"system", o.system, {}, {}});
  messages.push_back({"user", text, {}, {}});
  ChatTemplateOptions options;
  options.default_system_prompt = tmpl.default_system_prompt;
  return render_chat_template(tmpl, messages, options);  // the model's Jinja template first
}

void print_logprobs(const Tokenizer& tokenizer, const GenerationResult& result) {
  std::fprintf(stderr, "\n%-6s %-8s %-20s %s\n", "step", "id", "token", "logprob (top alternatives)");
  for (size_t i = 0; i < result.samples.size(); ++i) {
    const auto& s = result.samples[i];
    std::string line = fmt::format("{:<6} {:<8} {:<20} {:.4f}", i, s.token, fmt::format("{:?}", tokenizer.token_to_piece(s.token)), s.logprob);
    for (const auto& alt : s.top) line += fmt::format("  {:?}={:.3f}", tokenizer.token_to_piece(alt.token), alt.logprob);
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void print_json(const GenerationResult& result, double load_seconds) {
  nlohmann::json out;
  out["prompt_tokens"] = result.prompt_tokens;
  out["tokens"] = result.tokens;
  out["text"] = result.text;
  out["finish_reason"] = finish_reason_name(result.finish_reason);
  out["logprobs"] = nlohmann::json::array();
  for (const auto& s : result.samples) out["logprobs"].push_back(s.logprob);
  out["load_seconds"] = load_seconds;
  out["prefill_seconds"] = result.prefill_seconds;
  out["decode_seconds"] = result.decode_seconds;
  std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// On a GPU the request goes through the engine (one sequence), whose forward pass runs there.
// A grammar runs there too (the engine holds the mask worker and jump-forward).
GenerationResult generate_on_engine(const Model& model, const Tokenizer& tokenizer, const RunOptions& o, int64_t n_ctx,
                                    const TextCallback& on_text, Device device,
                                    std::shared_ptr<const grammar::CompiledGrammar> compiled) {
  EngineConfig c;
  c.device = device;
  c.n_threads = default_threads(o.threads);
  c.parallel = parallel_for(o.parallel);
  if (c.parallel) c.device = Device::Cpu;  // a split model runs on CPU ranks
  c.n_ctx = n_ctx;
  c.max_num_seqs = 1;
  c.max_batched_tokens = std::max<int64_t>(512, int64_t(o.request.prompt.size()));  // the prompt in one pass
  Engine engine(model, tokenizer, c);
  RequestOptions r;
  r.adapter = o.adapter;
  r.prompt = o.request.prompt;
  r.sampling = o.request.sampling;
  r.max_tokens = o.request.max_tokens;
  r.stop = o.request.stop;
  r.ignore_eos = o.request.ignore_eos;
  r.logprobs = o.request.sampling.top_logprobs > 0;
  r.grammar = std::move(compiled);
  r.jump_forward = !o.no_jump_forward;
  GenerationResult result;
  result.prompt_tokens = int64_t(r.prompt.size());
  const auto start = std::chrono::steady_clock::now();
  auto first = start;
  engine.submit(std::move(r), [&](const TokenEvent& e) {
    const auto now = std::chrono::steady_clock::now();
    if (e.has_token) {
      if (result.tokens.empty()) first = now;
      result.tokens.push_back(e.sample.token);
      result.samples.push_back(e.sample);
    }
    result.text += e.text;
    if (on_text && !e.text.empty()) on_text(e.text);
    if (e.finish != FinishReason::None) result.finish_reason = e.finish;
  });
  engine.run_until_idle();
  const auto end = std::chrono::steady_clock::now();
  result.prefill_seconds = std::chrono::duration<double>(first - start).count();
  result.decode_seconds = std::chrono::duration<double>(end - first).count();
  return result;
}

void run(RunOptions& o) {
  const auto load_start = std::chrono::steady_clock::now();
  const auto numerics = parse_numerics(o.numerics);
  if (!numerics) fail("unknown --numerics '{}' (native, ggml)", o.numerics);
  // The mirror of the reference's arithmetic is a CPU pass.
  const Device device = *numerics == Numerics::Ggml ? Device::Cpu : resolve_device(parse_device_or_fail(o.device));
  const std::string path = resolve_model_path(o.model);
  // A GGUF file, or a Hugging Face checkpoint directory (no file: its tokenizer is tokenizer.json).
  const auto file = std::filesystem::is_directory(path) ? nullptr
                                                        : std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
  dist::Parallel* parallel = parallel_for(o.parallel);
  const auto shard = shard_request(parallel, o.parallel);
  const Model model = file ? load_gguf_model(file, shard.get()) : load_model(path, shard.get());
  if (!o.lora.empty()) {
    if (shard) fail("--lora: LoRA adapters are not supported on a model split across ranks yet");
    o.adapter = lora::load_adapter(o.lora, model.spec, {o.lora_scale, o.lora_dtype == "f16"});
  }
  if (parallel && !parallel->is_driver()) return dist::run_worker(model, default_threads(o.threads), *parallel);
  const Tokenizer tokenizer = file ? Tokenizer::from_gguf(*file) : Tokenizer::from_hf_dir(path);
  const auto model_template = file ? file->get_string("tokenizer.chat_template") : cli::hf_chat_template(path, tokenizer);
  const int64_t n_ctx = std::min(o.n_ctx, model.spec.n_ctx_train);

  o.request.prompt = o.prompt_tokens.empty()
                         ? tokenizer.encode(build_prompt_text(o, model_template), /*add_special=*/true, /*parse_special=*/true)
                         : o.prompt_tokens;
  if (o.show_logprobs && o.request.sampling.top_logprobs == 0) o.request.sampling.top_logprobs = 3;
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();

  const TextCallback on_text = [&o](std::string_view piece) {
    if (o.json) return;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  const grammar::GrammarSpec spec = grammar_spec(o);
  std::shared_ptr<const grammar::CompiledGrammar> compiled;
  if (!spec.empty()) {
    const auto vocab = grammar_vocab(tokenizer);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      compiled = std::make_shared<const grammar::CompiledGrammar>(grammar::build_grammar(spec), vocab);
    } catch (const grammar::GrammarError& e) {
      fail("{}", e.what());
    }
    const double ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3;
    if (!o.no_stats && !o.json) std::fprintf(stderr, "grammar compiled in %.1f ms\n", ms);
  }
  GenerationResult result;
  if (device == Device::Cuda || compiled || parallel) {
    result = generate_on_engine(model, tokenizer, o, n_ctx, on_text, device, compiled);
  } else {
    ModelForward forward(model, o.threads);
    forward.set_numerics(*numerics);
    forward.set_adapter(o.adapter.get());
    Generator generator(forward, tokenizer, n_ctx);
    result = generator.generate(o.request, on_text);
  }
  if (o.json) {
    print_json(result, load_seconds);
    return;
  }
  std::printf("\n");
  if (o.show_logprobs) print_logprobs(tokenizer, result);
  if (o.no_stats) return;
  const double decode_steps = double(result.tokens.size() > 1 ? result.tokens.size() - 1 : 0);
  std::fprintf(stderr,
               "\nprompt tokens: %lld | generated tokens: %zu | finish: %s\n"
               "load: %.0f ms | load to first token: %.0f ms\n"
               "prefill: %.1f tok/s | decode: %.1f tok/s\n",
               (long long)result.prompt_tokens, result.tokens.size(), finish_reason_name(result.finish_reason).data(),
               load_seconds * 1e3, (load_seconds + result.prefill_seconds) * 1e3,
               double(result.prompt_tokens) / result.prefill_seconds,
               decode_steps > 0 ? decode_steps / result.decode_seconds : 0.0);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text for a prompt (streams to stdout)");
  auto o = std::make_shared<RunOptions>();
  auto& r = o->request;
  auto& s = r.sampling;
  cmd->add_option("-m,--model", o->model, "GGUF file, a Hugging Face checkpoint directory, or 'default' (SmolLM2-135M-Instruct Q4_1)")->capture_default_str();
  cmd->add_option("-p,--prompt", o->prompt, "prompt text");
  cmd->add_option("-f,--file", o->prompt_file, "read the prompt from a file");
  cmd->add_flag("--chat", o->chat, "treat the prompt as a user message and apply the model's chat template");
  cmd->add_option("--system", o->system, "system message for --chat");
  cmd->add_option("--chat-template", o->chat_template, "chat format name overriding the model's (chatml, llama2, llama3, mistral, gemma, phi3, ...)");
  cmd->add_option("-n,--max-tokens", r.max_tokens, "tokens to generate at most")->capture_default_str();
  cmd->add_option("-c,--ctx-size", o->n_ctx, "context length (capped at the model's)")->capture_default_str();
  cmd->add_option("--temp", s.temperature, "temperature; 0 = greedy")->capture_default_str();
  cmd->add_option("--top-k", s.top_k, "keep the k most likely tokens; 0 = off")->capture_default_str();
  cmd->add_option("--top-p", s.top_p, "nucleus sampling threshold; 1 = off")->capture_default_str();
  cmd->add_option("--min-p", s.min_p, "drop tokens below min-p x the most likely; 0 = off")->capture_default_str();
  cmd->add_option("--repeat-penalty", s.repetition_penalty, "repetition penalty; 1 = off")->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty, "presence penalty")->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "frequency penalty")->capture_default_str();
  cmd->add_option("--repeat-last-n", s.penalty_last_n, "window of the penalties; -1 = all")->capture_default_str();
  cmd->add_option("--seed", s.seed, "random seed (same seed, same output)")->capture_default_str();
  cmd->add_option("--stop", r.stop, "stop string (repeatable)");
  cmd->add_flag("--ignore-eos", r.ignore_eos, "keep generating past end-of-generation tokens");
  cmd->add_option("--top-logprobs", s.top_logprobs, "alternatives to report per token with --logprobs");
  cmd->add_flag("--logprobs", o->show_logprobs, "print each token's logprob (and top alternatives) after the text");
  cmd->add_option("-t,--threads", o->threads, "threads (default: all cores)");
  cmd->add_option("--lora", o->lora, "a LoRA adapter applied to the model (a PEFT directory or a GGUF LoRA file)");
  cmd->add_option("--lora-scale", o->lora_scale, "the adapter's scale, times its alpha / rank")->capture_default_str();
  cmd->add_option("--lora-dtype", o->lora_dtype, "the adapter's A and B in memory: f16 (half the bytes) or f32 (as read)")
      ->check(CLI::IsMember({"f16", "f32"}))
      ->capture_default_str();
  cmd->add_option("--numerics", o->numerics, "native, or ggml: llama.cpp's CPU arithmetic bit for bit (Q4_1/Q8_0 Llama models; conformance checks)")
      ->capture_default_str();
  cmd->add_option("--device", o->device, "cpu, cuda, or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_flag("--no-stats", o->no_stats, "do not print token counts and speed");
  cmd->add_flag("--json", o->json, "print one JSON object (ids, text, logprobs, timings) instead of streaming");
  cmd->add_option("--grammar", o->grammar, "constrain the output by a GBNF grammar (llama.cpp's syntax; root rule 'root')");
  cmd->add_option("--grammar-file", o->grammar_file, "read the GBNF grammar from a file");
  cmd->add_option("-j,--json-schema", o->json_schema, "constrain the output to JSON valid against this schema (inline JSON)");
  cmd->add_option("--json-schema-file", o->json_schema_file, "read the JSON schema from a file");
  cmd->add_option("--regex", o->regex, "constrain the output to a full match of this regular expression");
  cmd->add_option("--choice", o->choices, "constrain the output to one of these strings (repeatable)");
  cmd->add_option("--whitespace", o->whitespace, "JSON whitespace: compact, flexible (any JSON whitespace) or spaced (a space after , and :)")->capture_default_str();
  cmd->add_flag("--no-jump-forward", o->no_jump_forward, "sample every token, also those the grammar forces");
  cmd->add_option("--tokens", o->prompt_tokens, "prompt as token ids instead of text (comma-separated)")->delimiter(',');
  add_parallel_options(cmd, o->parallel);
  cmd->callback([o] { run(*o); });
}

}  // namespace ridge::cli
