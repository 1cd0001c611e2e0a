// vLLM's KV-event batch encoding (kv_events/event_batch.h): the tagged-array and tagged-map layouts,
// read back with msgpack-cxx, and the bytes msgspec writes for vLLM's structs holding the same values.
#include "kv_events/event_batch.h"

#include <gtest/gtest.h>

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>

#include <string>
#include <vector>

namespace ridge::kv_events {
namespace {

std::vector<KvEvent> sample_events() {
  std::vector<int32_t> tokens(20);
  for (int32_t i = 0; i < 20; ++i) tokens[size_t(i)] = i;
  return {
      KvEvent{KvEvent::Kind::kStored, {~uint64_t{0}, 5}, std::nullopt, tokens, 4},
      KvEvent{KvEvent::Kind::kRemoved, {7}, std::nullopt, {}, 0},
      KvEvent{KvEvent::Kind::kAllCleared, {}, std::nullopt, {}, 0},
  };
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

BatchFormat cpu_format(EventEncoding encoding) {
  BatchFormat f;
  f.encoding = encoding;
  f.medium = "CPU";
  return f;
}

// msgspec 0.22's encoding of vLLM's KVEventBatch(ts=1.5, events=[BlockStored([2**64-1, 5], None,
// list(range(20)), 4, None, "CPU", None), BlockRemoved([7], "CPU"), AllBlocksCleared()],
// data_parallel_rank=0), its event structs with array_like=True (vLLM until mid-2026) and without.
constexpr const char* kMsgspecArray =
    "93cb3ff8000000000000939cab426c6f636b53746f72656492cfffffffffffffffff05c0dc0014000102030405060708090a0b0c0d"
    "0e0f1011121304c0a3435055c0c0c0c0c094ac426c6f636b52656d6f7665649107a3435055c091b0416c6c426c6f636b73436c6561"
    "72656400";
constexpr const char* kMsgspecMap =
    "93cb3ff80000000000009388a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657392cfffffffffffffffff05"
    "b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473dc0014000102030405060708090a0b0c0d0e0f10111213aa"
    "626c6f636b5f73697a6504a76c6f72615f6964c0a66d656469756da3435055a96c6f72615f6e616d65c083a474797065ac426c6f63"
    "6b52656d6f766564ac626c6f636b5f6861736865739107a66d656469756da343505581a474797065b0416c6c426c6f636b73436c65"
    "6172656400";

TEST(KvEventBatch, BytesEqualMsgspecsForVllmsStructs) {
  const std::vector<KvEvent> events = sample_events();
  EXPECT_EQ(hex(encode_event_batch(1.5, events, cpu_format(EventEncoding::kArray))), kMsgspecArray);
  EXPECT_EQ(hex(encode_event_batch(1.5, events, cpu_format(EventEncoding::kMap))), kMsgspecMap);
}

std::vector<uint64_t> uints(const msgpack::object& o) {
  EXPECT_EQ(o.type, msgpack::type::ARRAY);
  std::vector<uint64_t> out;
  for (uint32_t i = 0; i < o.via.array.size; ++i) out.push_back(o.via.array.ptr[i].as<uint64_t>());
  return out;
}

TEST(KvEventBatch, ArrayLayoutIsTagThenFieldsInOrder) {
  std::vector<KvEvent> events = sample_events();
  events[0].parent = 42;
  const std::string bytes = encode_event_batch(1234.25, events, cpu_format(EventEncoding::kArray));
  msgpack::object_handle handle = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& batch = handle.get();
  ASSERT_EQ(batch.type, msgpack::type::ARRAY);
  ASSERT_EQ(batch.via.array.size, 3u);
  EXPECT_EQ(batch.via.array.ptr[0].type, msgpack::type::FLOAT64);
  EXPECT_EQ(batch.via.array.ptr[0].as<double>(), 1234.25);
  EXPECT_EQ(batch.via.array.ptr[2].as<int>(), 0);  // data_parallel_rank
  const msgpack::object& list = batch.via.array.ptr[1];
  ASSERT_EQ(list.type, msgpack::type::ARRAY);
  ASSERT_EQ(list.via.array.size, 3u);

  const msgpack::object& stored = list.via.array.ptr[0];
  ASSERT_EQ(stored.type, msgpack::type::ARRAY);
  ASSERT_EQ(stored.via.array.size, 12u);
  const msgpack::object* f = stored.via.array.ptr;
  EXPECT_EQ(f[0].as<std::string>(), "BlockStored");
  EXPECT_EQ(uints(f[1]), (std::vector<uint64_t>{~uint64_t{0}, 5}));
  EXPECT_EQ(f[2].as<uint64_t>(), 42u);  // parent_block_hash
  EXPECT_EQ(uints(f[3]).size(), 20u);   // token_ids
  EXPECT_EQ(uints(f[3])[19], 19u);
  EXPECT_EQ(f[4].as<int>(), 4);         // block_size
  EXPECT_EQ(f[5].type, msgpack::type::NIL);  // lora_id
  EXPECT_EQ(f[6].as<std::string>(), "CPU");  // medium
  for (int i = 7; i < 12; ++i) EXPECT_EQ(f[i].type, msgpack::type::NIL) << "field " << i;

  const msgpack::object& removed = list.via.array.ptr[1];
  ASSERT_EQ(removed.via.array.size, 4u);
  EXPECT_EQ(removed.via.array.ptr[0].as<std::string>(), "BlockRemoved");
  EXPECT_EQ(uints(removed.via.array.ptr[1]), std::vector<uint64_t>{7});
  EXPECT_EQ(removed.via.array.ptr[2].as<std::string>(), "CPU");
  EXPECT_EQ(removed.via.array.ptr[3].type, msgpack::type::NIL);  // group_idx

  const msgpack::object& cleared = list.via.array.ptr[2];
  ASSERT_EQ(cleared.via.array.size, 1u);
  EXPECT_EQ(cleared.via.array.ptr[0].as<std::string>(), "AllBlocksCleared");
}

TEST(KvEventBatch, MapLayoutNamesTheFieldsAfterTheType) {
  const std::string bytes = encode_event_batch(1.0, sample_events(), cpu_format(EventEncoding::kMap));
  msgpack::object_handle handle = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& list = handle.get().via.array.ptr[1];
  const std::vector<std::vector<std::string>> want = {
      {"type", "block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id", "medium", "lora_name"},
      {"type", "block_hashes", "medium"},
      {"type"},
  };
  const char* tags[] = {"BlockStored", "BlockRemoved", "AllBlocksCleared"};
  for (size_t e = 0; e < want.size(); ++e) {
    const msgpack::object& event = list.via.array.ptr[e];
    ASSERT_EQ(event.type, msgpack::type::MAP);
    std::vector<std::string> keys;
    for (uint32_t i = 0; i < event.via.map.size; ++i) keys.push_back(event.via.map.ptr[i].key.as<std::string>());
    EXPECT_EQ(keys, want[e]);
    EXPECT_EQ(event.via.map.ptr[0].val.as<std::string>(), tags[e]);
  }
}

TEST(KvEventBatch, UnsetRankAndMediumAreNil) {
  BatchFormat f;
  f.data_parallel_rank = std::nullopt;
  const std::string bytes = encode_event_batch(1.0, sample_events(), f);
  msgpack::object_handle handle = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& batch = handle.get();
  ASSERT_EQ(batch.via.array.size, 3u);
  EXPECT_EQ(batch.via.array.ptr[2].type, msgpack::type::NIL);
  EXPECT_EQ(batch.via.array.ptr[1].via.array.ptr[0].via.array.ptr[6].type, msgpack::type::NIL);
}

TEST(KvEventBatch, ParsesEncodingNames) {
  EXPECT_EQ(parse_event_encoding("array"), EventEncoding::kArray);
  EXPECT_EQ(parse_event_encoding("map"), EventEncoding::kMap);
  EXPECT_EQ(parse_event_encoding("json"), std::nullopt);
}

}  // namespace
}  // namespace ridge::kv_events
