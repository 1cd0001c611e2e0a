#include "core/error.h"
#include "embed/encoder_family.h"

namespace ridge {

EncoderParts load_gemma_family(const std::string& path, int, const std::string&) {
  fail("{}: Gemma 3 embedding models are not supported yet", path);
}

}  // namespace ridge
