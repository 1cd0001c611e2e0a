#pragma once
// The processes one ridge run is made of, and how they divide the model. Under mpirun (a build
// with MPI) every rank of the job takes part; otherwise the process is alone. Ranks are laid out
// stage-major: world rank = stage * tp + tp_rank, so a tensor-parallel group is consecutive ranks
// (one host, or one shared-memory domain, when mpirun fills hosts in order).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dist/communicator.h"

namespace ridge::dist {

struct ParallelSizes {
  int tp = 1;  // tensor parallel: heads, FFN columns and the vocabulary split across ranks
  int pp = 1;  // pipeline parallel: contiguous layer ranges, one per stage
  int ep = 1;  // expert parallel: 1, or tp (the tensor-parallel group owns whole experts instead of slices)
  int microbatches = 0;  // pieces a pipeline cuts each step into (0: one per stage, long prompts in 256-token chunks; 1: whole)
  // Helix: 1, or tp (the tensor-parallel group holds each sequence's KV split by position, every rank
  // position p with p % tp == its rank, and attends over its own positions; partial results merged).
  int kvp = 1;
  int world() const { return tp * pp; }
};

// The default KV block: 16 positions, or under Helix 16 per rank's share (the positions the attention
// kernels read at once), so kvp times that.
inline int32_t default_kv_block_size(int kvp) { return 16 * kvp; }

struct Parallel {
  ParallelSizes sizes;
  int rank = 0;      // in the world
  int stage = 0;     // pipeline stage
  int tp_rank = 0;   // in the stage's tensor-parallel group
  Communicator* world = nullptr;
  std::unique_ptr<Communicator> tp_group;  // the ranks of this stage
  bool distributed() const { return sizes.world() > 1; }
  bool is_driver() const { return rank == 0; }  // owns HTTP, tokenization, the scheduler, sampling
  int world_rank(int of_stage, int of_tp_rank) const { return of_stage * sizes.tp + of_tp_rank; }
};

// Starts MPI when this process was launched by mpirun (its environment says so); call first in
// main. Error when launched by mpirun but built without MPI.
void init_world(int* argc, char*** argv);
// Runs the on_finalize hooks (last registered first), then ends MPI.
void finalize_world();
// What must go before MPI does (communicators made by split, say).
void on_finalize(std::function<void()> hook);
// The job's communicator (a one-rank stand-in when alone).
Communicator& world();
bool launched_by_mpirun();

// Checks tp * pp against the job's size and makes the tensor-parallel groups. Every rank calls
// it with the same sizes. Error when they do not match the job.
Parallel make_parallel(const ParallelSizes& sizes);

}  // namespace ridge::dist
