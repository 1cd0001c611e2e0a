#include "kv_transfer/remote_prefill_client.h"

#include <chrono>
#include <random>

#include <fmt/format.h>
#include <httplib.h>

#include "core/error.h"
#include "kv_transfer/kv_sender.h"

namespace ridge::kvx {

using Clock = std::chrono::steady_clock;

struct RemotePrefillClient::Job {
  RemotePrefillJob job;
  std::function<void(RemotePrefillResult)> done;
  bool cancelled = false;            // under the client's mutex
  httplib::Client* client = nullptr;  // while its request is in flight
};

RemotePrefillClient::RemotePrefillClient(RemotePrefillOptions options, KvTransport& transport)
    : options_(std::move(options)), transport_(transport) {
  if (options_.endpoints.empty()) fail("a decode instance needs a prefill instance (--prefill-endpoint URL)");
  nonce_ = fmt::format("{:08x}", std::random_device{}());
  transport_.on_note([this](const std::string& note) {
    const std::string id = note_transfer_id(note);
    if (id.empty()) return;
    std::lock_guard lock(mutex_);
    notes_.insert(id);
    cv_.notify_all();
  });
  for (int i = 0; i < std::max(1, options_.max_in_flight); ++i) workers_.emplace_back([this] { work(); });
}

RemotePrefillClient::~RemotePrefillClient() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, job] : jobs_) {
      job->cancelled = true;
      if (job->client) job->client->stop();
    }
    cv_.notify_all();
  }
  for (std::thread& t : workers_) t.join();
}

void RemotePrefillClient::set_pool(nlohmann::json pool) {
  pool_ = std::move(pool);
  peer_ = base64_encode(transport_.address());  // here, once: the workers only read it
}

void RemotePrefillClient::start(RemotePrefillJob job, std::function<void(RemotePrefillResult)> done) {
  auto j = std::make_shared<Job>();
  j->job = std::move(job);
  j->done = std::move(done);
  std::lock_guard lock(mutex_);
  jobs_[j->job.id] = j;
  queue_.push_back(std::move(j));
  cv_.notify_all();
}

void RemotePrefillClient::cancel(RequestId id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  it->second->cancelled = true;
  if (it->second->client) it->second->client->stop();
}

void RemotePrefillClient::work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    RemotePrefillResult result = run(*job);
    {
      std::lock_guard lock(mutex_);
      jobs_.erase(job->job.id);
    }
    job->done(std::move(result));
  }
}

bool RemotePrefillClient::wait_for_note(const std::string& transfer_id, double seconds) {
  std::unique_lock lock(mutex_);
  const bool arrived = cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return notes_.contains(transfer_id); });
  notes_.erase(transfer_id);
  return arrived;
}

RemotePrefillResult RemotePrefillClient::run(Job& job) {
  const auto start = Clock::now();
  RemotePrefillResult result;
  result.id = job.job.id;
  std::string endpoint;
  {
    std::lock_guard lock(mutex_);
    endpoint = options_.endpoints[next_endpoint_++ % options_.endpoints.size()];
    if (job.cancelled) {
      result.error = "cancelled";
      return result;
    }
  }
  const std::string transfer_id = fmt::format("{}-{}", nonce_, job.job.id);
  nlohmann::json body = {{"transfer_id", transfer_id},
                         {"tokens", job.job.tokens},
                         {"first_position", job.job.first_position},
                         {"blocks", job.job.blocks},
                         {"peer", peer_},
                         {"pool", pool_}};
  httplib::Client client(endpoint);
  client.set_connection_timeout(std::chrono::seconds(5));
  client.set_read_timeout(std::chrono::milliseconds(int64_t(options_.timeout_s * 1000)));
  {
    std::lock_guard lock(mutex_);
    job.client = &client;
    if (job.cancelled) client.stop();
  }
  httplib::Result res = client.Post("/ridge/kv/prefill", body.dump(), "application/json");
  {
    std::lock_guard lock(mutex_);
    job.client = nullptr;
    if (job.cancelled) {
      result.error = "cancelled";
      return result;
    }
  }
  if (!res) {
    result.error = fmt::format("the prefill instance at {} did not answer: {}", endpoint, httplib::to_string(res.error()));
    return result;
  }
  const nlohmann::json reply = nlohmann::json::parse(res->body, nullptr, false);
  // A peer's reply is untrusted: fields of the wrong type are a failed transfer, not an exception here.
  const bool ok = reply.is_object() && reply.contains("ok") && reply["ok"].is_boolean() && reply["ok"].get<bool>();
  if (res->status != 200 || !ok) {
    std::string why = reply.is_object() && reply.contains("error") ? reply["error"].dump() : res->body.substr(0, 200);
    result.error = fmt::format("the prefill instance at {} answered {}: {}", endpoint, res->status, why);
    return result;
  }
  // Its reply follows the note it sent after the last byte; the note may still be on its way.
  if (!wait_for_note(transfer_id, 5.0)) {
    result.error = fmt::format("the prefill instance at {} finished but its transfer note never arrived", endpoint);
    return result;
  }
  result.ok = true;
  result.bytes = reply.contains("bytes") && reply["bytes"].is_number_integer() ? reply["bytes"].get<int64_t>() : 0;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace ridge::kvx
