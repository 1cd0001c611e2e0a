// The build without MPI: one process only (compiled when CMake finds no MPI).
#include <cstdlib>

#include "core/error.h"
#include "dist/mpi_communicator.h"

namespace ridge::dist {

bool mpi_built() { return false; }
bool mpi_init(int*, char***) { return false; }
void mpi_finalize() {}
std::unique_ptr<Communicator> make_mpi_world() { fail("this ridge was built without MPI (install libopenmpi-dev and rebuild)"); }
void mpi_abort(int code) { std::_Exit(code); }

}  // namespace ridge::dist
