// Built without UCX (libucx-dev missing): disaggregated serving needs it.
#include "core/error.h"
#include "kv_transfer/transport.h"

namespace ridge::kvx {

std::unique_ptr<KvTransport> make_ucx_transport() {
  fail("this ridge was built without UCX: install libucx-dev (tools/setup_deps.sh) and rebuild for --role prefill|decode");
}
bool ucx_available() { return false; }

}  // namespace ridge::kvx
