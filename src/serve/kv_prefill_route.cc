#include "serve/kv_prefill_route.h"

#include <condition_variable>
#include <deque>
#include <mutex>

#include "core/error.h"
#include "kv_transfer/kv_sender.h"
#include "kv_transfer/pool_description.h"

namespace ridge {
namespace {

using nlohmann::json;

std::pair<int, std::string> error_reply(int status, const std::string& message) {
  return {status, json{{"ok", false}, {"error", message}}.dump()};
}

template <typename T>
std::vector<T> int_array(const json& body, const char* key) {
  if (!body.contains(key) || !body[key].is_array()) fail("'{}' must be an array of integers", key);
  std::vector<T> out;
  for (const json& v : body[key]) {
    if (!v.is_number_integer()) fail("'{}' must be an array of integers", key);
    out.push_back(v.get<T>());
  }
  return out;
}

json report_json(const kvx::SendReport& r) {
  return {{"ok", r.ok},         {"error", r.error},          {"bytes", r.bytes},
          {"puts", r.puts},     {"descriptors", r.descriptors}, {"blocks", r.blocks},
          {"layer_sent", r.layer_sent}, {"first_put", r.first_put}, {"compute_done", r.compute_done}, {"transfer_done", r.transfer_done}};
}

}  // namespace

void add_kv_prefill_route(HttpServer& server, Engine& engine, kvx::KvTransport& transport, json pool) {
  struct History {
    std::mutex mutex;
    std::deque<json> reports;
  };
  auto history = std::make_shared<History>();
  server.add_get("/ridge/kv/transfers", [history] {
    std::lock_guard lock(history->mutex);
    return json(history->reports).dump();
  });
  server.add_post("/ridge/kv/prefill", [&engine, &transport, pool, history](const std::string& text, const std::function<bool()>& client_gone) {
    const json body = json::parse(text, nullptr, false);
    if (!body.is_object()) return error_reply(400, "the body is not a JSON object");
    if (const std::string why = kvx::incompatibility(pool, body.value("pool", json())); !why.empty())
      return error_reply(409, "this prefill instance cannot fill that pool: " + why);
    std::shared_ptr<kvx::KvSender> sender;
    RequestOptions options;
    try {
      options.prompt = int_array<int32_t>(body, "tokens");
      const int64_t first = body.value("first_position", int64_t(-1));
      const int64_t bs = engine.config().block_size;
      if (first < 0 || first % bs != 0) fail("'first_position' must be a multiple of the block size {}", bs);
      kvx::SendTarget target;
      target.peer = kvx::base64_decode(body.value("peer", std::string()));
      target.transfer_id = body.value("transfer_id", std::string());
      target.n_positions = int64_t(options.prompt.size());
      target.first_block = first / bs;
      target.dst_blocks = int_array<BlockId>(body, "blocks");
      target.remote_n_blocks = body["pool"]["n_blocks"].get<int32_t>();
      sender = std::make_shared<kvx::KvSender>(transport, *engine.host_kv_store(), std::move(target));
    } catch (const std::exception& e) {
      return error_reply(400, e.what());
    }
    options.kv_sink = sender;
    struct Wait {
      std::mutex mutex;
      std::condition_variable cv;
      bool done = false;
      FinishReason finish = FinishReason::None;
    };
    auto wait = std::make_shared<Wait>();
    RequestId id = 0;
    try {
      id = engine.submit(std::move(options), [wait](const TokenEvent& e) {
        if (e.finish == FinishReason::None) return;
        std::lock_guard lock(wait->mutex);
        wait->done = true;
        wait->finish = e.finish;
        wait->cv.notify_all();
      });
    } catch (const SubmitError& e) {
      return error_reply(e.kind == SubmitError::Kind::QueueFull || e.kind == SubmitError::Kind::SloUnmeetable || e.kind == SubmitError::Kind::MemoryLimit ? 503 : 400, e.what());
    }
    std::unique_lock lock(wait->mutex);
    bool cancelled = false;
    while (!wait->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return wait->done; })) {
      if (!cancelled && client_gone()) {  // the decode instance gave up (or died): stop computing
        engine.cancel(id);
        cancelled = true;
      }
    }
    json reply = report_json(sender->report());
    if (wait->finish != FinishReason::Stop) {
      reply["ok"] = false;
      if (reply["error"].get<std::string>().empty()) reply["error"] = "the prefill was cancelled";
    }
    reply["tokens"] = body["tokens"].size();
    const kvx::TransportStats t = transport.stats();  // since start, every transfer together
    reply["transport_bytes_total"] = t.bytes_put;
    reply["transport_put_seconds_total"] = t.put_seconds;
    reply["first_position"] = body["first_position"];
    {
      std::lock_guard guard(history->mutex);
      history->reports.push_back(reply);
      if (history->reports.size() > 64) history->reports.pop_front();
    }
    return std::pair<int, std::string>(reply["ok"].get<bool>() ? 200 : 500, reply.dump());
  });
}

}  // namespace ridge
