#include "bench/kv_transfer_bench.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "core/error.h"
#include "kv_transfer/transport.h"

namespace ridge::bench {

std::vector<KvTransferResult> run_kv_transfer_bench(const std::string& transport, int64_t region_bytes,
                                                    const std::vector<int64_t>& put_sizes, int passes) {
  auto make = [&] { return transport == "loopback" ? kvx::make_loopback_transport() : kvx::make_ucx_transport(); };
  auto sender = make(), receiver = make();
  receiver->allocate(size_t(region_bytes));
  std::vector<uint8_t> source(static_cast<size_t>(region_bytes));
  for (size_t i = 0; i < source.size(); ++i) source[i] = uint8_t(i * 131);
  std::mutex mutex;
  std::condition_variable cv;
  int notes = 0;
  receiver->on_note([&](const std::string&) {
    std::lock_guard lock(mutex);
    ++notes;
    cv.notify_all();
  });
  const std::string peer = receiver->address();
  std::vector<KvTransferResult> results;
  for (int64_t size : put_sizes) {
    if (size <= 0 || size > region_bytes) fail("put size {} outside 1..{}", size, region_bytes);
    KvTransferResult r;
    r.put_bytes = size;
    r.total_bytes = region_bytes / size * size;
    double sum = 0;
    for (int pass = 0; pass <= passes; ++pass) {  // pass 0 warms up: the receiver's pages are touched once
      const auto start = std::chrono::steady_clock::now();
      std::vector<kvx::KvTransport::Put> puts;
      for (int64_t off = 0; off + size <= region_bytes; off += size) puts.push_back({source.data() + off, 0, uint64_t(off), uint64_t(size)});
      sender->put(peer, std::move(puts));
      bool ok = false;
      std::string error;
      int want;
      {
        std::lock_guard lock(mutex);
        want = notes + 1;
      }
      sender->notify(peer, "pass", [&](bool k, const std::string& e) {
        std::lock_guard lock(mutex);
        ok = k;
        error = e;
      });
      std::unique_lock lock(mutex);
      if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return notes >= want; })) fail("kv-transfer bench: no note within 60 s");
      lock.unlock();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (pass == 0) continue;
      const double gbs = double(r.total_bytes) / s / 1e9;
      r.gbs = std::max(r.gbs, gbs);
      sum += gbs;
    }
    r.mean_gbs = sum / passes;
    results.push_back(r);
  }
  return results;
}

}  // namespace ridge::bench
