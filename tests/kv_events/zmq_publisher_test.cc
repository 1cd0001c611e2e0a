// The ZeroMQ publisher (kv_events/zmq_publisher.h) against real sockets on the loopback: framing,
// sequence numbers, replay, bind versus connect.
#include "kv_events/zmq_publisher.h"

#include <gtest/gtest.h>

#if __has_include(<zmq.h>)
#include <zmq.h>

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>

#include <string>
#include <vector>

#include "core/error.h"

namespace ridge::kv_events {
namespace {

std::string be64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char(v >> (8 * (7 - i)));
  return out;
}

// One multipart message, or nothing within the timeout.
std::vector<std::string> recv_frames(void* socket, int timeout_ms = 3000) {
  zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
  if (zmq_poll(&item, 1, timeout_ms) <= 0) return {};
  std::vector<std::string> frames;
  int more = 1;
  while (more) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    zmq_msg_recv(&msg, socket, 0);
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
  }
  return frames;
}

// Lets the subscriber join: a SUB socket forwards its subscription to a new peer only while it is
// being called, and a PUB drops what it sends before the subscription arrives.
void settle(void* sub) {
  zmq_pollitem_t item{sub, 0, ZMQ_POLLIN, 0};
  for (int i = 0; i < 30; ++i) zmq_poll(&item, 1, 10);
}

void send_frames(void* socket, const std::vector<std::string>& frames) {
  for (size_t i = 0; i < frames.size(); ++i)
    zmq_send(socket, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
}

// The hashes of the single BlockStored event of a batch.
std::vector<uint64_t> stored_hashes(const std::string& payload) {
  msgpack::object_handle h = msgpack::unpack(payload.data(), payload.size());
  const msgpack::object& events = h.get().via.array.ptr[1];
  EXPECT_EQ(events.via.array.size, 1u);
  const msgpack::object& hashes = events.via.array.ptr[0].via.array.ptr[1];
  std::vector<uint64_t> out;
  for (uint32_t i = 0; i < hashes.via.array.size; ++i) out.push_back(hashes.via.array.ptr[i].as<uint64_t>());
  return out;
}

class ZmqPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!zmq_available()) GTEST_SKIP() << "built without libzmq";
    ctx_ = zmq_ctx_new();
  }
  void TearDown() override {
    for (void* s : sockets_) {
      int linger = 0;
      zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
      zmq_close(s);
    }
    if (ctx_) zmq_ctx_term(ctx_);
  }
  void* socket(int type) {
    sockets_.push_back(zmq_socket(ctx_, type));
    return sockets_.back();
  }
  void* subscriber(const std::string& topic) {
    void* sub = socket(ZMQ_SUB);
    zmq_setsockopt(sub, ZMQ_SUBSCRIBE, topic.data(), topic.size());
    return sub;
  }

  void* ctx_ = nullptr;
  std::vector<void*> sockets_;
};

const std::vector<int32_t> kTokens = {1, 2, 3, 4};

TEST_F(ZmqPublisherTest, PublishesTopicSequenceAndPayloadAndReplays) {
  ZmqPublisherOptions o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.replay_endpoint = "tcp://127.0.0.1:*";
  o.topic = "kv@test";
  auto pub = make_zmq_publisher(o);
  EXPECT_TRUE(pub->bound());
  void* sub = subscriber(o.topic);
  ASSERT_EQ(zmq_connect(sub, pub->endpoint().c_str()), 0) << pub->endpoint();
  settle(sub);

  for (uint64_t seq = 0; seq < 3; ++seq) {
    const uint64_t hash = 1000 + seq;
    pub->on_blocks_stored(std::nullopt, std::span<const uint64_t>(&hash, 1), kTokens, 4);
    std::vector<std::string> frames = recv_frames(sub);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0], o.topic);
    EXPECT_EQ(frames[1], be64(seq));
    EXPECT_EQ(stored_hashes(frames[2]), std::vector<uint64_t>{hash});
  }
  EXPECT_EQ(pub->published_batches(), 3);

  void* replay = socket(ZMQ_DEALER);
  ASSERT_EQ(zmq_connect(replay, pub->replay_endpoint().c_str()), 0) << pub->replay_endpoint();
  send_frames(replay, {"", be64(1)});
  for (uint64_t seq = 1; seq < 3; ++seq) {
    std::vector<std::string> frames = recv_frames(replay);
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(frames[0], "");
    EXPECT_EQ(frames[1], o.topic);
    EXPECT_EQ(frames[2], be64(seq));
    EXPECT_EQ(stored_hashes(frames[3]), std::vector<uint64_t>{1000 + seq});
  }
  std::vector<std::string> end = recv_frames(replay);
  ASSERT_EQ(end.size(), 4u);
  EXPECT_EQ(end[2], be64(~uint64_t{0}));
  EXPECT_EQ(end[3], "");
}

TEST_F(ZmqPublisherTest, ConnectsWhereTheSubscriberBinds) {
  void* sub = subscriber("");
  ASSERT_EQ(zmq_bind(sub, "tcp://127.0.0.1:*"), 0);
  char endpoint[256] = {};
  size_t size = sizeof(endpoint);
  zmq_getsockopt(sub, ZMQ_LAST_ENDPOINT, endpoint, &size);
  ZmqPublisherOptions o;
  o.endpoint = endpoint;  // no wildcard: vLLM's rule connects
  auto pub = make_zmq_publisher(o);
  EXPECT_FALSE(pub->bound());
  settle(sub);
  const uint64_t hash = 7;
  pub->on_blocks_removed(std::span<const uint64_t>(&hash, 1));
  std::vector<std::string> frames = recv_frames(sub);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0], "");
  EXPECT_EQ(frames[1], be64(0));
}

TEST_F(ZmqPublisherTest, ABadEndpointFailsAtOnce) {
  ZmqPublisherOptions o;
  o.endpoint = "tcp://*:not-a-port";
  EXPECT_THROW(make_zmq_publisher(o), Error);
  o.endpoint = "tcp://127.0.0.1:*";
  o.replay_endpoint = "bogus://x";
  EXPECT_THROW(make_zmq_publisher(o), Error);
}

}  // namespace
}  // namespace ridge::kv_events

#else

TEST(ZmqPublisherTest, NeedsZmqHeaders) { GTEST_SKIP() << "zmq.h not installed"; }

#endif
