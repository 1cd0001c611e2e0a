#include "serve/embeddings_route.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "core/error.h"
#include "kv_transfer/transport.h"
#include "serve/random_id.h"
#include "serve/request_fields.h"

namespace ridge {
namespace {

using request_fields::Json;
using request_fields::member;

// More inputs than this in one request are refused: memory stays bounded whatever the body says.
constexpr size_t kMaxInputs = 16384;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void check_model(const EmbeddingService& service, const Json& body) {
  const Json* m = member(body, "model");
  if (!m) return;
  if (!m->is_string()) throw_bad_param("model", "'model' must be a string");
  if (m->get<std::string>() != service.id() && !m->get<std::string>().empty())
    throw ApiError(404, fmt::format("The model '{}' does not exist (the embedding model here is '{}').", m->get<std::string>(),
                                    service.id()),
                   "model", "model_not_found");
}

bool bool_field(const Json& body, const char* name, bool otherwise) {
  const Json* v = member(body, name);
  if (!v) return otherwise;
  if (!v->is_boolean()) throw_bad_param(name, fmt::format("'{}' must be true or false", name));
  return v->get<bool>();
}

// A model Error about one input, as a 400 naming the field and the input.
template <typename F>
EmbeddingInput prepared(const char* field, size_t index, F&& make) {
  try {
    return make();
  } catch (const Error& e) {
    throw_bad_param(field, fmt::format("{}[{}]: {}", field, index, e.what()));
  }
}

std::vector<int32_t> token_ids(const Json& list, const char* field, size_t index) {
  std::vector<int32_t> ids;
  for (const Json& id : list) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int32_t>::max())
      throw_bad_param(field, fmt::format("{}[{}] holds {}, not a token id", field, index, id.dump()));
    ids.push_back(id.get<int32_t>());
  }
  return ids;
}

std::vector<float> run(EmbeddingService& service, std::vector<EmbeddingInput> inputs, const std::function<bool()>& gone,
                       int64_t& tokens) {
  tokens = 0;
  for (const EmbeddingInput& in : inputs) tokens += int64_t(in.ids.size());
  try {
    return service.embed(std::move(inputs), gone);
  } catch (const Error& e) {
    throw ApiError(500, e.what(), {}, {}, "server_error");
  }
}

// The texts of a string-or-list field.
std::vector<std::string> texts_of(const Json& body, const char* field) {
  const Json* v = member(body, field);
  if (!v) throw_bad_param(field, fmt::format("'{}' is required", field));
  std::vector<std::string> out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > kMaxInputs) throw_bad_param(field, fmt::format("'{}' holds {} items; at most {} per request", field, v->size(), kMaxInputs));
    for (const Json& item : *v) {
      if (item.is_string()) out.push_back(item.get<std::string>());
      else if (item.is_object() && member(item, "text") && item["text"].is_string()) out.push_back(item["text"].get<std::string>());
      else throw_bad_param(field, fmt::format("'{}' must hold strings (or {{\"text\": ...}} objects)", field));
    }
  } else {
    throw_bad_param(field, fmt::format("'{}' must be a string or a list of strings", field));
  }
  if (out.empty()) throw_bad_param(field, fmt::format("'{}' is empty", field));
  return out;
}

float cosine(const float* a, const float* b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return aa > 0 && bb > 0 ? float(ab / std::sqrt(aa * bb)) : 0.0f;
}

// The prompt a bi-encoder gives one side of a pair: its "query" / "document" prompt if it has one.
std::string side_prompt(const EmbeddingService& service, const char* name) {
  return service.model().pipeline().prompts.count(name) ? name : "";
}

// Scores of (left[i], right[i]) pairs of texts; tokens counts what was embedded.
std::vector<float> pair_scores(EmbeddingService& service, const std::vector<std::string>& left, const char* left_field,
                               const std::vector<std::string>& right, const char* right_field, bool truncate,
                               const std::function<bool()>& gone, int64_t& tokens) {
  const EmbeddingModel& m = service.model();
  std::vector<EmbeddingInput> inputs;
  const size_t n = std::max(left.size(), right.size());
  if (m.pipeline().cross_encoder) {
    // Each pair through the model at once: its one output is the score.
    if (m.dimensions() != 1)
      throw ApiError(400, fmt::format("'{}' is a classifier of {} labels, not a reranker of one score", service.id(), m.dimensions()));
    for (size_t i = 0; i < n; ++i)
      inputs.push_back(prepared(right_field, i, [&] {
        return m.prepare_pair(left[left.size() == 1 ? 0 : i], right[right.size() == 1 ? 0 : i]);
      }));
    std::vector<float> scores = run(service, std::move(inputs), gone, tokens);
    return scores;
  }
  const std::string qp = side_prompt(service, "query"), dp = side_prompt(service, "document");
  for (size_t i = 0; i < left.size(); ++i)
    inputs.push_back(prepared(left_field, i, [&] { return m.prepare(left[i], qp, truncate); }));
  for (size_t i = 0; i < right.size(); ++i)
    inputs.push_back(prepared(right_field, i, [&] { return m.prepare(right[i], dp, truncate); }));
  const std::vector<float> v = run(service, std::move(inputs), gone, tokens);
  if (v.empty()) return {};
  const int64_t dims = m.dimensions();
  std::vector<float> scores(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t l = left.size() == 1 ? 0 : i, r = left.size() + (right.size() == 1 ? 0 : i);
    scores[i] = cosine(v.data() + l * size_t(dims), v.data() + r * size_t(dims), dims);
  }
  return scores;
}

}  // namespace

std::string embeddings_reply(EmbeddingService& service, std::string_view text, const std::function<bool()>& client_gone) {
  const Json body = request_fields::parse_body(text);
  check_model(service, body);
  const EmbeddingModel& m = service.model();
  if (m.pipeline().cross_encoder)
    throw ApiError(400, fmt::format("'{}' is a cross-encoder: it scores pairs (/v1/rerank, /v1/score), it makes no embeddings",
                                    service.id()),
                   "model", "model_not_supported");
  const bool truncate = bool_field(body, "truncate", false);
  std::string prompt_name;
  if (const Json* p = member(body, "prompt_name")) {
    if (!p->is_string()) throw_bad_param("prompt_name", "'prompt_name' must be a string");
    prompt_name = p->get<std::string>();
    if (!prompt_name.empty() && !m.pipeline().prompts.count(prompt_name)) {
      try {
        (void)m.pipeline().prompt(prompt_name);
      } catch (const Error& e) {
        throw_bad_param("prompt_name", e.what());
      }
    }
  }
  const std::string format = member(body, "encoding_format") && body["encoding_format"].is_string()
                                 ? body["encoding_format"].get<std::string>()
                                 : (member(body, "encoding_format") ? "?" : "float");
  if (format != "float" && format != "base64")
    throw_bad_param("encoding_format", "'encoding_format' must be \"float\" or \"base64\"");
  int64_t dims = m.dimensions();
  if (const Json* d = member(body, "dimensions")) {
    if (!d->is_number_integer() || d->get<int64_t>() < 1 || d->get<int64_t>() > m.dimensions())
      throw_bad_param("dimensions", fmt::format("'dimensions' must be an integer from 1 to {} (this model's length)", m.dimensions()));
    dims = d->get<int64_t>();
  }

  const Json* input = member(body, "input");
  if (!input) throw_bad_param("input", "'input' is required");
  std::vector<EmbeddingInput> inputs;
  const auto add_text = [&](const Json& t, size_t i) {
    if (t.get_ref<const std::string&>().empty()) throw_bad_param("input", fmt::format("input[{}] is an empty string", i));
    inputs.push_back(prepared("input", i, [&] { return m.prepare(t.get<std::string>(), prompt_name, truncate); }));
  };
  const auto add_ids = [&](const Json& list, size_t i) {
    if (list.empty()) throw_bad_param("input", fmt::format("input[{}] is an empty list of tokens", i));
    inputs.push_back(prepared("input", i, [&] { return m.prepare_ids(token_ids(list, "input", i), truncate); }));
  };
  if (input->is_string()) {
    add_text(*input, 0);
  } else if (input->is_array() && !input->empty() && input->front().is_number_integer()) {
    add_ids(*input, 0);  // one text as token ids
  } else if (input->is_array()) {
    if (input->empty()) throw_bad_param("input", "'input' is an empty list");
    if (input->size() > kMaxInputs)
      throw_bad_param("input", fmt::format("'input' holds {} items; at most {} per request", input->size(), kMaxInputs));
    for (size_t i = 0; i < input->size(); ++i) {
      const Json& item = (*input)[i];
      if (item.is_string()) add_text(item, i);
      else if (item.is_array()) add_ids(item, i);
      else throw_bad_param("input", fmt::format("input[{}] must be a string or a list of token ids", i));
    }
  } else {
    throw_bad_param("input", "'input' must be a string, a list of strings, or token ids");
  }

  int64_t tokens = 0;
  const std::vector<float> v = run(service, std::move(inputs), client_gone, tokens);
  if (v.empty()) return {};
  const size_t n = v.size() / size_t(m.dimensions());
  Json data = Json::array();
  for (size_t i = 0; i < n; ++i) {
    std::span<const float> full(v.data() + i * size_t(m.dimensions()), size_t(m.dimensions()));
    const std::vector<float> e = dims == m.dimensions() ? std::vector<float>(full.begin(), full.end())
                                                        : truncate_dimensions(full, dims, m.pipeline().normalize);
    Json item{{"object", "embedding"}, {"index", i}};
    if (format == "base64") {
      std::string bytes(e.size() * 4, '\0');
      std::memcpy(bytes.data(), e.data(), bytes.size());  // little-endian f32, as numpy's frombuffer reads it
      item["embedding"] = kvx::base64_encode(bytes);
    } else {
      item["embedding"] = e;
    }
    data.push_back(std::move(item));
  }
  return dump(Json{{"object", "list"}, {"data", std::move(data)}, {"model", service.id()},
                   {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
}

std::string rerank_reply(EmbeddingService& service, std::string_view text, const std::function<bool()>& client_gone) {
  const Json body = request_fields::parse_body(text);
  check_model(service, body);
  const std::string query = request_fields::string_field(body, "query", "query");
  const std::vector<std::string> documents = texts_of(body, "documents");
  int64_t top_n = int64_t(documents.size());
  if (const Json* t = member(body, "top_n")) {
    if (!t->is_number_integer() || t->get<int64_t>() < 1) throw_bad_param("top_n", "'top_n' must be a positive integer");
    top_n = std::min<int64_t>(top_n, t->get<int64_t>());
  }
  const bool return_documents = bool_field(body, "return_documents", true);
  int64_t tokens = 0;
  const std::vector<float> scores =
      pair_scores(service, {query}, "query", documents, "documents", bool_field(body, "truncate", true), client_gone, tokens);
  if (scores.empty()) return {};
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  Json results = Json::array();
  for (int64_t k = 0; k < top_n; ++k) {
    const size_t i = order[size_t(k)];
    Json r{{"index", i}, {"relevance_score", scores[i]}};
    if (return_documents) r["document"] = Json{{"text", documents[i]}};
    results.push_back(std::move(r));
  }
  return dump(Json{{"id", random_id("rerank-")}, {"model", service.id()}, {"usage", {{"total_tokens", tokens}}},
                   {"results", std::move(results)}});
}

std::string score_reply(EmbeddingService& service, std::string_view text, const std::function<bool()>& client_gone) {
  const Json body = request_fields::parse_body(text);
  check_model(service, body);
  const std::vector<std::string> a = texts_of(body, "text_1"), b = texts_of(body, "text_2");
  if (a.size() != 1 && a.size() != b.size())
    throw_bad_param("text_2", fmt::format("'text_1' has {} items and 'text_2' {}: give one text_1, or as many as text_2", a.size(), b.size()));
  int64_t tokens = 0;
  const std::vector<float> scores =
      pair_scores(service, a, "text_1", b, "text_2", bool_field(body, "truncate", true), client_gone, tokens);
  if (scores.empty()) return {};
  Json data = Json::array();
  for (size_t i = 0; i < scores.size(); ++i) data.push_back(Json{{"index", i}, {"object", "score"}, {"score", scores[i]}});
  return dump(Json{{"id", random_id("score-")}, {"object", "list"}, {"created", now_s()}, {"model", service.id()},
                   {"data", std::move(data)}, {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
}

std::string embedding_metrics(const EmbeddingService& service) {
  const EmbeddingStats st = service.stats();
  std::string out;
  const auto counter = [&](const char* name, const char* help, double value) {
    out += fmt::format("# HELP ridge:{} {}\n# TYPE ridge:{} counter\nridge:{}{{model_name=\"{}\"}} {}\n", name, help, name, name,
                       service.id(), value);
  };
  counter("embedding_requests_total", "Requests answered by the embedding model.", double(st.requests));
  counter("embedding_inputs_total", "Texts and pairs embedded or scored.", double(st.inputs));
  counter("embedding_tokens_total", "Tokens through the embedding model.", double(st.tokens));
  counter("embedding_passes_total", "Encoder passes run (texts packed together).", double(st.passes));
  counter("embedding_busy_seconds_total", "Seconds the embedding model's worker computed.", st.busy_seconds);
  return out;
}

}  // namespace ridge
