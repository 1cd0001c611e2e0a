#pragma once
// When to speculate and how far, from this machine's measured step cost and each request's measured
// acceptance -- so speculation pays where decode is bandwidth-bound (a verify step of a few more
// tokens costs about what one token costs) and turns itself off where the step is compute-bound
// (large batches), instead of a user-written batch-size table.
//
// Cost: the step time T(n, r) of n tokens of which r give logits, fitted online as t0 + t1 n + t2 r
// over recent steps (every step, prefill chunks included, is a point). A draft token is a token and
// a logits row (the head and the sampler run on it), which a prefill token is not: with one slope
// fitted through both, the prefill steps priced a draft token at a body's cost alone, and on a small
// model with a large vocabulary (the head a fifth of its weights) auto drafted at 64 requests where
// it no longer paid. Gain: a draft token at position i of a request is kept with probability
// P(i) = a(1) ... a(i), the request's running acceptance rates per position. A draft token is added
// while its expected tokens per second beat the step's average rate:
// P(i) / (T(n + 1) - T(n)) > E / T(n), with E the tokens the step is expected to yield so far.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace ridge::spec {

// T(n, r) = t0 + t1 n + t2 r by least squares (non-negative) over the last `window` steps.
class StepCostModel {
 public:
  explicit StepCostModel(size_t window = 256) : window_(window) {}
  void observe(int64_t n_tokens, int64_t n_logit_rows, double seconds);
  void observe(int64_t n_tokens, double seconds) { observe(n_tokens, n_tokens, seconds); }  // a decode-like step
  // Seconds for a step of n tokens, r of them with logits (a decode or verify step: r = n). Before
  // the points spread over at least two sizes, the slope is a prior: one token in 32 of a one-token
  // step (bandwidth-bound decode), refined as steps come.
  double predict(int64_t n_tokens, int64_t n_logit_rows) const;
  double predict(int64_t n_tokens) const { return predict(n_tokens, n_tokens); }
  double slope() const;      // t1 + t2: one more decoded (or verified) token
  double intercept() const;  // t0

 private:
  void fit() const;
  size_t window_;
  struct Point {
    double n, r, t;
  };
  std::deque<Point> points_;
  mutable bool fitted_ = false;
  mutable double t0_ = 0, t1_ = 0, t2_ = 0;
};

// One request's acceptance per draft position, with a prior of two pseudo-drafts per position: at
// the prior's rate where it saw that position (the engine passes what all requests so far have
// kept, so a new request starts from the workload's acceptance, not from a guess it must first
// disprove), else at this request's own rate one position earlier (1/2 at position 0 with no
// prior). A position never tried thus looks like the one before it, not like a coin: with a fixed
// 1/2 there, a policy that drafted one token never learned that a second would have been kept.
class AcceptanceStats {
 public:
  explicit AcceptanceStats(int32_t max_positions, const AcceptanceStats* prior = nullptr);
  void record(int32_t proposed, int32_t accepted);  // one verify step of this request
  double rate(int32_t position) const;              // P(kept | the positions before were kept), position >= 0
  bool observed(int32_t position) const;            // some verify tried this position

 private:
  std::vector<double> proposed_, accepted_;  // this request's own counts
  std::vector<double> prior_;                // per position, < 0: none (chain from the position before)
};

// Whether speculating pays at this load, measured rather than modelled: in `auto`, windows of steps
// with speculation allowed alternate with windows without it, per load (decoding requests, bucketed
// by powers of two), and the faster by tokens per second is kept, the other re-tried now and then.
// The cost model above chooses how far to draft; this catches what it cannot see -- a draft model's
// catch-up prefill of every new prompt, kernels that turn compute-bound within a few tokens, outputs
// whose acceptance differs from the running estimate -- so `auto` is never much slower than off.
class SpeculationSwitch {
 public:
  // window: steps per measurement; explore_every: after this many windows the losing arm is
  // re-tried, and after twice as many (up to 16x) each time a re-try confirms it loses (a draft
  // model's re-try pays the catch-up of every token decoded while it was off: backing off keeps
  // that cost small).
  explicit SpeculationSwitch(int32_t window = 16, int32_t explore_every = 32)
      : window_(window), explore_every_(explore_every) {}
  bool allowed(int64_t decoding);  // for the step about to run with this many decoding requests
  // After that step, when it only decoded: tokens it gave the requests, its seconds (drafting included).
  void observe(int64_t decoding, int64_t tokens, double seconds);
  double rate(int64_t decoding, bool on) const;  // measured tokens/s of an arm, < 0 before any

 private:
  struct Arm {
    double rate = -1;  // tokens/s, a running mean over windows
  };
  struct Bucket {
    Arm on, off;
    bool current_on = true;
    bool exploring = false;
    int32_t steps = 0, since_explore = 0, interval = 0;
    double tokens = 0, seconds = 0;
  };
  static int bucket_of(int64_t decoding);
  int32_t window_, explore_every_;
  std::vector<Bucket> buckets_ = std::vector<Bucket>(32);
};

struct DraftCandidate {
  int32_t max_tokens = 0;               // the proposer's draft length for this request
  const AcceptanceStats* stats = nullptr;
};

// How many draft tokens each candidate gets this step (0: decode plainly). `other_tokens`: the
// other decodes of the step (each yields a token too).
std::vector<int32_t> choose_draft_lengths(const std::vector<DraftCandidate>& candidates, int64_t other_tokens,
                                          const StepCostModel& cost);

// With a draft model every speculating request drafts the same k this step (the draft runs one
// batched pass per position): the k in 0..max_k whose expected tokens per second is highest, with
// `draft_pass_seconds` the measured time of one draft pass over these requests.
int32_t choose_uniform_draft_length(const std::vector<const AcceptanceStats*>& requests, int64_t other_decodes,
                                    const StepCostModel& cost, double draft_pass_seconds, int32_t max_k);

}  // namespace ridge::spec
