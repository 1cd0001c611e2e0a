#pragma once
// One KV block as a file: the bottom tier of the tiered KV cache (kv_tiers). A header names what
// the block is — model identity, chained hash, parent hash, token ids, payload length — then come
// the payload and a 64-bit checksum over header and payload. A read compares every header field
// with what the caller asks for, so a block of another model, KV layout or prefix is never served;
// the checksum catches flipped bytes, the exact file size truncation. Writes go to a temporary
// name that is renamed into place, so a crashed process never leaves a half file under the real
// name (a power loss may; the checksum then rejects it).
//
// Layout (host byte order), the header padded with zeros to a multiple of 64 bytes:
//   "RIDGEKVB" | u32 version | u32 identity bytes | u32 block_size | u32 0 | u64 payload bytes |
//   u64 hash | u64 parent | identity | i32 tokens[block_size] | zeros | payload | u64 checksum
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ridge {

// A block's name in the prefix cache: PrefixCache::chain_hash of the prefix ending with it, the
// hash of the prefix before it, and its own token ids (a hash collision must cost a miss only).
struct KvBlockKey {
  uint64_t hash = 0;
  uint64_t parent = 0;
  std::span<const int32_t> tokens;
};

// A 64-bit checksum in the style of xxhash64: four independent lanes over 32-byte stripes, each
// round a bijection of its lane, so any change confined to one 8-byte word (a flipped byte) always
// changes the result; the length is mixed in, so truncation does too. Every update but the last
// must be a multiple of 32 bytes.
class KvChecksum {
 public:
  KvChecksum();
  void update(std::span<const uint8_t> bytes);
  uint64_t finish() const;

 private:
  uint64_t lane_[4];
  uint64_t tail_ = 0;  // the last update's bytes past its last full word, zero-padded
  uint64_t length_ = 0;
};

// The files of one model identity and block shape.
class KvBlockFormat {
 public:
  KvBlockFormat(std::string identity, int32_t block_size, int64_t payload_bytes);

  int64_t header_bytes() const { return header_bytes_; }
  int64_t file_bytes() const { return header_bytes_ + payload_bytes_ + int64_t(sizeof(uint64_t)); }

  // Writes `path`.tmp, then renames it to `path`. False, and neither name left behind, on any error
  // (a directory in the way, a full disk).
  bool write(const std::string& path, const KvBlockKey& key, std::span<const uint8_t> payload) const;

  // The key of the block in `path` if it is a file of this format, identity and size (the
  // checksum is left to read()). For the scan at start-up.
  struct Header {
    uint64_t hash = 0, parent = 0;
    std::vector<int32_t> tokens;
  };
  std::optional<Header> read_header(const std::string& path) const;

  // Copies the payload of the block `key` from `path` into out (payload_bytes; its contents are
  // unspecified unless Ok). Missing: no file there. Bad: a file that is not exactly that block.
  enum class Read { Ok, Missing, Bad };
  Read read(const std::string& path, const KvBlockKey& key, std::span<uint8_t> out) const;

 private:
  std::vector<uint8_t> header(const KvBlockKey& key) const;

  std::string identity_;
  int32_t block_size_;
  int64_t payload_bytes_, header_bytes_;
};

}  // namespace ridge
