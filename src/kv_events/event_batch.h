#pragma once
// KV cache events in vLLM's wire schema (vllm/distributed/kv_events.py), as MessagePack, byte for
// byte what msgspec writes for vLLM's structs holding the same values.
//
// A batch is a positional array [ts (float64 seconds since the epoch), [event, ...], data_parallel_rank | nil].
// An event is a tagged struct, in one of two encodings:
//   array (vLLM's form until mid-2026, read by every router version): the tag, then every field in order
//     ["BlockStored", block_hashes, parent_block_hash | nil, token_ids, block_size, lora_id, medium, lora_name,
//      extra_keys, group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window]
//     ["BlockRemoved", block_hashes, medium, group_idx]
//     ["AllBlocksCleared"]
//   map (vLLM's form since it dropped array_like for events): {"type": "BlockStored", "block_hashes": ...,
//     ...}, leaving out the fields that are at their default (omit_defaults): here extra_keys, group_idx
//     and kv_cache_spec_*, which ridge does not fill (nil in the array form).
// Ridge has no LoRA: lora_id and lora_name are nil. Block hashes are the prefix cache's uint64 chained keys.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::kv_events {

struct KvEvent {
  enum class Kind { kStored, kRemoved, kAllCleared };
  Kind kind = Kind::kStored;
  std::vector<uint64_t> block_hashes;  // kStored, kRemoved
  std::optional<uint64_t> parent;      // kStored: the key of the block before the first
  std::vector<int32_t> token_ids;      // kStored: block_size per block
  int32_t block_size = 0;              // kStored
};

enum class EventEncoding { kArray, kMap };
std::optional<EventEncoding> parse_event_encoding(std::string_view name);  // "array", "map"

struct BatchFormat {
  EventEncoding encoding = EventEncoding::kArray;
  std::optional<std::string> medium;               // where the blocks live: "GPU", "CPU"; nil when unset
  std::optional<int32_t> data_parallel_rank = 0;   // vLLM's publisher fills in its rank (nil: none)
};

// One batch's MessagePack bytes.
std::string encode_event_batch(double ts, std::span<const KvEvent> events, const BatchFormat& format);

}  // namespace ridge::kv_events
