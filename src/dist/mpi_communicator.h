#pragma once
// Communicator over MPI (Open MPI: shared memory inside a host, TCP or UCX between hosts). Built
// when CMake finds MPI (RIDGE_HAVE_MPI).
#include <memory>

#include "dist/communicator.h"

namespace ridge::dist {

// MPI_Init_thread (serialized calls from any thread); false when this build has no MPI.
bool mpi_init(int* argc, char*** argv);
void mpi_finalize();
bool mpi_built();
// MPI_COMM_WORLD, after mpi_init.
std::unique_ptr<Communicator> make_mpi_world();
// Ends every rank of the job (a peer that is lost leaves no other way out of a collective).
[[noreturn]] void mpi_abort(int code);

}  // namespace ridge::dist
