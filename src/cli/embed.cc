// ridge embed: texts in, one vector per text out, through an embedding model (a sentence-transformers
// directory or a GGUF bert file): JSON lines in and out, a progress bar, and the pass's speed.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench/progress.h"
#include "cli/commands.h"
#include "core/error.h"
#include "embed/embedding_model.h"
#include "model/model_store.h"

namespace ridge::cli {
namespace {

struct EmbedOptions {
  std::string model = "all-minilm-l6-v2";
  std::string input, output, prompt, prompt_name;
  int64_t dimensions = 0;
  int threads = 0;
  int64_t batch_tokens = 16384;
  int64_t batch_size = 0;
  int64_t max_seq_length = 0;
  bool json_summary = false;
  std::string dtype = "auto";
  std::string pooling;
  bool no_truncate = false;
};

// Lines of JSON strings or {"text": ...} objects (any "id" is carried to the output).
void read_inputs(const std::string& path, std::vector<std::string>& texts, std::vector<nlohmann::json>& ids) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) fail("cannot open '{}'", path);
    in = &file;
  }
  std::string line;
  for (int64_t n = 1; std::getline(*in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      fail("{} line {}: {}", path, n, e.what());
    }
    if (j.is_string()) {
      texts.push_back(j.get<std::string>());
      ids.emplace_back(nullptr);
    } else if (j.is_object() && j.contains("text") && j["text"].is_string()) {
      texts.push_back(j["text"].get<std::string>());
      ids.push_back(j.value("id", nlohmann::json()));
    } else {
      fail("{} line {}: expected a JSON string or an object with \"text\"", path, n);
    }
  }
}

void run_embed(const EmbedOptions& o) {
  std::vector<std::string> texts;
  std::vector<nlohmann::json> ids;
  if (!o.prompt.empty()) {
    texts.push_back(o.prompt);
    ids.emplace_back(nullptr);
  }
  if (!o.input.empty()) read_inputs(o.input, texts, ids);
  if (texts.empty()) fail("nothing to embed: give -p TEXT or -i FILE.jsonl");
  const std::string path = resolve_model_path(o.model);
  auto model = EmbeddingModel::load(path, o.threads, o.dtype, o.pooling);
  model->max_batch_tokens = o.batch_tokens;
  model->max_batch_texts = o.batch_size;
  if (o.max_seq_length > 0) model->set_max_tokens(o.max_seq_length);
  // Timed from the tokenization on, as sentence-transformers' encode() is.
  const auto start = std::chrono::steady_clock::now();
  std::vector<EmbeddingInput> inputs;
  inputs.reserve(texts.size());
  int64_t tokens = 0;
  for (const std::string& t : texts) {
    inputs.push_back(model->prepare(t, o.prompt_name, !o.no_truncate));
    tokens += int64_t(inputs.back().ids.size());
  }
  std::vector<float> vectors;
  double flops = 0.0;
  {
    bench::ProgressBar bar("embed", int64_t(inputs.size()));
    int64_t shown = 0;
    model->embed(inputs, vectors, [&](int64_t done) {
      bar.advance(done - shown);
      shown = done;
    });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t dims = model->dimensions();
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (!o.output.empty() && o.output != "-") {
    file.open(o.output);
    if (!file) fail("cannot write '{}'", o.output);
    out = &file;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::span<const float> v(vectors.data() + i * size_t(dims), size_t(dims));
    nlohmann::json line = {{"index", i}, {"n_tokens", inputs[i].ids.size()}};
    if (!ids[i].is_null()) line["id"] = ids[i];
    line["embedding"] = o.dimensions > 0 ? truncate_dimensions(v, o.dimensions, model->pipeline().normalize)
                                         : std::vector<float>(v.begin(), v.end());
    *out << line.dump() << '\n';
  }
  for (const EmbeddingInput& in : inputs) {
    EncoderBatch one;
    one.add(in.ids);
    flops += model->encoder().flops(one);
  }
  if (o.json_summary) {
    const nlohmann::json summary = {{"model", model->name()}, {"texts", inputs.size()}, {"tokens", tokens},
                                    {"seconds", seconds}, {"texts_per_s", double(inputs.size()) / seconds},
                                    {"tokens_per_s", double(tokens) / seconds}, {"gflops", flops / seconds * 1e-9},
                                    {"threads", model->encoder().n_threads()}, {"dtype", model->dtype()}};
    std::fprintf(stderr, "%s\n", summary.dump().c_str());
  }
  std::fprintf(stderr, "%s (%s): %zu texts, %lld tokens, %lld dimensions in %.2f s: %.1f texts/s, %.0f tokens/s, %.1f GFLOP/s (%d threads)\n",
               model->name().c_str(), model->dtype().c_str(), inputs.size(), (long long)tokens, (long long)dims, seconds,
               double(inputs.size()) / seconds, double(tokens) / seconds, flops / seconds * 1e-9,
               model->encoder().n_threads());
}

}  // namespace

void add_embed_command(CLI::App& app) {
  auto o = std::make_shared<EmbedOptions>();
  CLI::App* cmd = app.add_subcommand("embed", "Embed texts with an embedding model (JSON lines in, JSON lines out)");
  cmd->add_option("-m,--model", o->model,
                  "a sentence-transformers / Hugging Face BERT directory, a GGUF bert file, or a fetched name "
                  "(all-minilm-l6-v2)")
      ->capture_default_str();
  cmd->add_option("-i,--input", o->input, "texts, one JSON string or {\"text\", \"id\"} object per line ('-': stdin)");
  cmd->add_option("-p,--prompt", o->prompt, "one text to embed (before those of --input)");
  cmd->add_option("-o,--output", o->output, "vectors as JSON lines {\"index\", \"id\", \"embedding\"} (default: stdout)");
  cmd->add_option("--prompt-name", o->prompt_name, "a task prompt of the model (config_sentence_transformers.json), e.g. query");
  cmd->add_option("--dimensions", o->dimensions, "keep the first N dimensions (Matryoshka), renormalised");
  cmd->add_option("-t,--threads", o->threads, "threads (default: one per core)");
  cmd->add_option("--batch-tokens", o->batch_tokens, "tokens of one encoder pass (texts packed by length)")->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "the layer matrices at run time: auto (bf16 on AMX CPUs, else f32), f32 (as stored), bf16, f16, q8_0")
      ->check(CLI::IsMember({"auto", "f32", "bf16", "f16", "q8_0"}))
      ->capture_default_str();
  cmd->add_option("--pooling", o->pooling,
                  "pool a decoder GGUF's states: last (Qwen3-Embedding style), mean, cls (default: the file's pooling type)")
      ->check(CLI::IsMember({"last", "mean", "cls"}));
  cmd->add_option("--batch-size", o->batch_size, "texts in one encoder pass at most (0: as many as --batch-tokens holds)");
  cmd->add_option("--max-seq-length", o->max_seq_length,
                  "cut texts to N tokens (default: the model's max_seq_length, else its positions)");
  cmd->add_flag("--json-summary", o->json_summary, "print the run's speed as one JSON line on stderr");
  cmd->add_flag("--no-truncate", o->no_truncate, "refuse texts longer than the model's length instead of cutting them");
  cmd->callback([o] { run_embed(*o); });
}

}  // namespace ridge::cli
