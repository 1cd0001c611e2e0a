// OpenAI's completions and chat completions: bodies and chunks (openai_response.h), "data: [DONE]".
#include "serve/response_writer.h"
#include "serve/sse.h"

namespace ridge {
namespace {

class OpenaiWriter : public ResponseWriter {
 public:
  OpenaiWriter(const OpenaiRequest& request, const std::string& model)
      : header_(make_response_header(request.endpoint, model)), n_(request.n), include_usage_(request.include_usage) {}

  nlohmann::json body(const std::vector<ChoicePart>& choices, const Usage& usage) override {
    return response_json(header_, choices, usage);
  }

  std::string stream_open(const Usage&) override {
    std::string out;
    if (header_.endpoint != Endpoint::ChatCompletions) return out;
    for (int i = 0; i < n_; ++i) {  // OpenAI opens each choice with its role
      ChoicePart opening;
      opening.index = i;
      opening.role = true;
      out += sse_event(chunk_json(header_, opening, include_usage_));
    }
    return out;
  }

  std::string stream_part(const ChoicePart& part) override { return sse_event(chunk_json(header_, part, include_usage_)); }

  std::string stream_close(const Usage& usage) override {
    std::string out;
    if (include_usage_) out += sse_event(usage_chunk_json(header_, usage));
    return out + sse_done();
  }

  std::string stream_error(const ApiError& error) override { return sse_event(error_json(error)) + sse_done(); }

 private:
  ResponseHeader header_;
  int n_;
  bool include_usage_;
};

}  // namespace

std::unique_ptr<ResponseWriter> make_openai_writer(const OpenaiRequest& request, const std::string& model) {
  return std::make_unique<OpenaiWriter>(request, model);
}

std::unique_ptr<ResponseWriter> make_response_writer(const OpenaiRequest& request, const std::string& model) {
  switch (request.api) {
    case Api::kAnthropic: return make_anthropic_writer(request, model);
    case Api::kResponses: return make_responses_writer(request, model);
    case Api::kOpenai: break;
  }
  return make_openai_writer(request, model);
}

nlohmann::json error_body(Api api, const ApiError& error) {
  return api == Api::kAnthropic ? anthropic_error_json(error) : error_json(error);
}

}  // namespace ridge
