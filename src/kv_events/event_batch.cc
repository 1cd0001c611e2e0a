#include "kv_events/event_batch.h"

#include <bit>

namespace ridge::kv_events {

namespace {

// The few MessagePack forms a batch needs, each in its shortest encoding (as msgspec writes them).
class Packer {
 public:
  std::string bytes;

  void nil() { byte(0xc0); }
  void uint(uint64_t v) {
    if (v < 0x80) byte(uint8_t(v));
    else if (v <= 0xff) head(0xcc, v, 1);
    else if (v <= 0xffff) head(0xcd, v, 2);
    else if (v <= 0xffffffffULL) head(0xce, v, 4);
    else head(0xcf, v, 8);
  }
  void sint(int64_t v) {
    if (v >= 0) uint(uint64_t(v));
    else if (v >= -32) byte(uint8_t(v));  // negative fixint
    else if (v >= INT8_MIN) head(0xd0, uint64_t(v), 1);
    else if (v >= INT16_MIN) head(0xd1, uint64_t(v), 2);
    else if (v >= INT32_MIN) head(0xd2, uint64_t(v), 4);
    else head(0xd3, uint64_t(v), 8);
  }
  void f64(double v) { head(0xcb, std::bit_cast<uint64_t>(v), 8); }
  void str(std::string_view s) {
    if (s.size() < 32) byte(uint8_t(0xa0 | s.size()));
    else if (s.size() <= 0xff) head(0xd9, s.size(), 1);
    else if (s.size() <= 0xffff) head(0xda, s.size(), 2);
    else head(0xdb, s.size(), 4);
    bytes.append(s);
  }
  void array(size_t n) { container(0x90, 0xdc, n); }
  void map(size_t n) { container(0x80, 0xde, n); }

  void optional_uint(std::optional<uint64_t> v) { v ? uint(*v) : nil(); }
  void optional_str(const std::optional<std::string>& v) { v ? str(*v) : nil(); }
  void uint_array(std::span<const uint64_t> values) {
    array(values.size());
    for (uint64_t v : values) uint(v);
  }
  void int_array(std::span<const int32_t> values) {
    array(values.size());
    for (int32_t v : values) sint(v);
  }

 private:
  void byte(uint8_t b) { bytes.push_back(char(b)); }
  // A type byte and n big-endian bytes of v.
  void head(uint8_t type, uint64_t v, int n) {
    byte(type);
    for (int i = n - 1; i >= 0; --i) byte(uint8_t(v >> (8 * i)));
  }
  void container(uint8_t fix, uint8_t wide16, size_t n) {
    if (n < 16) byte(uint8_t(fix | n));
    else if (n <= 0xffff) head(wide16, n, 2);
    else head(uint8_t(wide16 + 1), n, 4);
  }
};

// A tagged struct as msgspec writes one with omit_defaults: the tag then every field in order (array),
// or "type": tag then name: value for the fields without a default (map; the defaulted ones, all
// nil here, are left out).
class StructWriter {
 public:
  StructWriter(Packer& p, EventEncoding encoding, std::string_view tag, size_t n_required, size_t n_defaulted)
      : p_(p), map_(encoding == EventEncoding::kMap), n_defaulted_(n_defaulted) {
    if (map_) {
      p_.map(1 + n_required);
      p_.str("type");
    } else {
      p_.array(1 + n_required + n_defaulted);
    }
    p_.str(tag);
  }
  Packer& field(std::string_view name) {
    if (map_) p_.str(name);
    return p_;
  }
  // After the fields without a default: the defaulted ones, as nil, in the array form.
  void end() {
    if (!map_)
      for (size_t i = 0; i < n_defaulted_; ++i) p_.nil();
  }

 private:
  Packer& p_;
  bool map_;
  size_t n_defaulted_;
};

// The fields of vLLM's structs, in its order. BlockStored's defaulted ones: extra_keys, group_idx,
// kv_cache_spec_kind, kv_cache_spec_sliding_window; BlockRemoved's: group_idx.
void pack_event(Packer& p, const KvEvent& e, const BatchFormat& format) {
  switch (e.kind) {
    case KvEvent::Kind::kStored: {
      StructWriter s(p, format.encoding, "BlockStored", 7, 4);
      s.field("block_hashes").uint_array(e.block_hashes);
      s.field("parent_block_hash").optional_uint(e.parent);
      s.field("token_ids").int_array(e.token_ids);
      s.field("block_size").sint(e.block_size);
      s.field("lora_id").nil();
      s.field("medium").optional_str(format.medium);
      s.field("lora_name").nil();
      s.end();
      return;
    }
    case KvEvent::Kind::kRemoved: {
      StructWriter s(p, format.encoding, "BlockRemoved", 2, 1);
      s.field("block_hashes").uint_array(e.block_hashes);
      s.field("medium").optional_str(format.medium);
      s.end();
      return;
    }
    case KvEvent::Kind::kAllCleared:
      StructWriter(p, format.encoding, "AllBlocksCleared", 0, 0).end();
      return;
  }
}

}  // namespace

std::optional<EventEncoding> parse_event_encoding(std::string_view name) {
  if (name == "array") return EventEncoding::kArray;
  if (name == "map") return EventEncoding::kMap;
  return std::nullopt;
}

std::string encode_event_batch(double ts, std::span<const KvEvent> events, const BatchFormat& format) {
  Packer p;
  p.array(3);
  p.f64(ts);
  p.array(events.size());
  for (const KvEvent& e : events) pack_event(p, e, format);
  format.data_parallel_rank ? p.sint(*format.data_parallel_rank) : p.nil();
  return std::move(p.bytes);
}

}  // namespace ridge::kv_events
