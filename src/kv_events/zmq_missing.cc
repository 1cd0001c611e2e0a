// Built without ZeroMQ (libzmq3-dev missing): KV events cannot be published.
#include "core/error.h"
#include "kv_events/zmq_publisher.h"

namespace ridge::kv_events {

std::shared_ptr<ZmqPublisher> make_zmq_publisher(const ZmqPublisherOptions&) {
  fail("this ridge was built without ZeroMQ: install libzmq3-dev (tools/setup_deps.sh) and rebuild for --kv-events-endpoint");
}
bool zmq_available() { return false; }

}  // namespace ridge::kv_events
