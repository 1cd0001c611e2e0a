#pragma once
// The decode side of disaggregation: a RemotePrefill that asks a prefill instance over HTTP
// (POST /ridge/kv/prefill: the tokens, this instance's reserved blocks, its transport address and
// pool description) to compute a prompt and put its K/V into those blocks. The transfer is over
// when the instance's note has arrived through the transport and its HTTP reply says so; an
// instance that is down, refuses, or takes longer than the timeout fails the transfer, and the
// engine computes the prompt itself.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/kv_handoff.h"
#include "kv_transfer/transport.h"

namespace ridge::kvx {

struct RemotePrefillOptions {
  std::vector<std::string> endpoints;  // prefill instances, http://host:port, used in turn
  int64_t min_tokens = 64;             // shorter uncached prompts are computed here
  double timeout_s = 60;               // per transfer, from the request to the last byte
  int max_in_flight = 16;              // transfers at once
};

class RemotePrefillClient final : public RemotePrefill {
 public:
  RemotePrefillClient(RemotePrefillOptions options, KvTransport& transport);  // takes the transport's notes
  ~RemotePrefillClient() override;
  // This instance's pool (describe_pool), once the engine has made it; before the first start().
  void set_pool(nlohmann::json pool);
  int64_t min_tokens() const override { return options_.min_tokens; }
  void start(RemotePrefillJob job, std::function<void(RemotePrefillResult)> done) override;
  void cancel(RequestId id) override;

 private:
  struct Job;
  void work();
  RemotePrefillResult run(Job& job);
  bool wait_for_note(const std::string& transfer_id, double seconds);

  RemotePrefillOptions options_;
  KvTransport& transport_;
  nlohmann::json pool_;
  std::string peer_;   // this instance's transport address, base64
  std::string nonce_;  // makes transfer ids unique across restarts of this instance
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::map<RequestId, std::shared_ptr<Job>> jobs_;  // queued or running
  std::set<std::string> notes_;                     // transfer ids whose note has arrived
  size_t next_endpoint_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ridge::kvx
