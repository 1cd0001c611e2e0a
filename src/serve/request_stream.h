#pragma once
// The events of one HTTP request (its n choices) on their way from the backend's thread to the
// handler's thread. The backend's callback only locks, appends and notifies, so the engine never
// waits on a slow client; the handler waits on the condition variable with a deadline, so it can
// also notice a closed connection or a timeout.
//
// Shared ownership: each callback holds the stream, so events that arrive after the handler has
// given up (a cancelled request's last Abort event) land in a stream nobody reads, harmlessly.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "serve/completion_backend.h"

namespace ridge {

class RequestStream : public std::enable_shared_from_this<RequestStream> {
 public:
  using Clock = std::chrono::steady_clock;

  struct Event {
    int choice = 0;
    TokenEvent event;
    Clock::time_point at;  // when the backend delivered it (latency metrics use this, not the pop time)
  };

  static std::shared_ptr<RequestStream> create(CompletionBackend& backend, int n_choices);

  // The callback to submit choice `choice` with; then record the id submit() returned.
  EventCallback callback(int choice);
  void set_request_id(int choice, RequestId id);

  // Everything queued so far; waits until `until` when nothing is.
  std::vector<Event> wait(Clock::time_point until);

  // Cancels every choice that has not finished, and any submitted later. Thread-safe (the shutdown
  // path calls it from its own thread); each id is cancelled once. The backend then sends each
  // one's Abort event.
  void cancel();
  bool cancelled() const;

 private:
  RequestStream(CompletionBackend& backend, int n_choices);
  void push(int choice, const TokenEvent& event);
  std::vector<RequestId> take_cancellable();  // under mutex_


  CompletionBackend& backend_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Event> queue_;
  std::vector<RequestId> ids_;  // per choice; 0 until submitted
  std::vector<bool> finished_;  // per choice: its last event has arrived
  std::vector<bool> cancel_sent_;
  bool cancelled_ = false;
};

}  // namespace ridge
