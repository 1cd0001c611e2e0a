#pragma once
// Ranks in lockstep: world rank 0 (the driver) owns HTTP, tokenization, the scheduler and
// sampling; before each step it broadcasts what the step does — the batch's tokens, runs and
// block tables, or a copy-on-write block copy — and every rank then runs its StageForward on it.
// The scheduler and the KV block manager exist on rank 0 only: the other ranks' KV stores mirror
// its block ids. Rank 0's PagedForward is the LockstepForward below, so nothing above the runner
// knows the model is split.
#include <memory>

#include "backend/paged_forward.h"
#include "dist/world.h"

namespace ridge::dist {

// Rank 0's forward pass over all ranks; its construction sends the KV pool's shape to the
// workers, its destruction tells them to stop.
std::unique_ptr<PagedForward> make_lockstep_forward(const Model& shard_model, const PagedForwardConfig& config,
                                                    Parallel& parallel);

// A worker rank's whole life: waits for the driver's pool shape, then runs every step it is
// sent until the driver stops. n_threads: this rank's threads.
void run_worker(const Model& shard_model, int n_threads, Parallel& parallel);

}  // namespace ridge::dist
