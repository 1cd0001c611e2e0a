#pragma once
// The KV event publisher over ZeroMQ, as vLLM's ZmqEventPublisher speaks it, so KV-aware routers
// (llm-d, Dynamo, the SGLang router) can follow ridge's prefix cache as they follow vLLM's.
//
//   PUB socket (endpoint)   each batch one multipart message [topic, seq, payload]: seq an 8-byte
//                           big-endian counter from 0 (a skipped number: events were dropped), payload
//                           the batch's MessagePack (event_batch.h)
//   ROUTER socket (replay)  a client (DEALER, or REQ for the first reply only) sends ["", start seq as
//                           8 bytes big-endian] and gets back every kept batch from there as
//                           ["", topic, seq, payload], then the end mark ["", topic, -1 (8 bytes), ""]
//
// vLLM's rule for the endpoint: an address with '*' or '::', and every ipc:// and inproc:// one, is
// bound; any other is connected to (a subscriber binds there). The replay endpoint is always bound.
//
// The sink's methods run on the engine thread and only append to a queue under a mutex; the
// publisher's own thread encodes whatever has queued up as one batch and sends it. When
// max_queued_events are waiting, later events are dropped and the next batch's seq skips one.
#include <memory>
#include <string>

#include "kv/kv_events.h"
#include "kv_events/event_batch.h"

namespace ridge::kv_events {

struct ZmqPublisherOptions {
  std::string endpoint = "tcp://*:5557";
  std::string replay_endpoint;  // empty: no replay socket
  std::string topic;
  BatchFormat format;
  int32_t buffer_steps = 10000;         // batches kept for replay
  int32_t hwm = 100000;                 // the PUB socket's send high-water mark (messages)
  int64_t max_queued_events = 100000;   // waiting for the publisher thread
};

class ZmqPublisher : public KvEventSink {
 public:
  // As bound (a wildcard port resolved, e.g. tcp://0.0.0.0:5557) or as connected.
  virtual std::string endpoint() const = 0;
  virtual std::string replay_endpoint() const = 0;  // as bound; empty without replay
  virtual bool bound() const = 0;                   // false: the PUB socket connected
  virtual int64_t published_batches() const = 0;
  virtual int64_t dropped_events() const = 0;
};

// Binds or connects at once (Error when that fails) and starts the publisher thread. Destroying it
// sends what is still queued, then closes the sockets. Error in a build without libzmq.
std::shared_ptr<ZmqPublisher> make_zmq_publisher(const ZmqPublisherOptions& options);
bool zmq_available();

}  // namespace ridge::kv_events
