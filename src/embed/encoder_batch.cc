#include "embed/encoder_batch.h"

#include "core/error.h"

namespace ridge {

void EncoderBatch::add(const std::vector<int32_t>& ids, const std::vector<int32_t>* types) {
  if (types && types->size() != ids.size()) fail("a text's type ids and token ids differ in length");
  if (types && type_ids.size() != tokens.size()) fail("a batch mixes texts with and without type ids");
  if (!types && !type_ids.empty()) type_ids.resize(tokens.size() + ids.size(), 0);
  tokens.insert(tokens.end(), ids.begin(), ids.end());
  if (types) type_ids.insert(type_ids.end(), types->begin(), types->end());
  begin.push_back(int64_t(tokens.size()));
}

}  // namespace ridge
