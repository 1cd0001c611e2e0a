// Always compiled (outside dist/nccl/), so callers can ask before reaching for the NCCL factory.
#include "dist/nccl/nccl_built.h"

namespace ridge::dist {

bool nccl_built() {
#if defined(RIDGE_HAVE_NCCL)
  return true;
#else
  return false;
#endif
}

}  // namespace ridge::dist
