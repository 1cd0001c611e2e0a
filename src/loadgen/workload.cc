#include "loadgen/workload.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "loadgen/dataset.h"

namespace ridge::loadgen {
namespace {

// Short, frequent words: each is one token (with its leading space) in the usual BPE vocabularies.
constexpr const char* kWords[] = {
    "the",     "of",     "and",    "to",      "in",        "is",      "you",      "that",    "it",     "he",        "was",
    "for",     "on",     "are",    "as",      "with",      "his",     "they",     "at",      "be",     "this",      "have",
    "from",    "or",     "one",    "had",     "by",        "word",    "but",      "not",     "what",   "all",       "were",
    "we",      "when",   "your",   "can",     "said",      "there",   "use",      "an",      "each",   "which",     "she",
    "do",      "how",    "their",  "if",      "will",      "up",      "other",    "about",   "out",    "many",      "then",
    "them",    "these",  "so",     "some",    "her",       "would",   "make",     "like",    "him",    "into",      "time",
    "has",     "look",   "two",    "more",    "write",     "go",      "see",      "number",  "no",     "way",       "could",
    "people",  "my",     "than",   "first",   "water",     "been",    "call",     "who",     "oil",    "its",       "now",
    "find",    "long",   "down",   "day",     "did",       "get",     "come",     "made",    "may",    "part",      "over",
    "new",     "sound",  "take",   "only",    "little",    "work",    "know",     "place",   "year",   "live",      "me",
    "back",    "give",   "most",   "very",    "after",     "thing",   "our",      "just",    "name",   "good",      "sentence",
    "man",     "think",  "say",    "great",   "where",     "help",    "through",  "much",    "before", "line",      "right",
    "too",     "mean",   "old",    "any",     "same",      "tell",    "boy",      "follow",  "came",   "want",      "show",
    "also",    "around", "form",   "three",   "small",     "set",     "put",      "end",     "does",   "another",   "well",
    "large",   "must",   "big",    "even",    "such",      "because", "turn",     "here",    "why",    "ask",       "went",
    "men",     "read",   "need",   "land",    "different", "home",    "us",       "move",    "try",    "kind",      "hand",
    "picture", "again",  "change", "off",     "play",      "spell",   "air",      "away",    "animal", "house",     "point",
    "page",    "letter", "mother", "answer",  "found",     "study",   "still",    "learn",   "should", "world",     "high",
    "every",   "near",   "add",    "food",    "between",   "own",     "below",    "country", "plant",  "last",      "school",
    "father",  "keep",   "tree",   "never",   "start",     "city",    "earth",    "eye",     "light",  "thought",   "head",
    "under",   "story",  "saw",    "left",    "few",       "while",   "along",    "might",   "close",  "something", "seem",
    "next",    "hard",   "open",   "example", "begin",     "life",    "always",   "those",   "both",   "paper",     "together",
    "got",     "group",  "often",  "run",     "important", "until",   "children", "side",    "feet",   "car",       "mile",
    "night",   "walk",   "white",  "sea",     "began",     "grow",    "took",     "river",   "four",   "carry",     "state",
    "once",    "book",   "hear",   "stop",    "without",   "second",
};

std::vector<bool> prefix_choice(int count, double fraction, std::mt19937_64& rng) {
  std::vector<int> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const int with_prefix = int(std::lround(std::clamp(fraction, 0.0, 1.0) * count));
  std::vector<bool> chosen(static_cast<size_t>(count), false);
  for (int i = 0; i < with_prefix; ++i) chosen[size_t(order[size_t(i)])] = true;
  return chosen;
}

}  // namespace

std::string synth_text(std::mt19937_64& rng, int words) {
  std::uniform_int_distribution<size_t> pick(0, std::size(kWords) - 1);
  std::string out;
  for (int i = 0; i < words; ++i) {
    if (i) out += ' ';
    out += kWords[pick(rng)];
  }
  return out;
}

std::vector<RequestSpec> build_workload(const WorkloadOptions& o, int count) {
  if (o.shared_prefix_fraction > 0 && o.shared_prefix_len <= 0) fail("--shared-prefix-fraction needs --shared-prefix-len");
  std::mt19937_64 rng(o.seed);
  std::mt19937_64 prefix_rng(o.seed ^ 0x9e3779b97f4a7c15ull);  // one prefix, whatever the request count
  const std::string prefix = o.shared_prefix_len > 0 ? synth_text(prefix_rng, o.shared_prefix_len) : "";
  const std::vector<bool> has_prefix = prefix_choice(count, o.shared_prefix_fraction, rng);

  std::vector<DatasetEntry> entries;
  if (!o.dataset.empty()) {
    entries = load_dataset(o.dataset).entries;
    std::shuffle(entries.begin(), entries.end(), rng);  // then cycled when count exceeds the file
  }
  std::vector<RequestSpec> out;
  for (int i = 0; i < count; ++i) {
    RequestSpec r;
    if (has_prefix[size_t(i)]) r.prefix = prefix;
    const int prefix_tokens = r.prefix.empty() ? 0 : o.shared_prefix_len;
    if (entries.empty()) {
      // The prefix counts inside the sampled input length; the rest has at least one word.
      const int total = o.input_len.sample(rng);
      const int words = std::max(1, total - prefix_tokens);
      r.prompt = synth_text(rng, words);
      r.input_tokens = prefix_tokens + words;
      r.max_tokens = o.output_len.sample(rng);
    } else {
      const DatasetEntry& e = entries[size_t(i) % entries.size()];
      r.prompt = e.prompt;
      r.input_tokens = prefix_tokens + e.prompt_tokens;
      r.max_tokens = o.output_len_given || !e.output_tokens ? o.output_len.sample(rng) : *e.output_tokens;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ridge::loadgen
