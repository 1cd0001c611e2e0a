#include "engine/memory_budget.h"

#include <fmt/format.h>

#include <algorithm>

namespace ridge {
namespace {

double mib(int64_t bytes) { return double(bytes) / double(1 << 20); }

}  // namespace

MemoryBudget measure_memory_budget() {
  MemoryBudget b;
  b.limit = memory_limit();
  b.resident_at_start = memory_in_use(b.limit);
  b.reserve = std::max<int64_t>(int64_t(64) << 20, b.limit.bytes / 8);
  return b;
}

bool MemoryBudget::fit_pool(int64_t& bytes, int64_t min_bytes) {
  if (!limit.cgroup) return true;  // the machine's memory: the pool's default is a fifth of it already
  const int64_t room = limit.bytes - resident_at_start - reserve;
  if (bytes <= room) return true;
  if (room < min_bytes) return false;
  asked_kv_bytes = bytes;
  kv_bytes = bytes = room;
  return true;
}

std::string MemoryBudget::refuse(int64_t n_prompt) const {
  if (context > 0 && n_prompt >= context)
    return fmt::format("memory: under the memory limit of {:.0f} MiB ({}) the KV cache holds {} tokens; this prompt has {}",
                       mib(limit.bytes), limit.source, context, n_prompt);
  if (limit.cgroup) {
    const int64_t now = memory_in_use(limit);
    // The pool and a step's scratch were sized to fit, so memory in use reaching them is expected
    // (touched KV pages stay resident); only the last sliver before the limit refuses work.
    if (now > limit.bytes - std::max<int64_t>(int64_t(16) << 20, limit.bytes / 64))
      return fmt::format("memory: {:.0f} MiB in use of the {:.0f} MiB limit ({}); try again when running requests finish",
                         mib(now), mib(limit.bytes), limit.source);
  }
  return {};
}

std::string MemoryBudget::describe() const {
  if (!lowered()) return {};
  std::string out = fmt::format("memory: the limit of {:.0f} MiB ({}) leaves the KV pool {:.0f} MiB (it asked for {:.0f} MiB; "
                                "{:.0f} MiB in use, {:.0f} MiB kept free)",
                                mib(limit.bytes), limit.source, mib(kv_bytes), mib(asked_kv_bytes), mib(resident_at_start), mib(reserve));
  if (context > 0) out += fmt::format("; a request holds at most {} tokens, longer prompts are refused (503)", context);
  return out + "\n";
}

}  // namespace ridge
