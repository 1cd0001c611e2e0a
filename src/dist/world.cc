#include "dist/world.h"

#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "dist/mpi_communicator.h"

namespace ridge::dist {
namespace {

std::unique_ptr<Communicator>& world_slot() {
  static std::unique_ptr<Communicator> world;
  return world;
}
bool mpi_started = false;
std::vector<std::function<void()>> finalize_hooks;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

}  // namespace

bool launched_by_mpirun() {
  return env_int("OMPI_COMM_WORLD_SIZE") > 0 || env_int("PMI_SIZE") > 0 || env_int("PMIX_SIZE") > 0 ||
         std::getenv("PMIX_RANK") != nullptr;
}

void init_world(int* argc, char*** argv) {
  if (world_slot()) return;
  if (launched_by_mpirun()) {
    if (!mpi_built()) fail("ridge was started by mpirun but built without MPI (install libopenmpi-dev and rebuild)");
    mpi_started = mpi_init(argc, argv);
    world_slot() = make_mpi_world();
  } else {
    world_slot() = make_local_communicator();
  }
}

void on_finalize(std::function<void()> hook) { finalize_hooks.push_back(std::move(hook)); }

void finalize_world() {
  while (!finalize_hooks.empty()) {
    auto hook = std::move(finalize_hooks.back());
    finalize_hooks.pop_back();
    hook();
  }
  world_slot().reset();
  if (mpi_started) mpi_finalize();
  mpi_started = false;
}

Communicator& world() {
  if (!world_slot()) world_slot() = make_local_communicator();
  return *world_slot();
}

Parallel make_parallel(const ParallelSizes& sizes) {
  Communicator& w = world();
  if (sizes.tp < 1 || sizes.pp < 1) fail("--tp and --pp must be at least 1 (got {} and {})", sizes.tp, sizes.pp);
  if (sizes.microbatches < 0) fail("--pp-microbatches must be 0 or more, got {}", sizes.microbatches);
  if (sizes.ep != 1 && sizes.ep != sizes.tp)
    fail("--ep {} must be 1 or equal to --tp {} (the tensor-parallel group holds the experts)", sizes.ep, sizes.tp);
  if (sizes.world() != w.size()) {
    if (w.size() == 1)
      fail("--tp {} --pp {} needs {} processes: start it as mpirun -np {} ridge ...", sizes.tp, sizes.pp, sizes.world(),
           sizes.world());
    fail("--tp {} x --pp {} is {} ranks, but mpirun started {}", sizes.tp, sizes.pp, sizes.world(), w.size());
  }
  Parallel p;
  p.sizes = sizes;
  p.rank = w.rank();
  p.stage = p.rank / sizes.tp;
  p.tp_rank = p.rank % sizes.tp;
  p.world = &w;
  p.tp_group = w.split(p.stage, p.tp_rank);
  return p;
}

}  // namespace ridge::dist
