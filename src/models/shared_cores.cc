#include "models/shared_cores.h"

#include <algorithm>
#include <limits>

namespace ridge::models {

using Clock = std::chrono::steady_clock;

constexpr double kSlicesPerStep = 4;

struct MemberStats {
  std::string name;
  Clock::time_point turn_start{};  // when its current turn began
  double seconds_per_prompt_token = 0;  // moving average over steps that were mostly prompt
  double decode_step_seconds = 0;       // moving average over steps with decodes
  Clock::time_point last_decode{};
};

struct SharedCores::State {
  explicit State(Options o) : options(o) {}
  Options options;
  mutable std::mutex mutex;
  std::condition_variable turn_changed;
  uint64_t next_ticket = 0;
  uint64_t serving = 0;
  int waiting_decoders = 0;  // members in the queue that decode
  int64_t yields = 0;
  int64_t turns = 0;
  int64_t contended = 0;
  std::list<MemberStats> members;

  // How long after its last decode step a member still counts as decoding.
  Clock::duration window(const MemberStats& m) const {
    return std::max<Clock::duration>(options.decoding_window,
                                     std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(4 * m.decode_step_seconds)));
  }

  // The shortest decode step of the members other than `self` that decode now (0: none).
  double tightest_decode_step(const MemberStats& self) const {
    const auto now = Clock::now();
    double tightest = 0;
    for (const MemberStats& m : members) {
      if (&m == &self || m.decode_step_seconds <= 0 || now - m.last_decode > window(m)) continue;
      if (tightest == 0 || m.decode_step_seconds < tightest) tightest = m.decode_step_seconds;
    }
    return tightest;
  }

  // The prompt tokens `self` may run while another member decodes (0: nobody else decodes).
  int64_t cap_for(const MemberStats& self) const {
    const double tightest = tightest_decode_step(self);
    if (tightest == 0) return 0;
    if (self.seconds_per_prompt_token <= 0) return options.min_prefill_tokens * 2;  // not measured yet
    // A prompt step gives the cores back between layers once it has held them for its share
    // (yield_to_decoders), so its chunk may hold several shares' worth.
    const double tokens = kSlicesPerStep * options.itl_share * tightest / self.seconds_per_prompt_token;
    return std::max<int64_t>(options.min_prefill_tokens, static_cast<int64_t>(tokens));
  }
};

class SharedCores::Member : public StepGate {
 public:
  Member(std::shared_ptr<State> state, std::list<MemberStats>::iterator self) : state_(std::move(state)), self_(self) {}
  ~Member() override {
    std::lock_guard lock(state_->mutex);
    state_->members.erase(self_);
  }

  void enter() override {
    std::unique_lock lock(state_->mutex);
    const uint64_t ticket = state_->next_ticket++;
    ++state_->turns;
    if (state_->serving != ticket) ++state_->contended;
    // A member that decoded within its window counts as a decoder while it waits.
    const bool decoder = self_->decode_step_seconds > 0 && Clock::now() - self_->last_decode < state_->window(*self_);
    if (decoder) ++state_->waiting_decoders;
    state_->turn_changed.wait(lock, [&] { return state_->serving == ticket; });
    if (decoder) --state_->waiting_decoders;
    self_->turn_start = Clock::now();
  }

  void yield_to_decoders() override {
    {
      std::lock_guard lock(state_->mutex);
      if (state_->waiting_decoders == 0) return;
      // Only once this turn has had its share of a decoder's step: the decoder's inter-token
      // latency grows by about itl_share, and the prompt still moves.
      const double held = std::chrono::duration<double>(Clock::now() - self_->turn_start).count();
      if (held < state_->options.itl_share * state_->tightest_decode_step(*self_)) return;
      ++state_->yields;
      ++state_->serving;  // our turn ends here
    }
    state_->turn_changed.notify_all();
    enter();  // behind the decoder, back once its step is done
  }



  void leave(const StepReport& r) override {
    {
      std::lock_guard lock(state_->mutex);
      MemberStats& m = *self_;
      constexpr double kWeight = 0.25;  // moving averages: recent steps count most
      const auto mix = [](double& avg, double x) { avg = avg <= 0 ? x : (1 - kWeight) * avg + kWeight * x; };
      const int64_t prompt = r.n_tokens - r.n_decode_tokens;
      if (r.n_decode_tokens > 0) {
        m.last_decode = Clock::now();
        if (prompt <= r.n_decode_tokens) mix(m.decode_step_seconds, r.seconds);
      }
      // A step's time per position, from steps that were mostly prompt (decodes cost the same
      // weights read for far fewer positions, so they would overstate it).
      if (prompt >= 8 && prompt >= 4 * r.n_decode_tokens && r.n_tokens > 0) mix(m.seconds_per_prompt_token, r.seconds / double(r.n_tokens));
      ++state_->serving;
    }
    state_->turn_changed.notify_all();
  }

  int64_t prefill_cap() const override {
    std::lock_guard lock(state_->mutex);
    return state_->cap_for(*self_);
  }

 private:
  std::shared_ptr<State> state_;
  std::list<MemberStats>::iterator self_;
};

SharedCores::SharedCores(Options options) : state_(std::make_shared<State>(options)) {}
SharedCores::~SharedCores() = default;

std::shared_ptr<StepGate> SharedCores::join(std::string name) {
  std::lock_guard lock(state_->mutex);
  state_->members.push_back(MemberStats{std::move(name)});
  return std::make_shared<Member>(state_, std::prev(state_->members.end()));
}

int64_t SharedCores::turns() const {
  std::lock_guard lock(state_->mutex);
  return state_->turns;
}

int64_t SharedCores::yields() const {
  std::lock_guard lock(state_->mutex);
  return state_->yields;
}

int64_t SharedCores::contended_turns() const {
  std::lock_guard lock(state_->mutex);
  return state_->contended;
}

}  // namespace ridge::models
