#pragma once
// A scripted CompletionBackend for the server tests: every request "generates" the same pieces,
// one token each, from the fake's own thread with a delay between tokens, as the engine's loop
// thread would. It records what it was asked (options, cancellations) so tests can check them.
//
// Tokens: prompt text is tokenized one byte per token (ids 0..255); generated piece i is token
// 1000 + i. Header-only because the test binary globs only *_test.cc files.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "serve/completion_backend.h"

namespace ridge::testing {

struct FakeConfig {
  std::vector<std::string> pieces = {"Hello", ",", " world", "!"};
  std::chrono::milliseconds token_delay{2};
  int64_t n_ctx = 64;
  size_t max_live = 100000;  // more live requests than this: SubmitError::QueueFull
  std::string model_id = "fake-model";
  std::string tool_format;  // a chat::ToolFormat name: tools are offered in its format
  bool thinking = false;        // a thinking model: <think> tags, output split into reasoning and content
  bool opens_thinking = false;  // ... whose prompt opens the thinking
  bool bos = false;             // tokenize(text, add_special = true) puts a BOS (id 1) first
};

class FakeBackend : public CompletionBackend {
 public:
  using Clock = std::chrono::steady_clock;

  explicit FakeBackend(FakeConfig config = {})
      : config_(std::move(config)), tools_(chat::make_tool_format(config_.tool_format)), thread_([this] { loop(); }) {}
  ~FakeBackend() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  RequestId submit(RequestOptions options, EventCallback on_event) override {
    std::lock_guard lock(mutex_);
    if (live_.size() >= config_.max_live) throw SubmitError(SubmitError::Kind::QueueFull, "fake queue is full");
    if (int64_t(options.prompt.size()) >= config_.n_ctx) throw SubmitError(SubmitError::Kind::ContextExceeded, "too long");
    const RequestId id = next_id_++;
    submitted_.push_back(options);
    live_[id] = Live{std::move(options), std::move(on_event), 0, Clock::now() + config_.token_delay, false};
    wake_.notify_all();
    return id;
  }

  void cancel(RequestId id) override {
    std::lock_guard lock(mutex_);
    auto it = live_.find(id);
    if (it == live_.end()) return;
    it->second.cancelled = true;
    it->second.due = Clock::now();
    ++cancels_;
    wake_.notify_all();
    changed_.notify_all();
  }

  EngineStats stats() const override {
    std::lock_guard lock(mutex_);
    EngineStats s;
    s.running = int64_t(live_.size());
    s.kv_blocks_total = 100;
    s.kv_blocks_used = std::min<int64_t>(100, 2 * s.running);
    s.preemptions = 3;
    s.prefix_query_tokens = 10;
    s.prefix_hit_tokens = 4;
    return s;
  }

  std::vector<int32_t> tokenize(std::string_view text, bool add_special) const override {
    std::vector<int32_t> out(text.begin(), text.end());  // chars as bytes: fine for ASCII tests
    if (add_special && config_.bos) out.insert(out.begin(), 1);
    return out;
  }
  std::string apply_chat_template(std::span<const ChatMessage> messages, const ChatRenderOptions& options) const override {
    std::string out;
    for (const auto& m : messages) out += "<" + m.role + ">" + m.content + "\n";
    out += "<assistant>";
    if (config_.thinking) out += options.enable_thinking == false ? "<think></think>" : config_.opens_thinking ? "<think>" : "";
    return out;
  }
  const chat::ReasoningTags* reasoning_tags() const override { return config_.thinking ? &tags_ : nullptr; }
  const chat::ToolFormat* tool_format() const override { return tools_.get(); }
  std::string apply_tool_template(std::span<const ChatMessage> messages, std::span<const chat::Tool> tools,
                                  const ChatRenderOptions&) const override {
    return tools_->render(messages, tools, {});
  }
  std::string token_piece(int32_t token) const override {
    if (token >= 1000 && token < 1000 + int32_t(config_.pieces.size())) return config_.pieces[size_t(token - 1000)];
    return std::string(1, char(token));
  }
  int32_t n_vocab() const override { return 2000; }
  int64_t n_ctx() const override { return config_.n_ctx; }
  std::string model_id() const override { return config_.model_id; }

  // For assertions.
  std::vector<RequestOptions> submitted() const {
    std::lock_guard lock(mutex_);
    return submitted_;
  }
  int cancels() const {
    std::lock_guard lock(mutex_);
    return cancels_;
  }
  bool wait_for_cancels(int n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return cancels_ >= n; });
  }
  size_t live() const {
    std::lock_guard lock(mutex_);
    return live_.size();
  }

 private:
  struct Live {
    RequestOptions options;
    EventCallback callback;
    size_t generated = 0;
    Clock::time_point due;
    bool cancelled = false;
  };

  // The next event of a request that is due; erases it when that event is its last.
  TokenEvent step(RequestId id, Live& r) {
    TokenEvent e;
    e.id = id;
    e.prompt_tokens = int64_t(r.options.prompt.size());
    if (r.cancelled) {
      e.finish = FinishReason::Abort;
      e.completion_tokens = int64_t(r.generated);
      return e;
    }
    const size_t i = r.generated % config_.pieces.size();  // ignore_eos: the script repeats
    e.has_token = true;
    e.sample.token = 1000 + int32_t(i);
    e.sample.logprob = -0.25f * float(i + 1);
    for (int k = 0; k < r.options.sampling.top_logprobs; ++k) e.sample.top.push_back({1000 + k, -0.1f * float(k + 1)});
    e.text = config_.pieces[i];
    e.completion_tokens = int64_t(++r.generated);
    const bool stop_string = std::find(r.options.stop.begin(), r.options.stop.end(), e.text) != r.options.stop.end();
    if (stop_string) e.stop_string = std::exchange(e.text, {});
    if (stop_string || (!r.options.ignore_eos && i + 1 == config_.pieces.size())) {
      e.finish = FinishReason::Stop;
    } else if (int64_t(r.generated) >= r.options.max_tokens) {
      e.finish = FinishReason::Length;
    }
    r.due = Clock::now() + config_.token_delay;
    return e;
  }

  void loop() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      auto next = Clock::time_point::max();
      for (const auto& [id, r] : live_) next = std::min(next, r.due);
      if (next > Clock::now()) {
        wake_.wait_until(lock, next == Clock::time_point::max() ? Clock::now() + std::chrono::seconds(1) : next);
        continue;
      }
      std::vector<std::pair<EventCallback, TokenEvent>> out;
      const auto now = Clock::now();
      for (auto it = live_.begin(); it != live_.end();) {
        if (it->second.due > now) {
          ++it;
          continue;
        }
        TokenEvent e = step(it->first, it->second);
        out.emplace_back(it->second.callback, e);
        it = e.finish != FinishReason::None ? live_.erase(it) : std::next(it);
      }
      changed_.notify_all();
      lock.unlock();
      for (auto& [callback, event] : out) callback(event);  // outside the lock, as the engine does
      lock.lock();
    }
  }

  FakeConfig config_;
  chat::ReasoningTags tags_;
  std::unique_ptr<chat::ToolFormat> tools_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  mutable std::condition_variable changed_;
  std::map<RequestId, Live> live_;
  std::vector<RequestOptions> submitted_;
  RequestId next_id_ = 1;
  int cancels_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace ridge::testing
