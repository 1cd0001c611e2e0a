// libFuzzer target for chat::ReasoningSplitter (see fuzz/README.md): streamed model output split into
// reasoning and content must not depend on how the stream was cut.
// Input: byte 0: flags (bit 0: the prompt left the thinking open; bits 1-2: the tags -- <think>,
// Command R's, Seed's, or <NAME> </NAME> with NAME from the input; bit 3: the last piece is pushed
// with final=true rather than followed by an empty final push); byte 1: the number of cuts (% 16),
// then one byte per cut (its position, % (text size + 1)); with bits 1-2 = 3, a length byte
// (1 + % 6) and NAME; the rest is the text. The deltas of the pieces, concatenated, must equal
// reasoning() / content(), and those must equal what one final push of the whole text gives.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/reasoning.h"
#include "fuzz_common.h"

namespace {

using ridge::fuzz::check;

struct Reader {
  const uint8_t* data;
  size_t size;
  uint8_t byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  const uint8_t flags = in.byte();
  const bool starts_open = flags & 1;
  const bool last_is_final = flags & 8;
  const size_t n_cuts = in.byte() % 16;
  std::vector<uint8_t> cut_bytes;
  for (size_t i = 0; i < n_cuts; ++i) cut_bytes.push_back(in.byte());
  ridge::chat::ReasoningTags tags;
  switch ((flags >> 1) & 3) {
    case 0: break;  // <think> </think>
    case 1: tags = {"<|START_THINKING|>", "<|END_THINKING|>"}; break;
    case 2: tags = {"<seed:think>", "</seed:think>"}; break;
    default: {
      std::string name;
      for (size_t n = 1 + in.byte() % 6; n > 0; --n) name += char(in.byte());
      tags = {"<" + name + ">", "</" + name + ">"};
    }
  }
  const std::string text(reinterpret_cast<const char*>(in.data), in.size);

  std::vector<size_t> cuts;
  for (uint8_t b : cut_bytes) cuts.push_back(b % (text.size() + 1));
  cuts.push_back(0);
  cuts.push_back(text.size());
  std::sort(cuts.begin(), cuts.end());

  ridge::chat::ReasoningSplitter streamed(tags, starts_open);
  std::string reasoning, content;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const bool final = last_is_final && i + 2 == cuts.size();
    const auto delta = streamed.push(std::string_view(text).substr(cuts[i], cuts[i + 1] - cuts[i]), final);
    reasoning += delta.reasoning;
    content += delta.content;
  }
  if (!last_is_final) {
    const auto delta = streamed.push("", true);
    reasoning += delta.reasoning;
    content += delta.content;
  }
  check(reasoning == streamed.reasoning());
  check(content == streamed.content());

  ridge::chat::ReasoningSplitter whole(tags, starts_open);
  const auto delta = whole.push(text, true);
  check(delta.reasoning == whole.reasoning() && delta.content == whole.content());
  check(streamed.reasoning() == whole.reasoning());
  check(streamed.content() == whole.content());
  check(streamed.closed() == whole.closed());
  check(streamed.thinking() == whole.thinking());
  // Nothing is lost but tags and the whitespace trimmed around them.
  check(whole.reasoning().size() + whole.content().size() <= text.size());
  // Output that does not open with the tag is all content, byte for byte.
  const size_t first = text.find_first_not_of(" \n\r\t");
  if (!starts_open && (first == std::string::npos || std::string_view(text).substr(first).rfind(tags.open, 0) != 0))
    check(whole.content() == text && whole.reasoning().empty() && !whole.closed());
  return 0;
}
