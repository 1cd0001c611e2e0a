#pragma once
// What a step does for requests under a grammar: their token masks, computed on a worker thread
// while the forward pass runs (a mask depends only on the tokens accepted so far); the mask applied
// to the logits before sampling, so log-probabilities are those of the constrained distribution; and
// jump-forward: the bytes the grammar forces next, tokenized as the model's tokenizer would, the
// last token held back so a longer token can still cover the boundary.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"

namespace ridge {

// One background thread running batches of mask jobs.
class MaskWorker {
 public:
  struct Job {
    grammar::GrammarMatcher* matcher;
    std::vector<uint64_t>* words;  // resized to the vocabulary's words
    double seconds = 0;            // time this mask took
  };
  MaskWorker();
  ~MaskWorker();
  void start(std::vector<Job> jobs);  // returns at once
  std::vector<Job> wait();            // the finished jobs, with their times

 private:
  void loop();
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<Job> jobs_;
  bool pending_ = false, busy_ = false, stopping_ = false;
  std::thread thread_;
};

// Sets every token outside the mask to -inf; returns how many tokens stay allowed.
int64_t apply_token_mask(std::span<float> logits, const std::vector<uint64_t>& words);

// The tokens to append without running the model, already accepted by the matcher (empty when the
// grammar leaves a choice next, or the forced text is one token).
std::vector<int32_t> jump_forward(grammar::GrammarMatcher& matcher, const Tokenizer& tokenizer);

}  // namespace ridge
