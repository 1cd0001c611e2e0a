#pragma once
// Prompts replayed from a file: JSON Lines (or one JSON array) of either ShareGPT conversations,
// {"conversations": [{"from": "human", "value": ...}, {"from": "gpt", "value": ...}]} (the first
// human turn is the prompt, the reply after it gives the output length), chat messages
// {"messages": [{"role": "user", "content": ...}, ...]}, or plain {"prompt": ..., "max_tokens": ...}.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::loadgen {

struct DatasetEntry {
  std::string prompt;
  int prompt_tokens = 0;             // estimated (no tokenizer here)
  std::optional<int> output_tokens;  // the line's max_tokens, else the recorded reply's estimated length
};

struct Dataset {
  std::vector<DatasetEntry> entries;
  int skipped = 0;  // records with no usable prompt (no human turn, empty text)
};

// Rough token count of free text for servers that report no usage: about four characters a token.
int estimate_tokens(std::string_view text);

// `where` names the source in error messages.
Dataset parse_dataset(std::string_view text, const std::string& where);
Dataset load_dataset(const std::string& path);

}  // namespace ridge::loadgen
