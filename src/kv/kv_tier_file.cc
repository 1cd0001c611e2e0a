#include "kv/kv_tier_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ridge {
namespace {

constexpr uint64_t kP1 = 0x9e3779b185ebca87ULL, kP2 = 0xc2b2ae3d27d4eb4fULL, kP3 = 0x165667b19e3779f9ULL,
                   kP4 = 0x85ebca77c2b2ae63ULL, kP5 = 0x27d4eb2f165667c5ULL;
constexpr char kMagic[8] = {'R', 'I', 'D', 'G', 'E', 'K', 'V', 'B'};
constexpr uint32_t kVersion = 1;
constexpr int64_t kFixedHeader = 48;  // magic .. parent; then identity and tokens

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
// A bijection of acc for any input, and of input for any acc.
uint64_t mix_round(uint64_t acc, uint64_t input) { return rotl(acc + input * kP2, 31) * kP1; }
uint64_t load64(const uint8_t* p) {
  uint64_t x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_all(int fd, void* dst, size_t n, off_t offset) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got, n -= size_t(got), offset += got;
  }
  return true;
}

bool write_all(int fd, const void* src, size_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put, n -= size_t(put);
  }
  return true;
}

// A regular file of exactly `bytes` bytes, opened without following a link; -1 otherwise.
int open_exact(const std::string& path, int64_t bytes, bool* missing) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (missing) *missing = errno == ENOENT || errno == ENOTDIR;
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || int64_t(st.st_size) != bytes) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

KvChecksum::KvChecksum() : lane_{kP1 + kP2, kP2, 0, 0 - kP1} {}

void KvChecksum::update(std::span<const uint8_t> bytes) {
  if (length_ % 32 != 0) throw std::logic_error("KvChecksum: only the last update may end inside a stripe");
  length_ += bytes.size();
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 32; p += 32, n -= 32)
    for (int i = 0; i < 4; ++i) lane_[i] = mix_round(lane_[i], load64(p + 8 * i));
  for (int i = 0; n >= 8; p += 8, n -= 8, ++i) lane_[i] = mix_round(lane_[i], load64(p));
  tail_ = 0;
  if (n > 0) std::memcpy(&tail_, p, n);  // an empty span's data() may be null
}

uint64_t KvChecksum::finish() const {
  // Each step is a bijection of h, and injective in the lane it takes in.
  uint64_t h = kP5 + length_;
  for (uint64_t lane : lane_) h = (h ^ mix_round(0, lane)) * kP1 + kP4;
  h = (h ^ mix_round(0, tail_)) * kP1 + kP4;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  return h ^ (h >> 32);
}

KvBlockFormat::KvBlockFormat(std::string identity, int32_t block_size, int64_t payload_bytes)
    : identity_(std::move(identity)), block_size_(block_size), payload_bytes_(payload_bytes) {
  const int64_t unpadded = kFixedHeader + int64_t(identity_.size()) + int64_t(block_size_) * int64_t(sizeof(int32_t));
  header_bytes_ = (unpadded + 63) / 64 * 64;
}

std::vector<uint8_t> KvBlockFormat::header(const KvBlockKey& key) const {
  std::vector<uint8_t> h(size_t(header_bytes_), 0);
  auto put = [&](size_t at, const void* src, size_t n) { std::memcpy(h.data() + at, src, n); };
  const uint32_t words[4] = {kVersion, uint32_t(identity_.size()), uint32_t(block_size_), 0};
  const uint64_t longs[3] = {uint64_t(payload_bytes_), key.hash, key.parent};
  put(0, kMagic, sizeof kMagic);
  put(8, words, sizeof words);
  put(24, longs, sizeof longs);
  put(kFixedHeader, identity_.data(), identity_.size());
  put(size_t(kFixedHeader) + identity_.size(), key.tokens.data(), std::min<size_t>(key.tokens.size(), size_t(block_size_)) * sizeof(int32_t));
  return h;
}

bool KvBlockFormat::write(const std::string& path, const KvBlockKey& key, std::span<const uint8_t> payload) const {
  if (int64_t(payload.size()) != payload_bytes_ || int64_t(key.tokens.size()) != block_size_) return false;
  const std::vector<uint8_t> head = header(key);
  KvChecksum sum;
  sum.update(head);
  sum.update(payload);
  const uint64_t checksum = sum.finish();
  const std::string tmp = path + ".tmp";
  bool ok;
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    ok = fd.fd >= 0 && write_all(fd.fd, head.data(), head.size()) && write_all(fd.fd, payload.data(), payload.size()) &&
         write_all(fd.fd, &checksum, sizeof checksum);
    if (fd.fd >= 0) ok = ::close(std::exchange(fd.fd, -1)) == 0 && ok;
  }
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

std::optional<KvBlockFormat::Header> KvBlockFormat::read_header(const std::string& path) const {
  Fd fd(open_exact(path, file_bytes(), nullptr));
  std::vector<uint8_t> head(static_cast<size_t>(header_bytes_));
  if (fd.fd < 0 || !read_all(fd.fd, head.data(), head.size(), 0)) return std::nullopt;
  Header out;
  out.tokens.resize(size_t(block_size_));
  std::memcpy(&out.hash, head.data() + 32, sizeof out.hash);
  std::memcpy(&out.parent, head.data() + 40, sizeof out.parent);
  std::memcpy(out.tokens.data(), head.data() + kFixedHeader + identity_.size(), out.tokens.size() * sizeof(int32_t));
  // Every other field (magic, version, identity, sizes, padding) is right if the header is the one
  // this format writes for that key.
  if (header({out.hash, out.parent, out.tokens}) != head) return std::nullopt;
  return out;
}

KvBlockFormat::Read KvBlockFormat::read(const std::string& path, const KvBlockKey& key, std::span<uint8_t> out) const {
  if (int64_t(out.size()) != payload_bytes_ || int64_t(key.tokens.size()) != block_size_) return Read::Missing;
  bool missing = false;
  Fd fd(open_exact(path, file_bytes(), &missing));
  if (fd.fd < 0) return missing ? Read::Missing : Read::Bad;
  const std::vector<uint8_t> want = header(key);
  std::vector<uint8_t> head(want.size());
  uint64_t stored = 0;
  if (!read_all(fd.fd, head.data(), head.size(), 0) || head != want) return Read::Bad;
  if (!read_all(fd.fd, out.data(), out.size(), off_t(header_bytes_)) ||
      !read_all(fd.fd, &stored, sizeof stored, off_t(header_bytes_ + payload_bytes_)))
    return Read::Bad;
  KvChecksum sum;
  sum.update(head);
  sum.update(out);
  return sum.finish() == stored ? Read::Ok : Read::Bad;
}

}  // namespace ridge
