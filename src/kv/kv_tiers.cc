#include "kv/kv_tiers.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace ridge {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxIdentity = 4096;

const KvTierConfig& validated(const KvTierConfig& c) {
  if (c.block_bytes <= 0 || c.block_size <= 0)
    fail("KV tiers: a block needs a positive size (block of {} tokens, {} bytes)", c.block_size, c.block_bytes);
  if (c.ram_bytes < 0 || c.disk_bytes < 0 || c.write_queue_bytes < 0)
    fail("KV tiers: budgets cannot be negative (RAM {}, disk {}, write queue {})", c.ram_bytes, c.disk_bytes, c.write_queue_bytes);
  if (c.model_identity.size() > kMaxIdentity) fail("KV tiers: a model identity of {} bytes is too long", c.model_identity.size());
  return c;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  uint64_t v = 0;
  for (char ch : s) {
    const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v << 4 | uint64_t(d);
  }
  return v;
}

// The hash a file name <16 hex digits><suffix> names.
std::optional<uint64_t> hash_of_name(std::string_view name, std::string_view suffix) {
  if (name.size() != 16 + suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  return parse_hex(name.substr(0, 16));
}

template <typename F>
void for_each_entry(const fs::path& dir, F&& f) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) f(*it);
}

}  // namespace

// ---- Lru -------------------------------------------------------------------------------------

const KvTiers::Block* KvTiers::Lru::find(uint64_t hash) const {
  auto it = by_hash_.find(hash);
  return it == by_hash_.end() ? nullptr : &it->second.block;
}

const KvTiers::Block* KvTiers::Lru::find(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) const {
  const Block* b = find(hash);
  if (!b || b->parent != parent || !std::equal(tokens.begin(), tokens.end(), b->tokens.begin(), b->tokens.end())) return nullptr;
  return b;
}

void KvTiers::Lru::insert(uint64_t hash, Block block) {
  take(hash);
  bytes_ += block.bytes;
  order_.push_front(hash);
  by_hash_.emplace(hash, Node{std::move(block), order_.begin()});
}

void KvTiers::Lru::touch(uint64_t hash) {
  auto it = by_hash_.find(hash);
  if (it != by_hash_.end()) order_.splice(order_.begin(), order_, it->second.at);
}

KvTiers::Block KvTiers::Lru::take(uint64_t hash) {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return {};
  Block block = std::move(it->second.block);
  bytes_ -= block.bytes;
  order_.erase(it->second.at);
  by_hash_.erase(it);
  return block;
}

// ---- KvTiers ---------------------------------------------------------------------------------

KvTiers::KvTiers(KvTierConfig config)
    : config_(validated(config)), format_(config_.model_identity, config_.block_size, config_.block_bytes) {
  if (!disk_enabled()) return;
  std::error_code ec;
  fs::create_directories(config_.disk_dir, ec);
  if (ec) fail("KV tiers: cannot create the directory {}: {}", config_.disk_dir, ec.message());
  const std::string lock_path = config_.disk_dir + "/lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail("KV tiers: cannot open {}: {}", lock_path, std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    fail("KV tiers: the directory {} is in use by another process", config_.disk_dir);
  }
  scan_disk();
  writer_ = std::thread(&KvTiers::write_loop, this);
}

KvTiers::~KvTiers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the directory
}

std::string KvTiers::path_of(uint64_t hash) const { return fmt::format("{}/{:02x}/{:016x}.kvb", config_.disk_dir, hash >> 56, hash); }

void KvTiers::scan_disk() {
  struct Found {
    KvBlockFormat::Header header;
    fs::file_time_type written;
  };
  std::vector<Found> found;
  std::error_code ec;
  for_each_entry(config_.disk_dir, [&](const fs::directory_entry& bucket) {
    const std::string name = bucket.path().filename().string();
    const std::optional<uint64_t> top = name.size() == 2 ? parse_hex(name) : std::nullopt;
    if (!top || !fs::is_directory(bucket.symlink_status(ec))) return;  // not ours
    for_each_entry(bucket.path(), [&](const fs::directory_entry& file) {
      const std::string file_name = file.path().filename().string();
      if (hash_of_name(file_name, ".kvb.tmp")) {  // an interrupted write
        fs::remove(file.path(), ec);
        return;
      }
      const std::optional<uint64_t> hash = hash_of_name(file_name, ".kvb");
      if (!hash) return;  // not ours
      std::optional<KvBlockFormat::Header> header;
      if (*hash >> 56 == *top && fs::is_regular_file(file.symlink_status(ec))) header = format_.read_header(file.path().string());
      if (!header || header->hash != *hash) {
        fs::remove(file.path(), ec);  // a directory in the way stays unless empty
        ++stats_.corrupt_files;
        return;
      }
      found.push_back({std::move(*header), fs::last_write_time(file.path(), ec)});
    });
  });
  // Oldest first, so the newest ends up the most recent; then whatever the budget no longer holds goes.
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.written < b.written; });
  for (Found& f : found) disk_.insert(f.header.hash, Block{f.header.parent, std::move(f.header.tokens), nullptr, format_.file_bytes(), ++serial_});
  while (disk_.bytes() > config_.disk_bytes) {
    const uint64_t hash = disk_.oldest();
    disk_.take(hash);
    fs::remove(path_of(hash), ec);
    ++stats_.disk_evictions;
  }
}

void KvTiers::put(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens, std::span<const uint8_t> payload) {
  if (int64_t(tokens.size()) != config_.block_size || int64_t(payload.size()) != config_.block_bytes)
    fail("KV tiers: a block of {} tokens and {} bytes, expected {} and {}", tokens.size(), payload.size(), config_.block_size,
         config_.block_bytes);
  const bool to_ram = config_.block_bytes <= config_.ram_bytes;
  {
    std::lock_guard lock(mutex_);
    if (to_ram && ram_.find(hash, parent, tokens)) return ram_.touch(hash);
    if (!to_ram && !spill_wanted(hash, parent, tokens)) return;
  }
  // The copy, outside the lock: a loader thread need not wait for it.
  Block block{parent, std::vector<int32_t>(tokens.begin(), tokens.end()),
              std::make_shared<const std::vector<uint8_t>>(payload.begin(), payload.end()), config_.block_bytes, 0};
  std::lock_guard lock(mutex_);
  if (!to_ram) return spill(hash, std::move(block));
  ram_.take(hash);  // another prefix under the same hash: the newer wins
  while (ram_.bytes() + block.bytes > config_.ram_bytes) {
    const uint64_t victim = ram_.oldest();
    ++stats_.ram_evictions;
    spill(victim, ram_.take(victim));
  }
  ram_.insert(hash, std::move(block));
}

bool KvTiers::spill_wanted(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) {
  if (!disk_enabled() || format_.file_bytes() > config_.disk_bytes || queue_.find(hash, parent, tokens)) return false;
  if (disk_.find(hash, parent, tokens)) {
    disk_.touch(hash);
    return false;
  }
  if (queue_.size() > 0 && queue_.bytes() + config_.block_bytes > config_.write_queue_bytes) {
    ++stats_.disk_write_drops;
    return false;
  }
  return true;
}

void KvTiers::spill(uint64_t hash, Block block) {
  if (!spill_wanted(hash, block.parent, block.tokens)) return;
  block.serial = ++serial_;
  queue_.insert(hash, std::move(block));
  work_.notify_one();
}

void KvTiers::write_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || queue_.size() > 0; });
    if (queue_.size() == 0) return;  // stopping, and every queued block written
    const uint64_t hash = queue_.oldest();
    Block job = *queue_.find(hash);  // stays queued (and served from memory) until it is on disk
    // Room first: the file of another prefix under this name, then the least recently used.
    std::vector<uint64_t> victims;
    if (disk_.find(hash)) {
      victims.push_back(hash);
      disk_.take(hash);
    }
    while (disk_.size() > 0 && disk_.bytes() + format_.file_bytes() > config_.disk_bytes) {
      victims.push_back(disk_.oldest());
      disk_.take(victims.back());
      ++stats_.disk_evictions;
    }
    lock.unlock();
    // Only this thread creates files and nothing indexes these any more: no lock needed.
    for (uint64_t v : victims) ::unlink(path_of(v).c_str());
    const std::string path = path_of(hash);
    ::mkdir(path.substr(0, path.rfind('/')).c_str(), 0755);
    const bool ok = format_.write(path, {hash, job.parent, job.tokens}, *job.payload);
    lock.lock();
    const uint64_t serial = job.serial;
    if (ok) {
      job.payload.reset();
      job.bytes = format_.file_bytes();
      disk_.insert(hash, std::move(job));
      ++stats_.disk_writes;
    } else {
      ++stats_.disk_write_failures;
    }
    if (const Block* queued = queue_.find(hash); queued && queued->serial == serial) queue_.take(hash);
    idle_.notify_all();
  }
}

bool KvTiers::contains(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens) const {
  std::lock_guard lock(mutex_);
  return ram_.find(hash, parent, tokens) || queue_.find(hash, parent, tokens) || disk_.find(hash, parent, tokens);
}

bool KvTiers::load(uint64_t hash, uint64_t parent, std::span<const int32_t> tokens, std::span<uint8_t> out) {
  if (int64_t(out.size()) != config_.block_bytes) fail("KV tiers: a load into {} bytes, a block has {}", out.size(), config_.block_bytes);
  std::shared_ptr<const std::vector<uint8_t>> in_memory;
  uint64_t serial = 0;
  {
    std::lock_guard lock(mutex_);
    if (const Block* b = ram_.find(hash, parent, tokens)) {
      ram_.touch(hash);
      in_memory = b->payload;
    } else if (const Block* q = queue_.find(hash, parent, tokens)) {
      in_memory = q->payload;
    } else if (const Block* d = disk_.find(hash, parent, tokens)) {
      disk_.touch(hash);
      serial = d->serial;
    } else {
      ++stats_.misses;
      return false;
    }
    if (in_memory) ++stats_.ram_hits;
  }
  if (in_memory) {
    std::memcpy(out.data(), in_memory->data(), out.size());
    return true;
  }
  const std::string path = path_of(hash);
  const KvBlockFormat::Read read = format_.read(path, {hash, parent, tokens}, out);
  std::lock_guard lock(mutex_);
  if (read == KvBlockFormat::Read::Ok) {
    ++stats_.disk_hits;
    return true;
  }
  // Bad or gone. Dropped if the index still names the file read: the writer takes a name out of
  // the index before it writes there, so the file under the name is still that one.
  if (const Block* d = disk_.find(hash); d && d->serial == serial) {
    disk_.take(hash);
    ::unlink(path.c_str());
    ++stats_.corrupt_files;
  }
  ++stats_.misses;
  return false;
}

KvTiers::Stats KvTiers::stats() const {
  std::lock_guard lock(mutex_);
  Stats s = stats_;
  s.ram_blocks = int64_t(ram_.size()), s.ram_bytes = ram_.bytes();
  s.queued_blocks = int64_t(queue_.size());
  s.disk_blocks = int64_t(disk_.size()), s.disk_bytes = disk_.bytes();
  return s;
}

void KvTiers::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.size() == 0; });
}

// ---- Payload of a pool block -----------------------------------------------------------------

namespace {
// Calls f(pool bytes, payload offset, bytes) for each piece of the block, in payload order.
template <typename F>
void for_each_piece(const KvStore& store, BlockId block, int64_t payload_bytes, F&& f) {
  if (block < 0 || block >= store.layout().n_blocks) fail("KV tiers: block {} outside the pool of {}", block, store.layout().n_blocks);
  if (payload_bytes != kv_tier_block_bytes(store))
    fail("KV tiers: a block payload of {} bytes, the store's blocks have {}", payload_bytes, kv_tier_block_bytes(store));
  const int64_t n_layer = store.layout().n_layer, data = store.block_data_bytes(), scales = store.block_scale_bytes();
  for (int64_t l = 0; l < n_layer; ++l) f(store.data_region().base + store.block_data_offset(l, block), l * data, data);
  if (scales > 0)
    for (int64_t l = 0; l < n_layer; ++l)
      f(store.scale_region().base + store.block_scale_offset(l, block), n_layer * data + l * scales, scales);
}
}  // namespace

int64_t kv_tier_block_bytes(const KvStore& store) {
  return store.layout().n_layer * (store.block_data_bytes() + store.block_scale_bytes());
}

void kv_tier_gather(const KvStore& store, BlockId block, std::span<uint8_t> payload) {
  for_each_piece(store, block, int64_t(payload.size()),
                 [&](const uint8_t* pool, int64_t at, int64_t n) { std::memcpy(payload.data() + at, pool, size_t(n)); });
}

void kv_tier_scatter(KvStore& store, BlockId block, std::span<const uint8_t> payload) {
  for_each_piece(store, block, int64_t(payload.size()),
                 [&](uint8_t* pool, int64_t at, int64_t n) { std::memcpy(pool, payload.data() + at, size_t(n)); });
}

std::string kv_tier_identity(const KvLayout& layout) {
  return fmt::format("kv layers={} kv_heads={} head_dim={} block={} dtype={}{}", layout.n_layer, layout.n_kv_heads, layout.head_dim,
                     layout.block_size, kv_dtype_name(layout.dtype), layout.keys_only ? " keys_only" : "");
}

}  // namespace ridge
