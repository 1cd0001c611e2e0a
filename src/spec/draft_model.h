#pragma once
// A draft model: a smaller model with the target's vocabulary that proposes each speculating
// request's next tokens, run by the same forward-pass code over its own paged KV (no prefix
// caching). Before a target step the engine asks it for k tokens per request; it first brings its
// KV up to the request's tokens (what it computed for tokens the target has since rejected is cut
// off), then decodes k tokens for all requests together, one batched pass per position.
//
// The draft's head may be cut to the first `vocab_rows` tokens of the vocabulary (BPE ids run
// roughly by merge order, so the first ids are the frequent ones): a 152K-token head is a third of
// a 0.5B draft's bytes. The target still verifies against its whole vocabulary, so greedy output is
// unchanged, and at temperature > 0 q is the distribution the draft really drew from (zero past
// the cut), which keeps the rejection sampling exact; only acceptance can drop, where the target
// picks tokens past the cut.
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "backend/paged_forward.h"
#include "engine/sampler.h"
#include "engine/step_plan.h"
#include "kv/kv_manager.h"

namespace ridge::spec {

struct DraftRequest {
  RequestId id = 0;
  std::span<const int32_t> tokens;  // prompt and output so far (the last one not yet computed)
  int32_t k = 0;                    // draft tokens wanted
  Sampler* sampler = nullptr;       // the request's draft sampler (its params, its own seed)
  bool want_distributions = false;  // keep q for each draft token (sampling at temperature > 0)
  // Stop after a draft token the draft itself gives less than this probability (llama.cpp's
  // --draft-p-min): the tokens after an unsure one are the likeliest to be rejected, so their passes
  // are saved. q when sampling, else the softmax of the draft's logits. 0: always k.
  float p_min = 0.0f;
};

struct DraftProposal {
  std::vector<int32_t> tokens;             // up to k (fewer when the draft KV is full)
  std::vector<std::vector<float>> q;       // per token, when asked
};

class DraftModel {
 public:
  // vocab_rows: 0 or >= the vocabulary for the whole head; else rounded up to a tile of rows.
  DraftModel(const Model& model, const PagedForwardConfig& config, int64_t vocab_rows = 0);

  std::vector<DraftProposal> propose(std::span<const DraftRequest> requests);
  void release(RequestId id);  // the request finished or was cancelled
  int64_t n_vocab() const { return forward_->spec().n_vocab; }
  int64_t head_rows() const { return model_.weights.output.rows; }  // the tokens the draft can propose
  // Measured seconds of one decode pass (every request fed one token), a running mean; 0 before the
  // first. Catch-up passes (a prompt's first draft computes the whole prompt) are not counted: they
  // are paid once, and counting them once made a policy believe every pass costs a prefill.
  double pass_seconds() const { return pass_seconds_; }

 private:
  struct Seq {
    std::vector<int32_t> computed;  // the tokens whose K/V the draft holds, in order
  };
  Model model_;  // the draft's views, its head maybe cut (the bytes stay the caller's)
  std::unique_ptr<PagedForward> forward_;
  KvManager kv_;
  std::unordered_map<RequestId, Seq> seqs_;
  std::vector<float> logits_;
  double pass_seconds_ = 0;
};

}  // namespace ridge::spec
