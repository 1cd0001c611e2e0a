#include "kv_transfer/kv_sender.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "kv_transfer/block_runs.h"

namespace ridge::kvx {

KvSender::KvSender(KvTransport& transport, const KvStore& store, SendTarget target)
    : transport_(transport), store_(store), target_(std::move(target)) {
  const KvLayout& layout = store.layout();
  const int64_t bs = layout.block_size;
  n_blocks_ = (target_.n_positions + bs - 1) / bs;
  if (target_.n_positions <= 0) fail("KV transfer: nothing to send");
  if (target_.first_block < 0 || target_.first_block >= n_blocks_)
    fail("KV transfer: the first block to send ({}) is outside the prompt's {} blocks", target_.first_block, n_blocks_);
  if (int64_t(target_.dst_blocks.size()) != n_blocks_ - target_.first_block)
    fail("KV transfer: {} destination blocks for {} blocks to send", target_.dst_blocks.size(), n_blocks_ - target_.first_block);
  for (BlockId b : target_.dst_blocks)
    if (b < 0 || b >= target_.remote_n_blocks) fail("KV transfer: destination block {} outside the peer's {} blocks", b, target_.remote_n_blocks);
  sent_.assign(size_t(layout.n_layer), target_.first_block);
  report_.layer_sent.assign(size_t(layout.n_layer), 0);
}

double KvSender::now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

void KvSender::on_layer(int64_t layer, std::span<const BlockId> blocks, int64_t computed_end) {
  const int64_t bs = store_.layout().block_size;
  const int64_t upto = computed_end >= target_.n_positions ? n_blocks_ : std::min(n_blocks_, computed_end / bs);
  int64_t& from = sent_[size_t(layer)];
  if (upto <= from) return;
  if (int64_t(blocks.size()) < upto) fail("KV transfer: the request holds {} blocks, {} are to be sent", blocks.size(), upto);
  const std::vector<BlockRun> runs = coalesce_blocks(blocks.subspan(size_t(from), size_t(upto - from)),
                                                     std::span(target_.dst_blocks).subspan(size_t(from - target_.first_block), size_t(upto - from)));
  const int64_t data_bytes = store_.block_data_bytes(), scale_bytes = store_.block_scale_bytes();
  const uint64_t remote_data_layer = uint64_t(target_.remote_n_blocks) * uint64_t(data_bytes);
  const uint64_t remote_scale_layer = uint64_t(target_.remote_n_blocks) * uint64_t(scale_bytes);
  std::vector<KvTransport::Put> puts;
  for (const BlockRun& r : runs) {
    puts.push_back({store_.data_region().base + store_.block_data_offset(layer, r.src), 0,
                    uint64_t(layer) * remote_data_layer + uint64_t(r.dst) * uint64_t(data_bytes), uint64_t(r.n) * uint64_t(data_bytes)});
    if (scale_bytes > 0)
      puts.push_back({store_.scale_region().base + store_.block_scale_offset(layer, r.src), 1,
                      uint64_t(layer) * remote_scale_layer + uint64_t(r.dst) * uint64_t(scale_bytes), uint64_t(r.n) * uint64_t(scale_bytes)});
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& p : puts) report_.bytes += int64_t(p.bytes);
    report_.puts += int64_t(puts.size());
    report_.layer_sent[size_t(layer)] = now();
    if (report_.first_put < 0) report_.first_put = report_.layer_sent[size_t(layer)];
  }
  transport_.put(target_.peer, std::move(puts));
  from = upto;
  src_blocks_.assign(blocks.begin(), blocks.begin() + upto);
}

void KvSender::finish(std::function<void(bool ok, const std::string& error)> released) {
  {
    std::lock_guard lock(mutex_);
    report_.compute_done = now();
    report_.blocks = n_blocks_ - target_.first_block;
    if (int64_t(src_blocks_.size()) == n_blocks_)
      report_.descriptors = int64_t(coalesce_blocks(std::span(src_blocks_).subspan(size_t(target_.first_block)), target_.dst_blocks).size());
  }
  const bool complete = std::all_of(sent_.begin(), sent_.end(), [&](int64_t s) { return s == n_blocks_; });
  if (!complete) {
    released(false, "KV transfer: the prompt ended before every block was sent");
    return;
  }
  transport_.notify(target_.peer, transfer_note(target_.transfer_id), [self = shared_from_this(), released](bool ok, const std::string& error) {
    {
      std::lock_guard lock(self->mutex_);
      self->report_.transfer_done = self->now();
      self->report_.ok = ok;
      self->report_.error = error;
    }
    released(ok, error);
  });
}

SendReport KvSender::report() const {
  std::lock_guard lock(mutex_);
  return report_;
}

KvSink::Timing KvSender::timing() const {
  std::lock_guard lock(mutex_);
  Timing t{.bytes = report_.bytes};
  if (report_.transfer_done > 0 && report_.first_put >= 0) {
    t.stream_seconds = report_.transfer_done - report_.first_put;
    t.exposed_seconds = std::max(0.0, report_.transfer_done - report_.compute_done);
  }
  return t;
}

std::string transfer_note(const std::string& transfer_id) {
  return nlohmann::json{{"transfer_id", transfer_id}, {"ok", true}}.dump();
}

std::string note_transfer_id(const std::string& note) {
  const nlohmann::json j = nlohmann::json::parse(note, nullptr, false);
  if (!j.is_object() || !j.contains("transfer_id") || !j["transfer_id"].is_string()) return "";
  return j["transfer_id"].get<std::string>();
}

}  // namespace ridge::kvx
