#pragma once
// --tp / --pp / --ep on the commands that run the engine, and what a rank does with them: world
// rank 0 runs the command as usual over a split model; every other rank only serves its part of
// each step (dist/lockstep.h) until rank 0 is done.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "dist/world.h"
#include "model/shard.h"

namespace ridge::cli {

struct ParallelCliOptions {
  int tp = 1, pp = 1, ep = 1;
  int pp_microbatches = 0;
  int helix = 1;  // KV-parallel ranks (Helix): the tensor-parallel group shards every sequence's KV by position
  bool dp_attention = false;
  std::string tp_mode = "gather";  // gather (bit-identical to one process) or reduce (Megatron all-reduce)
};

void add_parallel_options(CLI::App* cmd, ParallelCliOptions& o);

// --helix N shards the KV over the tensor-parallel group: --tp defaults to N and must equal it.
// Returns the tensor-parallel size; error on a size below 1 or a --tp that differs.
int helix_tp_size(int tp, int helix);

// The job's layout when it is split (tp * pp > 1, started by mpirun), else null. Made once.
dist::Parallel* parallel_for(const ParallelCliOptions& o);
// What this rank holds of the model; null when it is not split.
std::unique_ptr<ShardRequest> shard_request(const dist::Parallel* parallel, const ParallelCliOptions& o);
// Threads when -t is not given: the cores divided among the ranks on this host.
int default_threads(int requested);

}  // namespace ridge::cli
