#include "embed/embedding_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "kernels/cpu/bf16_gemm.h"
#include "model/gguf/gguf_file.h"

namespace ridge {
namespace {

namespace fs = std::filesystem;

bool is_gguf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string_view(magic, 4) == "GGUF";
}

// A GGUF's general.architecture ("" when it cannot be read) and whether it names a pooling type
// (<arch>.pooling_type: a decoder converted for embeddings), from one read of its header.
struct GgufKind {
  std::string arch;
  bool has_pooling = false;
};
GgufKind gguf_kind(const std::string& path) {
  try {
    const gguf::GgufFile file = gguf::GgufFile::open(path);
    GgufKind kind{file.get_string("general.architecture").value_or(""), false};
    kind.has_pooling = file.get_int(kind.arch + ".pooling_type").has_value();
    return kind;
  } catch (const Error&) {
    return {};
  }
}

// config.json's model_type, or "" without one.
std::string config_model_type(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "config.json");
  if (!in) return "";
  const auto config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return config.is_object() ? config.value("model_type", "") : "";
}

}  // namespace

bool EmbeddingModel::is_embedding_model(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "modules.json", ec)) return true;
    return config_model_type(path) == "bert";
  }
  if (!is_gguf(path)) return false;
  const GgufKind kind = gguf_kind(path);
  return kind.arch == "bert" || kind.has_pooling;
}

std::string resolve_embedding_dtype(const std::string& dtype) {
  if (dtype != "auto") return dtype;
  return cpu::amx_bf16_usable() ? "bf16" : "f32";
}

std::unique_ptr<EmbeddingModel> EmbeddingModel::load(const std::string& path, int n_threads, const std::string& dtype,
                                                     const std::string& pooling) {
  std::string chosen = resolve_embedding_dtype(dtype);
  std::error_code ec;
  EncoderParts parts;
  if (fs::is_directory(path, ec)) {
    parts = config_model_type(path) == "gemma3_text" ? load_gemma_family(path, n_threads, chosen)
                                                     : load_bert_family(path, n_threads, chosen);
  } else if (gguf_kind(path).arch != "bert") {
    parts = load_decoder_family(path, n_threads, pooling);
    chosen = "as stored";
  } else {
    parts = load_bert_family(path, n_threads, chosen);
  }
  return std::unique_ptr<EmbeddingModel>(new EmbeddingModel(std::move(parts), chosen));
}

int64_t EmbeddingModel::max_tokens() const {
  const int64_t positions = shape().n_positions;
  return pipeline().max_seq_length > 0 ? std::min(pipeline().max_seq_length, positions) : positions;
}

void EmbeddingModel::set_max_tokens(int64_t n) {
  if (n < 2 || n > shape().n_positions) fail("a maximum length of {} tokens is outside 2..{}", n, shape().n_positions);
  parts_.pipeline.max_seq_length = n;
}

EmbeddingInput EmbeddingModel::prepare(std::string_view text, const std::string& prompt_name, bool truncate) const {
  const std::string& name = prompt_name.empty() ? parts_.pipeline.default_prompt_name : prompt_name;
  std::string full;
  EmbeddingInput in;
  if (!name.empty()) {
    const std::string& prompt = parts_.pipeline.prompt(name);
    full = prompt;
    // sentence-transformers: the prompt's own tokens less its closing [SEP].
    if (!parts_.pipeline.include_prompt) in.skip = int64_t(parts_.tokenizer->encode(prompt, true).size()) - 1;
  }
  full += text;
  in.ids = parts_.tokenizer->encode(full, /*add_special=*/true);
  if (int64_t(in.ids.size()) > max_tokens()) {
    if (!truncate)
      fail("the input is {} tokens, more than the model's {} (set \"truncate\" to cut it)", in.ids.size(), max_tokens());
    in.ids = parts_.tokenizer->encode(full, true, max_tokens());
  }
  return in;
}

EmbeddingInput EmbeddingModel::prepare_ids(std::vector<int32_t> ids, bool truncate) const {
  for (int32_t id : ids)
    if (id < 0 || id >= shape().n_vocab) fail("token id {} is outside the vocabulary of {}", id, shape().n_vocab);
  if (ids.empty()) fail("an input of no tokens");
  if (int64_t(ids.size()) > max_tokens()) {
    if (!truncate) fail("the input is {} tokens, more than the model's {}", ids.size(), max_tokens());
    ids.resize(size_t(max_tokens()));
  }
  return EmbeddingInput{std::move(ids), {}, 0};
}

EmbeddingInput EmbeddingModel::prepare_pair(std::string_view query, std::string_view document) const {
  EmbeddingInput in;
  parts_.tokenizer->encode_pair(query, document, max_tokens(), in.ids, in.types);
  return in;
}

void EmbeddingModel::embed(std::span<const EmbeddingInput> inputs, std::vector<float>& out,
                           const std::function<void(int64_t done)>& progress) {
  const int64_t n_embd = shape().n_embd;
  const int64_t dims = dimensions();
  out.assign(inputs.size() * size_t(dims), 0.0f);
  // Longest first, so each pass holds texts of similar length and the attention's work is even.
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a].ids.size() > inputs[b].ids.size(); });
  std::vector<float> pooled(static_cast<size_t>(n_embd));
  int64_t done = 0;
  for (size_t first = 0; first < order.size();) {
    EncoderBatch batch;
    size_t last = first;
    const bool typed = std::any_of(order.begin() + long(first), order.end(), [&](size_t i) { return !inputs[i].types.empty(); });
    std::vector<int32_t> zeros;
    while (last < order.size() && (last == first || ((max_batch_texts <= 0 || int64_t(last - first) < max_batch_texts) &&
                                                     int64_t(batch.tokens.size() + inputs[order[last]].ids.size()) <= max_batch_tokens))) {
      const EmbeddingInput& in = inputs[order[last]];
      if (in.ids.empty()) fail("an input of no tokens");
      if (typed && in.types.empty()) zeros.assign(in.ids.size(), 0);
      batch.add(in.ids, typed ? (in.types.empty() ? &zeros : &in.types) : nullptr);
      ++last;
    }
    parts_.encoder->forward(batch, hidden_);
    for (size_t j = first; j < last; ++j) {
      const size_t i = order[j];
      const int64_t b = batch.begin[j - first], n = batch.begin[j - first + 1] - b;
      pool_tokens(hidden_.data() + b * n_embd, n, n_embd, parts_.pipeline.pooling, inputs[i].skip, pooled.data());
      std::vector<float> v = pooled;
      for (const DenseLayer& d : parts_.pipeline.dense) v = d.apply(v);
      if (parts_.pipeline.normalize) l2_normalize(v);
      std::copy(v.begin(), v.end(), out.begin() + long(i * size_t(dims)));
    }
    done += int64_t(last - first);
    if (progress) progress(done);
    first = last;
  }
}

std::vector<float> truncate_dimensions(std::span<const float> v, int64_t dims, bool normalize) {
  if (dims <= 0 || dims > int64_t(v.size()))
    fail("dimensions {} is outside 1..{} (the model's vector length)", dims, v.size());
  std::vector<float> out(v.begin(), v.begin() + dims);
  if (normalize) l2_normalize(out);
  return out;
}

}  // namespace ridge
