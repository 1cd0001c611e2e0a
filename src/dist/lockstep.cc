#include "dist/lockstep.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "dist/stage_forward.h"

namespace ridge::dist {
namespace {

enum class Op : int32_t { Forward = 1, CopyBlock = 2, Stop = 3 };

// Fixed-size header of every command; a Forward's payload follows in a second broadcast.
struct Command {
  Op op = Op::Stop;
  int32_t n_runs = 0;
  int64_t n_tokens = 0;
  int64_t n_block_ids = 0;
  int64_t a = 0, b = 0;  // CopyBlock: src, dst
};

struct PoolShape {
  int32_t block_size, n_blocks;
  int32_t kv_dtype;
  int64_t n_ctx;
};

struct WireRun {
  int64_t n_tokens, first_position, n_blocks, prompt_end;
  int32_t logits, pad;
};

// The payload of a Forward: tokens, runs, then every run's block ids.
std::vector<uint8_t> pack(const TokenBatch& batch, Command& c) {
  c.n_tokens = int64_t(batch.tokens.size());
  c.n_runs = int32_t(batch.runs.size());
  c.n_block_ids = 0;
  for (const SequenceRun& r : batch.runs) c.n_block_ids += int64_t(r.blocks.size());
  std::vector<uint8_t> bytes(size_t(c.n_tokens * 4 + c.n_runs * int64_t(sizeof(WireRun)) + c.n_block_ids * 4));
  uint8_t* p = bytes.data();
  std::memcpy(p, batch.tokens.data(), size_t(c.n_tokens * 4));
  p += c.n_tokens * 4;
  for (const SequenceRun& r : batch.runs) {
    const WireRun w{r.n_tokens, r.first_position, int64_t(r.blocks.size()), r.prompt_end, int32_t(r.logits), 0};
    std::memcpy(p, &w, sizeof w);
    p += sizeof w;
  }
  for (const SequenceRun& r : batch.runs) {
    std::memcpy(p, r.blocks.data(), r.blocks.size() * 4);
    p += r.blocks.size() * 4;
  }
  return bytes;
}

struct UnpackedBatch {
  std::vector<int32_t> tokens;
  std::vector<SequenceRun> runs;
  std::vector<BlockId> blocks;
};

void unpack(const std::vector<uint8_t>& bytes, const Command& c, UnpackedBatch& out) {
  const uint8_t* p = bytes.data();
  out.tokens.resize(size_t(c.n_tokens));
  std::memcpy(out.tokens.data(), p, size_t(c.n_tokens * 4));
  p += c.n_tokens * 4;
  std::vector<WireRun> wire(size_t(c.n_runs));
  std::memcpy(wire.data(), p, wire.size() * sizeof(WireRun));
  p += wire.size() * sizeof(WireRun);
  out.blocks.resize(size_t(c.n_block_ids));
  std::memcpy(out.blocks.data(), p, out.blocks.size() * 4);
  out.runs.clear();
  int64_t at = 0;
  for (const WireRun& w : wire) {
    out.runs.push_back({w.n_tokens, w.first_position, std::span<const BlockId>(out.blocks).subspan(size_t(at), size_t(w.n_blocks)),
                        LogitsWanted(w.logits), w.prompt_end});
    at += w.n_blocks;
  }
}

PagedForwardConfig config_of(const PoolShape& s, int n_threads) {
  PagedForwardConfig c;
  c.n_threads = n_threads;
  c.block_size = s.block_size;
  c.n_blocks = s.n_blocks;
  c.kv_dtype = KvDtype(s.kv_dtype);
  c.n_ctx = s.n_ctx;
  return c;
}

class LockstepForward final : public PagedForward {
 public:
  LockstepForward(const Model& model, const PagedForwardConfig& c, Parallel& parallel)
      : model_(model), parallel_(parallel) {
    if (!parallel.is_driver()) fail("only world rank 0 drives the steps");
    if (resolve_device(c.device) != Device::Cpu) fail("a model split across processes runs on the CPU (--device cpu)");
    PoolShape shape{c.block_size, c.n_blocks, int32_t(c.kv_dtype), c.n_ctx};
    parallel.world->broadcast(&shape, sizeof shape, 0);
    stage_ = std::make_unique<StageForward>(model, c, parallel);
  }
  ~LockstepForward() override {
    Command stop;
    stop.op = Op::Stop;
    parallel_.world->broadcast(&stop, sizeof stop, 0);
  }

  const ModelSpec& spec() const override { return model_.spec; }
  Device device() const override { return Device::Cpu; }
  int64_t kv_bytes() const override { return stage_->kv_bytes(); }
  void copy_block(BlockId src, BlockId dst) override {
    Command c;
    c.op = Op::CopyBlock;
    c.a = src;
    c.b = dst;
    parallel_.world->broadcast(&c, sizeof c, 0);
    stage_->copy_block(src, dst);
  }
  void forward(const TokenBatch& batch, std::vector<float>& logits) override {
    Command c;
    c.op = Op::Forward;
    std::vector<uint8_t> payload = pack(batch, c);
    parallel_.world->broadcast(&c, sizeof c, 0);
    parallel_.world->broadcast(payload.data(), int64_t(payload.size()), 0);
    stage_->forward(batch, logits);
  }
  const MoeStats* moe_stats() const override { return model_.spec.is_moe() ? &stage_->moe_stats() : nullptr; }

 private:
  const Model& model_;
  Parallel& parallel_;
  std::unique_ptr<StageForward> stage_;
};

}  // namespace

std::unique_ptr<PagedForward> make_lockstep_forward(const Model& shard_model, const PagedForwardConfig& config,
                                                    Parallel& parallel) {
  return std::make_unique<LockstepForward>(shard_model, config, parallel);
}

void run_worker(const Model& shard_model, int n_threads, Parallel& parallel) {
  Communicator& world = *parallel.world;
  PoolShape shape{};
  world.broadcast_idle(&shape, sizeof shape, 0);
  StageForward stage(shard_model, config_of(shape, n_threads), parallel);
  std::vector<uint8_t> payload;
  UnpackedBatch batch;
  std::vector<float> logits;
  for (;;) {
    Command c;
    world.broadcast_idle(&c, sizeof c, 0);
    if (c.op == Op::Stop) return;
    if (c.op == Op::CopyBlock) {
      stage.copy_block(BlockId(c.a), BlockId(c.b));
      continue;
    }
    if (c.op != Op::Forward) fail("rank {}: unknown command {} from rank 0", parallel.rank, int(c.op));
    payload.resize(size_t(c.n_tokens * 4 + c.n_runs * int64_t(sizeof(WireRun)) + c.n_block_ids * 4));
    world.broadcast(payload.data(), int64_t(payload.size()), 0);
    unpack(payload, c, batch);
    stage.forward(TokenBatch{batch.tokens, batch.runs}, logits);
  }
}

}  // namespace ridge::dist
