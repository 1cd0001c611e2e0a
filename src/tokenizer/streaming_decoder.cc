// Streaming decode: pieces are concatenated and cut at the last complete UTF-8 character, so an
// emoji split over several byte tokens is emitted whole once its last byte arrives.
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace ridge {

std::string StreamingDecoder::push(int32_t id) {
  pending_ += tokenizer_.token_to_piece(id);
  const size_t complete = utf8::complete_prefix_length(pending_);
  // Bytes that can never become valid are replaced now rather than held back.
  std::string out = utf8::sanitize(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return out;
}

std::string StreamingDecoder::flush() {
  std::string out = utf8::sanitize(pending_);
  pending_.clear();
  return out;
}

}  // namespace ridge
