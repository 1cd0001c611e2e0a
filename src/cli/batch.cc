// ridge batch: a JSONL file of requests through the continuous-batching engine, offline.
// Each input line is a completion ({"prompt": "..."} or token ids) or a chat request
// ({"messages": [...]}), with OpenAI's sampling fields; each output line is one choice.
#include <chrono>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/progress.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "core/error.h"
#include "engine/grammar_vocab.h"
#include "grammar/grammar_cache.h"
#include "serve/api_error.h"
#include "serve/structured_output.h"

namespace ridge::cli {
namespace {

using nlohmann::json;

struct BatchOptions {
  EngineCliOptions engine;
  std::string input;
  std::string output;
  int32_t default_max_tokens = 128;
  bool json_summary = false;
};

struct Job {
  json id;
  int index = 0;  // choice index for n > 1
  RequestOptions request;
  std::string text;
  std::vector<int32_t> tokens;
  FinishReason finish = FinishReason::None;
  int64_t prompt_tokens = 0, cached_tokens = 0;
  std::string error;
};

template <typename T>
T field(const json& j, const char* key, T fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  try {
    return j[key].get<T>();
  } catch (const json::exception&) {
    fail("field '{}' has the wrong type", key);
  }
}

// One input line -> n jobs.
std::vector<Job> parse_line(const json& j, const std::string& line, const LoadedModel& m, int32_t default_max_tokens,
                            int64_t line_no, grammar::GrammarCache& grammars) {
  if (!j.is_object()) fail("line {}: not a JSON object", line_no);
  RequestOptions r;
  if (j.contains("messages")) {
    std::vector<ChatMessage> messages;
    for (const json& msg : j["messages"]) messages.push_back({field<std::string>(msg, "role", "user"), field<std::string>(msg, "content", ""), {}, {}});
    if (messages.empty()) fail("line {}: 'messages' is empty", line_no);
    r.prompt = encode_chat(m, messages);
  } else if (j.contains("prompt") && j["prompt"].is_array()) {
    r.prompt = j["prompt"].get<std::vector<int32_t>>();
  } else if (j.contains("prompt")) {
    r.prompt = m.tokenizer.encode(field<std::string>(j, "prompt", ""), /*add_special=*/true, /*parse_special=*/true);
  } else {
    fail("line {}: needs 'prompt' or 'messages'", line_no);
  }
  r.max_tokens = field<int32_t>(j, "max_tokens", field<int32_t>(j, "max_completion_tokens", default_max_tokens));
  SamplingParams& s = r.sampling;
  s.temperature = field<float>(j, "temperature", 0.0f);
  s.top_p = field<float>(j, "top_p", 1.0f);
  s.top_k = field<int32_t>(j, "top_k", 0);
  s.min_p = field<float>(j, "min_p", 0.0f);
  s.presence_penalty = field<float>(j, "presence_penalty", 0.0f);
  s.frequency_penalty = field<float>(j, "frequency_penalty", 0.0f);
  s.repetition_penalty = field<float>(j, "repetition_penalty", 1.0f);
  s.seed = field<uint64_t>(j, "seed", 0);
  r.ignore_eos = field<bool>(j, "ignore_eos", false);
  if (j.contains("stop")) r.stop = j["stop"].is_string() ? std::vector<std::string>{j["stop"].get<std::string>()} : field<std::vector<std::string>>(j, "stop", {});
  // Structured output under the server's field names; the line parsed again keeping key order.
  try {
    const grammar::GrammarSpec spec = read_structured_output(nlohmann::ordered_json::parse(line));
    if (!spec.empty()) r.grammar = grammars.get(spec);
  } catch (const ApiError& e) {
    fail("line {}: {}", line_no, e.what());
  } catch (const grammar::GrammarError& e) {
    fail("line {}: {}", line_no, e.what());
  }
  const int n = field<int>(j, "n", 1);
  if (n < 1 || n > 128) fail("line {}: n must be in 1..128, got {}", line_no, n);
  std::vector<Job> jobs;
  for (int i = 0; i < n; ++i) {
    Job job;
    job.id = j.contains("id") ? j["id"] : j.contains("custom_id") ? j["custom_id"] : json(line_no);
    job.index = i;
    job.request = r;
    job.request.sampling.seed = s.seed + uint64_t(i);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

void run_batch(BatchOptions& o) {
  std::ifstream in(o.input);
  if (!in) fail("cannot read '{}'", o.input);
  const auto m = load_model_for_engine(o.engine);
  if (run_as_worker(o.engine, *m)) return;
  Engine engine(m->model, m->tokenizer, engine_config(o.engine, *m));
  print_memory_plan(engine, *m);

  grammar::GrammarCache grammars(grammar_vocab(m->tokenizer));
  std::vector<Job> jobs;
  std::string line;
  for (int64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      fail("{} line {}: {}", o.input, line_no, e.what());
    }
    for (Job& job : parse_line(j, line, *m, o.default_max_tokens, line_no, grammars)) jobs.push_back(std::move(job));
  }
  if (jobs.empty()) fail("'{}' holds no requests", o.input);

  bench::ProgressBar progress("batch", int64_t(jobs.size()));
  const auto start = std::chrono::steady_clock::now();
  RequestId first_of_group = -1;
  for (Job& job : jobs) {
    if (job.index > 0) job.request.after_prefill_of = first_of_group;  // siblings share the prompt's blocks
    try {
      const RequestId id = engine.submit(job.request, [&job, &progress](const TokenEvent& e) {
        if (e.has_token) job.tokens.push_back(e.sample.token);
        job.text += e.text;
        if (e.finish == FinishReason::None) return;
        job.finish = e.finish;
        job.prompt_tokens = e.prompt_tokens;
        job.cached_tokens = e.cached_prompt_tokens;
        progress.advance(1);
      });
      if (job.index == 0) first_of_group = id;
    } catch (const SubmitError& e) {
      job.error = e.what();
      progress.advance(1);
    }
  }
  engine.run_until_idle();
  progress.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::FILE* out = o.output.empty() ? stdout : std::fopen(o.output.c_str(), "w");
  if (!out) fail("cannot write '{}'", o.output);
  int64_t generated = 0, prompt = 0, failed = 0;
  for (const Job& job : jobs) {
    json r = {{"id", job.id}, {"index", job.index}};
    if (!job.error.empty()) {
      r["error"] = job.error;
      ++failed;
    } else {
      r["text"] = job.text;
      r["finish_reason"] = finish_reason_name(job.finish);
      r["usage"] = {{"prompt_tokens", job.prompt_tokens},
                    {"completion_tokens", job.tokens.size()},
                    {"cached_tokens", job.cached_tokens}};
      generated += int64_t(job.tokens.size());
      prompt += job.prompt_tokens;
    }
    std::fprintf(out, "%s\n", r.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  }
  if (out != stdout) std::fclose(out);

  const EngineStats s = engine.stats();
  const json summary = {{"requests", jobs.size()},
                        {"failed", failed},
                        {"seconds", seconds},
                        {"prompt_tokens", prompt},
                        {"generated_tokens", generated},
                        {"requests_per_second", double(jobs.size()) / seconds},
                        {"output_tokens_per_second", double(generated) / seconds},
                        {"total_tokens_per_second", double(generated + prompt) / seconds},
                        {"prefix_cache_hit_rate", s.prefix_query_tokens ? double(s.prefix_hit_tokens) / double(s.prefix_query_tokens) : 0.0},
                        {"prefix_hit_tokens", s.prefix_hit_tokens},
                        {"tokens_prefilled", s.tokens_prefilled},
                        {"preemptions", s.preemptions},
                        {"steps", s.steps}};
  if (o.json_summary) {
    std::fprintf(stderr, "%s\n", summary.dump(2).c_str());
    return;
  }
  std::fprintf(stderr,
               "%zu requests (%lld failed) in %.2f s: %.2f req/s | prompt %lld tok, generated %lld tok | output %.1f tok/s, "
               "total %.1f tok/s\nprefix cache: %lld of %lld looked-up prompt tokens hit (%.0f%%) | prefilled %lld tokens | "
               "preemptions %lld | steps %lld\n",
               jobs.size(), (long long)failed, seconds, double(jobs.size()) / seconds, (long long)prompt, (long long)generated,
               double(generated) / seconds, double(generated + prompt) / seconds, (long long)s.prefix_hit_tokens,
               (long long)s.prefix_query_tokens, 100.0 * summary["prefix_cache_hit_rate"].get<double>(),
               (long long)s.tokens_prefilled, (long long)s.preemptions, (long long)s.steps);
}

}  // namespace

void add_batch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("batch", "Run a JSONL file of requests through the continuous-batching engine");
  auto o = std::make_shared<BatchOptions>();
  cmd->add_option("-i,--input", o->input, "JSONL requests: {\"prompt\": ...} or {\"messages\": [...]}, with max_tokens, temperature, n, stop, seed, ...")->required();
  cmd->add_option("-o,--output", o->output, "JSONL results, one line per choice (default: stdout)");
  cmd->add_option("-n,--max-tokens", o->default_max_tokens, "max_tokens of requests that do not say")->capture_default_str();
  cmd->add_flag("--json", o->json_summary, "print the summary as JSON (on stderr)");
  add_engine_options(cmd, o->engine);
  cmd->callback([o] { run_batch(*o); });
}

}  // namespace ridge::cli
