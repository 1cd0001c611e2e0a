// libFuzzer target for the KV tier's block files (kv/kv_tier_file.h; see fuzz/README.md). The input
// is written to a file in a temporary directory and read back as a block of a KvBlockFormat.
// Byte 0: block size (1 + bits 0-2), identity (bits 3-4: 0, 5, 17 or 60 bytes), bit 5: overwrite
// the file's last 8 bytes with the right checksum (so reads get past it), bit 6: also write a block
// and check that one flipped byte (its position from byte 1) makes it Bad. The rest is the file;
// the format's payload size is set so that the file has the exact size the format expects when it
// is long enough, so the header and checksum checks are what the fuzzer explores.
// Invariants: read() is Ok only for a file read_header() accepts with the same key; with the
// checksum fixed up, a header read_header() accepts reads Ok and yields the file's payload bytes.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_tier_file.h"
#include "fuzz_common.h"

namespace {

using ridge::fuzz::check;

const std::string& dir() {
  static const std::string& d = *new std::string([] {
    char tmpl[] = "/tmp/ridge_kv_tier_fuzz.XXXXXX";
    check(::mkdtemp(tmpl) != nullptr);
    std::atexit([] { std::filesystem::remove_all(dir()); });
    return std::string(tmpl);
  }());
  return d;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  check(bool(out));
}

uint64_t checksum(std::span<const uint8_t> head, std::span<const uint8_t> payload) {
  ridge::KvChecksum sum;
  sum.update(head);
  sum.update(payload);
  return sum.finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0], where = data[1];
  std::vector<uint8_t> file(data + 2, data + size);
  static constexpr size_t kIdentity[] = {0, 5, 17, 60};
  const std::string identity = std::string("model:0123456789abcdef/kv:f16/layers:32/heads:8x128/block:16/x").substr(0, kIdentity[(flags >> 3) & 3]);
  const int32_t block_size = 1 + (flags & 7);
  const int64_t header = ridge::KvBlockFormat(identity, block_size, 0).header_bytes();
  const int64_t payload_bytes = std::max<int64_t>(0, int64_t(file.size()) - header - 8);
  const ridge::KvBlockFormat format(identity, block_size, payload_bytes);
  const bool fixed = (flags & 32) && int64_t(file.size()) == format.file_bytes();
  if (fixed) {
    const uint64_t sum = checksum({file.data(), size_t(header)}, {file.data() + header, size_t(payload_bytes)});
    std::memcpy(file.data() + header + payload_bytes, &sum, sizeof sum);
  }
  const std::string path = dir() + "/block";
  write_file(path, file);

  // The key the file claims (zeros where it is too short).
  uint64_t hash = 0, parent = 0;
  std::vector<int32_t> tokens(size_t(block_size), 0);
  if (file.size() >= 48) {
    std::memcpy(&hash, file.data() + 32, 8);
    std::memcpy(&parent, file.data() + 40, 8);
  }
  const size_t at = 48 + identity.size();
  if (file.size() >= at + tokens.size() * 4) std::memcpy(tokens.data(), file.data() + at, tokens.size() * 4);

  const auto head = format.read_header(path);
  std::vector<uint8_t> out(static_cast<size_t>(payload_bytes));
  const auto read = format.read(path, {hash, parent, tokens}, out);
  check(read != ridge::KvBlockFormat::Read::Missing);
  if (read == ridge::KvBlockFormat::Read::Ok) check(head.has_value());
  if (head) {
    check(head->hash == hash && head->parent == parent && head->tokens == tokens);
    if (fixed) check(read == ridge::KvBlockFormat::Read::Ok);
    if (read == ridge::KvBlockFormat::Read::Ok)
      check(out.empty() || std::memcmp(out.data(), file.data() + header, out.size()) == 0);
  }
  ridge::fuzz::accepted(read == ridge::KvBlockFormat::Read::Ok ? "read Ok" : head ? "header only" : "Bad");
  check(format.read(dir() + "/missing", {hash, parent, tokens}, out) == ridge::KvBlockFormat::Read::Missing);

  if (flags & 64) {
    // Write a block of this key and payload, read it back, then flip one byte or truncate the file.
    const std::vector<uint8_t> payload(file.begin() + std::min<size_t>(file.size(), size_t(header)),
                                       file.begin() + std::min<size_t>(file.size(), size_t(header + payload_bytes)));
    const ridge::KvBlockFormat own(identity, block_size, int64_t(payload.size()));
    const std::string block = dir() + "/written";
    check(own.write(block, {hash, parent, tokens}, payload));
    std::vector<uint8_t> back(payload.size());
    check(own.read(block, {hash, parent, tokens}, back) == ridge::KvBlockFormat::Read::Ok && back == payload);
    const auto own_head = own.read_header(block);
    check(own_head && own_head->hash == hash && own_head->parent == parent && own_head->tokens == tokens);
    std::ifstream in(block, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    check(int64_t(bytes.size()) == own.file_bytes());
    if (where == 0xff) {
      bytes.pop_back();
    } else {
      const size_t pos = size_t(where) * 131 % bytes.size();
      bytes[pos] ^= uint8_t(1 + (flags >> 7) * 0x7e);
    }
    write_file(block, bytes);
    check(own.read(block, {hash, parent, tokens}, back) == ridge::KvBlockFormat::Read::Bad);
  }
  return 0;
}
