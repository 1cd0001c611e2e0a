#include "grammar/plain_frames.h"

#include <algorithm>

#include "grammar/plain_tokens.h"

namespace ridge::grammar {

namespace {

// The positions after those of `from` that read `byte`, sorted.
std::vector<int32_t> advance(const FlatGrammar& g, const std::vector<int32_t>& from, uint8_t byte) {
  std::vector<int32_t> out;
  for (int32_t p : from)
    if (g.sets[g.elems[p].arg].has(byte)) out.push_back(p + 1);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

PlainFrames::Fate PlainFrames::finish(const std::vector<int32_t>& reached, int text_state) const {
  const FlatGrammar& g = grammar_;
  for (int32_t p : reached) {
    const FlatGrammar::Kind kind = g.elems[p].kind;
    // Between characters every frame must have ended; inside one, none may (nor call a rule).
    if (text_state == 0 ? kind != FlatGrammar::Kind::kEnd : kind != FlatGrammar::Kind::kBytes) return kMixed;
  }
  if (text_state == 0) return kEnds;
  std::array<uint16_t, 256> classes;
  const int n_classes = g.byte_classes(reached, classes);
  std::vector<bool> seen;
  for (const plain_text::Step& step : plain_text::steps(text_state)) {
    seen.assign(n_classes, false);
    for (int b = 0; b < 256; ++b) {
      const uint16_t c = classes[b];
      if (!step.bytes.has(static_cast<uint8_t>(b)) || seen[c]) continue;
      seen[c] = true;
      if (c == 0) return kMixed;  // dies inside the character: not rejected at its first byte
      if (finish(advance(g, reached, static_cast<uint8_t>(b)), step.next) != kEnds) return kMixed;
    }
  }
  return kEnds;
}

const std::array<PlainFrames::Fate, 256>& PlainFrames::fates(const std::vector<int32_t>& positions) {
  const std::string key(reinterpret_cast<const char*>(positions.data()), positions.size() * sizeof(int32_t));
  if (auto it = fates_.find(key); it != fates_.end()) return it->second;
  std::array<Fate, 256> out;
  out.fill(kMixed);
  std::array<uint16_t, 256> classes;
  const int n_classes = grammar_.byte_classes(positions, classes);
  for (const plain_text::Step& step : plain_text::steps(0)) {
    std::vector<int> by_class(n_classes, -1);  // the fate of this step's bytes of each class
    for (int b = 0; b < 256; ++b) {
      if (!step.bytes.has(static_cast<uint8_t>(b))) continue;
      const uint16_t c = classes[b];
      if (by_class[c] < 0)
        by_class[c] = c == 0 ? kRejected : finish(advance(grammar_, positions, static_cast<uint8_t>(b)), step.next);
      out[b] = static_cast<Fate>(by_class[c]);
    }
  }
  return fates_.emplace(key, out).first->second;
}

}  // namespace ridge::grammar
