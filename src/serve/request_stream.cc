#include "serve/request_stream.h"

namespace ridge {

std::shared_ptr<RequestStream> RequestStream::create(CompletionBackend& backend, int n_choices) {
  return std::shared_ptr<RequestStream>(new RequestStream(backend, n_choices));
}

RequestStream::RequestStream(CompletionBackend& backend, int n_choices)
    : backend_(backend), ids_(size_t(n_choices), 0), finished_(size_t(n_choices), false),
      cancel_sent_(size_t(n_choices), false) {}

EventCallback RequestStream::callback(int choice) {
  return [self = shared_from_this(), choice](const TokenEvent& event) { self->push(choice, event); };
}

void RequestStream::set_request_id(int choice, RequestId id) {
  std::vector<RequestId> to_cancel;
  {
    std::lock_guard lock(mutex_);
    ids_[size_t(choice)] = id;
    if (cancelled_) to_cancel = take_cancellable();
  }
  for (RequestId r : to_cancel) backend_.cancel(r);
}

void RequestStream::push(int choice, const TokenEvent& event) {
  const auto now = Clock::now();
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({choice, event, now});
    if (event.finish != FinishReason::None) finished_[size_t(choice)] = true;
  }
  ready_.notify_one();
}

std::vector<RequestStream::Event> RequestStream::wait(Clock::time_point until) {
  std::unique_lock lock(mutex_);
  ready_.wait_until(lock, until, [this] { return !queue_.empty(); });
  std::vector<Event> events;
  events.swap(queue_);
  return events;
}

std::vector<RequestId> RequestStream::take_cancellable() {
  std::vector<RequestId> ids;
  for (size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] == 0 || finished_[i] || cancel_sent_[i]) continue;
    cancel_sent_[i] = true;
    ids.push_back(ids_[i]);
  }
  return ids;
}

void RequestStream::cancel() {
  std::vector<RequestId> to_cancel;
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    to_cancel = take_cancellable();
  }
  // Outside the lock: a backend may deliver the Abort event from inside cancel().
  for (RequestId id : to_cancel) backend_.cancel(id);
}

bool RequestStream::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

}  // namespace ridge
