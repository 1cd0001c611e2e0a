#include "grammar/plain_runs.h"

#include <algorithm>
#include <vector>

#include "grammar/plain_tokens.h"

namespace ridge::grammar {

namespace {

constexpr int32_t kUnset = -3;

// Folds one character's outcome into the outcome shared by all of them so far.
int32_t merge(int32_t so_far, int32_t next) {
  if (so_far == kUnset) return next;
  return so_far == next ? so_far : PlainRuns::kMixed;
}

}  // namespace

int32_t PlainRuns::outcome(Pda::StateId next, int text_state) {
  if (pda_.popped(next)) return kMixed;
  return text_state == 0 ? next : rest_of_char(next, text_state);
}

int32_t PlainRuns::rest_of_char(Pda::StateId s, int text_state) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(s)) << 8) | static_cast<uint64_t>(text_state);
  if (auto it = rests_.find(key); it != rests_.end()) return it->second;
  std::array<uint16_t, 256> classes;
  const int n_classes = pda_.byte_classes(s, classes);
  std::vector<bool> seen;
  int32_t out = kUnset;
  for (const plain_text::Step& step : plain_text::steps(text_state)) {
    seen.assign(n_classes, false);
    for (int b = 0; b < 256 && out != kMixed; ++b) {
      const uint16_t c = classes[b];
      if (!step.bytes.has(static_cast<uint8_t>(b)) || seen[c]) continue;
      seen[c] = true;
      // A byte no stack reads here kills the character past its first byte: neither one state
      // nor rejected at the lead.
      out = c == 0 ? kMixed : merge(out, outcome(pda_.step(s, static_cast<uint8_t>(b)), step.next));
    }
  }
  rests_[key] = out;
  return out;
}

bool PlainRuns::leads_by_frames(Pda::StateId s, Info& out) {
  const FlatGrammar& g = pda_.grammar();
  std::vector<int32_t> positions;
  int32_t parent = -1;
  for (int32_t node : pda_.stacks(s)) {
    const int32_t pos = pda_.node_pos(node);
    const ByteSet& bytes = g.sets[g.elems[pos].arg];
    bool reads_plain = false;
    for (int w = 0; w < 4; ++w) reads_plain = reads_plain || (bytes.words[w] & plain_text::leads().words[w]);
    if (!reads_plain) continue;  // rejects every plain character at its first byte
    if (parent >= 0 && pda_.node_parent(node) != parent) return false;
    parent = pda_.node_parent(node);
    positions.push_back(pos);
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  const std::array<PlainFrames::Fate, 256>& fates = frames_.fates(positions);
  for (int b = 0; b < 256; ++b)
    if (plain_text::leads().has(static_cast<uint8_t>(b)) && fates[b] == PlainFrames::kMixed) return false;
  int32_t after = kUnset;  // the parent's closure, once needed
  for (int b = 0; b < 256; ++b) {
    if (!plain_text::leads().has(static_cast<uint8_t>(b))) continue;
    int32_t lead = kDead;
    if (parent >= 0 && fates[b] == PlainFrames::kEnds) {
      if (after == kUnset) after = pda_.expand_node(parent);
      lead = pda_.popped(after) ? kMixed : after;
    }
    out.lead[b] = lead;
  }
  return true;
}

void PlainRuns::leads_by_steps(Pda::StateId s, Info& out) {
  std::array<uint16_t, 256> classes;
  const int n_classes = pda_.byte_classes(s, classes);
  std::vector<Pda::StateId> after(n_classes, kUnset);  // by class: the state after its bytes
  for (const plain_text::Step& step : plain_text::steps(0))
    for (int b = 0; b < 256; ++b) {
      if (!step.bytes.has(static_cast<uint8_t>(b))) continue;
      const uint16_t c = classes[b];
      int32_t lead = kDead;
      if (c != 0) {
        if (after[c] == kUnset) after[c] = pda_.step(s, static_cast<uint8_t>(b));
        lead = outcome(after[c], step.next);
      }
      out.lead[b] = lead;
    }
}

PlainRuns::Info& PlainRuns::info(Pda::StateId s) {
  if (auto it = infos_.find(s); it != infos_.end()) return *it->second;
  auto made = std::make_unique<Info>();
  made->lead.fill(kMixed);
  if (!leads_by_frames(s, *made)) leads_by_steps(s, *made);
  int32_t any = kUnset;
  for (int b = 0; b < 256; ++b) {
    if (!plain_text::leads().has(static_cast<uint8_t>(b))) continue;
    if (made->lead[b] == kDead)
      made->dead.add(static_cast<uint8_t>(b));
    else
      any = merge(any, made->lead[b]);
  }
  made->any = any == kUnset ? kDead : any;
  return *infos_.emplace(s, std::move(made)).first->second;
}

int32_t PlainRuns::after_char(Pda::StateId s, uint8_t lead) { return info(s).lead[lead]; }

int32_t PlainRuns::after_any_char(Pda::StateId s) { return info(s).any; }

const ByteSet& PlainRuns::dead_leads(Pda::StateId s) { return info(s).dead; }

PlainRuns::Run PlainRuns::run_from(Pda::StateId s) {
  // Follow after_any_char until it fails, the rejected leads change, a state already known, a
  // cycle (an unbounded string), or cap.
  const ByteSet dead = info(s).dead;
  std::vector<Pda::StateId> path;
  Run base;
  bool exact = true;  // base is the run of the state after the path, not a lower bound
  for (Pda::StateId x = s;;) {
    Info& in = info(x);
    if (in.dead != dead) {  // ends the run; its own run is another matter
      base = Run{0, in.any == kDead, dead};
      break;
    }
    if (in.run_known) {
      base = in.run;
      break;
    }
    bool cycle = false;
    for (Pda::StateId p : path) cycle = cycle || p == x;
    if (cycle) {
      base = Run{cap_, false, dead};
      break;
    }
    if (static_cast<int32_t>(path.size()) >= cap_) {
      base = Run{0, false, dead};
      exact = false;
      break;
    }
    if (in.any < 0) {
      base = Run{0, in.any == kDead, dead};
      in.run = base;
      in.run_known = true;
      break;
    }
    path.push_back(x);
    x = in.any;
  }
  // Each state on the path reads one character more than the one after it.
  for (size_t i = path.size(); i-- > 0;) {
    const int32_t length = std::min<int64_t>(cap_, base.length + static_cast<int64_t>(path.size() - i));
    if (!exact && length < cap_) continue;  // only a lower bound
    Info& in = info(path[i]);
    in.run = Run{length, base.dead_after, dead};
    in.run_known = true;
  }
  Info& in = info(s);
  return in.run_known ? in.run : Run{cap_, false, dead};
}

}  // namespace ridge::grammar
