#include "slo/slo_governor.h"

#include <algorithm>

namespace ridge::slo {

SloGovernor::SloGovernor(std::shared_ptr<StepModel> model, const GovernorConfig& config)
    : model_(std::move(model)), config_(config) {}

bool SloGovernor::on_step(int64_t preemptions, int64_t running) {
  if (!config_.preemption_guard) return false;
  window_.push_back(preemptions);
  in_window_ += preemptions;
  if (int32_t(window_.size()) > config_.window_steps) in_window_ -= window_.front(), window_.pop_front();
  calm_steps_ = preemptions > 0 ? 0 : calm_steps_ + 1;
  if (in_window_ >= config_.cascade_preemptions) {
    // Lower the cap a quarter below what runs now (at least one), and start the window afresh so
    // the next cut waits for new evidence.
    window_.clear();
    in_window_ = 0;
    if (cap_ == 1) return false;  // as low as it goes
    const int64_t base = cap_ > 0 ? std::min<int64_t>(cap_, running) : running;
    cap_ = int32_t(std::max<int64_t>(1, base - std::max<int64_t>(1, base / 4)));
    ++cascades_;
    return true;
  }
  if (cap_ > 0 && calm_steps_ >= config_.recovery_steps) {
    calm_steps_ = 0;
    cap_ = cap_ + 1 >= config_.max_num_seqs ? 0 : cap_ + 1;
    return true;
  }
  return false;
}

GovernorStats SloGovernor::stats() const {
  GovernorStats s;
  s.running_cap = cap_;
  s.cascades = cascades_;
  s.preemptions_in_window = in_window_;
  s.step_bound_s = config_.step_bound_s;
  s.decode_bound_s = config_.decode_bound_s;
  return s;
}

}  // namespace ridge::slo
