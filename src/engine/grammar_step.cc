#include "engine/grammar_step.h"

#include <chrono>
#include <limits>

namespace ridge {

MaskWorker::MaskWorker() : thread_([this] { loop(); }) {}

MaskWorker::~MaskWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void MaskWorker::start(std::vector<Job> jobs) {
  std::lock_guard lock(mutex_);
  jobs_ = std::move(jobs);
  pending_ = true;
  wake_.notify_one();
}

std::vector<MaskWorker::Job> MaskWorker::wait() {
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return !pending_ && !busy_; });
  return std::move(jobs_);
}

void MaskWorker::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return pending_ || stopping_; });
    if (stopping_) return;
    pending_ = false;
    busy_ = true;
    std::vector<Job> jobs = std::move(jobs_);
    lock.unlock();
    for (Job& job : jobs) {
      const auto t0 = std::chrono::steady_clock::now();
      job.words->resize(job.matcher->grammar().vocab().n_words());
      job.matcher->fill_mask(job.words->data());
      job.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    lock.lock();
    jobs_ = std::move(jobs);
    busy_ = false;
    done_.notify_all();
  }
}

int64_t apply_token_mask(std::span<float> logits, const std::vector<uint64_t>& words) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  int64_t allowed = 0;
  const size_t n = logits.size();
  for (size_t w = 0; w * 64 < n; ++w) {
    const uint64_t bits = w < words.size() ? words[w] : 0;
    const size_t end = std::min(n, w * 64 + 64);
    if (bits == ~uint64_t{0} && end == w * 64 + 64) {
      allowed += 64;
      continue;
    }
    for (size_t t = w * 64; t < end; ++t) {
      if ((bits >> (t & 63)) & 1)
        ++allowed;
      else
        logits[t] = kMasked;
    }
  }
  return allowed;
}

std::vector<int32_t> jump_forward(grammar::GrammarMatcher& matcher, const Tokenizer& tokenizer) {
  const std::string forced = matcher.forced_bytes();
  if (forced.empty()) return {};
  std::vector<int32_t> tokens = tokenizer.encode(forced, /*add_special=*/false, /*parse_special=*/false);
  if (tokens.size() < 2) return {};
  tokens.pop_back();  // the boundary: a longer token may cover the forced text's end and what follows
  size_t accepted = 0;
  while (accepted < tokens.size() && matcher.accept_token(tokens[accepted])) ++accepted;
  tokens.resize(accepted);  // a tokenizer that spells the text otherwise (a space prefix) stops here
  return tokens;
}

}  // namespace ridge
