#include "cli/parallel_options.h"

#include <cstdlib>
#include <thread>

#include "core/error.h"

namespace ridge::cli {

void add_parallel_options(CLI::App* cmd, ParallelCliOptions& o) {
  auto* g = cmd->add_option_group("Parallelism (start with mpirun -np TP*PP)");
  g->add_option("--tp,--tensor-parallel-size", o.tp, "tensor-parallel ranks: heads, FFN and vocabulary split")->capture_default_str();
  g->add_option("--pp,--pipeline-parallel-size", o.pp, "pipeline stages: contiguous layer ranges")->capture_default_str();
  g->add_option("--ep,--expert-parallel-size", o.ep, "expert-parallel ranks (1, or --tp: whole experts per rank)")
      ->capture_default_str();
  g->add_option("--pp-microbatches", o.pp_microbatches,
                "pieces each step is cut into so pipeline stages overlap (0: one per stage, and 256-token chunks of long prompts; 1: no overlap)")
      ->capture_default_str();
  g->add_flag("--enable-dp-attention", o.dp_attention,
              "MoE with --ep = --tp: attention data-parallel (each rank its own sequences), tokens sent to their "
              "experts' ranks and back by all-to-all");
  g->add_option("--helix", o.helix,
                "KV-parallel ranks (Helix; equal to --tp, which it sets when left at 1): each sequence's KV is dealt "
                "out position by position across the tensor-parallel group, each rank attends over its own "
                "positions and the partial results are merged; attention weights whole on every rank, the FFN "
                "split. For long contexts and models with few KV heads (GQA, MLA)")
      ->capture_default_str();
  g->add_option("--tp-mode", o.tp_mode,
                "gather: all-gathers after every split matrix, output bit-identical to one process; reduce: two "
                "all-reduces per layer (Megatron), about half the bytes, output within rounding")
      ->capture_default_str();
}

int helix_tp_size(int tp, int helix) {
  if (helix < 1) fail("--helix must be 1 or more, not {}", helix);
  if (helix == 1) return tp;
  if (tp != 1 && tp != helix)
    fail("--helix {} shards the KV over the tensor-parallel group: it needs --tp {} (not {})", helix, helix, tp);
  return helix;
}

dist::Parallel* parallel_for(const ParallelCliOptions& o) {
  static std::unique_ptr<dist::Parallel> made;
  if (made) return made->distributed() ? made.get() : nullptr;
  const int tp = helix_tp_size(o.tp, o.helix);
  if (o.helix > 1 && o.dp_attention) fail("--helix and --enable-dp-attention divide the sequences two ways: pick one");
  dist::ParallelSizes sizes{tp, o.pp, o.ep, o.pp_microbatches};
  sizes.kvp = o.helix;
  made = std::make_unique<dist::Parallel>(dist::make_parallel(sizes));
  dist::on_finalize([] { made.reset(); });
  return made->distributed() ? made.get() : nullptr;
}

std::unique_ptr<ShardRequest> shard_request(const dist::Parallel* p, const ParallelCliOptions& o) {
  if (!p) return nullptr;
  if (o.tp_mode != "gather" && o.tp_mode != "reduce") fail("--tp-mode must be gather or reduce, not '{}'", o.tp_mode);
  return std::make_unique<ShardRequest>(ShardRequest{p->tp_rank, p->sizes.tp, p->stage, p->sizes.pp, p->sizes.ep > 1,
                                                     o.tp_mode == "gather" ? TpMode::Gather : TpMode::Reduce,
                                                     o.dp_attention, p->sizes.kvp > 1});
}

int default_threads(int requested) {
  if (requested > 0) return requested;
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks = local ? std::max(1, std::atoi(local)) : 1;
  if (ranks == 1) return requested;
  return std::max(1, int(std::thread::hardware_concurrency()) / ranks);
}

}  // namespace ridge::cli
