#include "loadgen/dataset.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

namespace ridge::loadgen {
namespace {

using nlohmann::json;

std::string text_of(const json& turn, const char* key) {
  const auto it = turn.find(key);
  return it != turn.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_prompt_role(const std::string& role) { return role == "human" || role == "user"; }
bool is_reply_role(const std::string& role) {
  return role == "gpt" || role == "assistant" || role == "chatgpt" || role == "bard" || role == "model";
}

// ShareGPT ("from"/"value") and chat ("role"/"content") turns: the first prompt turn and the reply after it.
std::optional<DatasetEntry> from_conversation(const json& turns) {
  if (!turns.is_array()) return std::nullopt;
  std::optional<DatasetEntry> entry;
  for (const auto& turn : turns) {
    if (!turn.is_object()) continue;
    const std::string role = turn.contains("from") ? text_of(turn, "from") : text_of(turn, "role");
    const std::string text = turn.contains("value") ? text_of(turn, "value") : text_of(turn, "content");
    if (!entry && is_prompt_role(role) && !text.empty()) {
      entry = DatasetEntry{text, estimate_tokens(text), std::nullopt};
    } else if (entry && is_reply_role(role)) {
      if (!text.empty()) entry->output_tokens = estimate_tokens(text);
      break;
    }
  }
  return entry;
}

std::optional<DatasetEntry> from_record(const json& record) {
  if (!record.is_object()) return std::nullopt;
  if (record.contains("conversations")) return from_conversation(record["conversations"]);
  if (record.contains("messages")) return from_conversation(record["messages"]);
  const std::string prompt = text_of(record, "prompt");
  if (prompt.empty()) return std::nullopt;
  DatasetEntry entry{prompt, estimate_tokens(prompt), std::nullopt};
  const auto max_tokens = record.find("max_tokens");
  if (max_tokens != record.end() && max_tokens->is_number_integer() && max_tokens->get<int64_t>() > 0)
    entry.output_tokens = int(std::min<int64_t>(max_tokens->get<int64_t>(), 1 << 30));
  return entry;
}

void add(Dataset& out, const json& record) {
  if (auto entry = from_record(record)) {
    out.entries.push_back(std::move(*entry));
  } else {
    ++out.skipped;
  }
}

}  // namespace

int estimate_tokens(std::string_view text) { return std::max(1, int(std::lround(double(text.size()) / 4.0))); }

Dataset parse_dataset(std::string_view text, const std::string& where) {
  Dataset out;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {  // the original ShareGPT file is one array
    const json records = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (records.is_discarded()) fail("{}: not valid JSON", where);
    for (const auto& record : records) add(out, record);
    return out;
  }
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) fail("{}:{}: not valid JSON", where, line_no);
    add(out, record);
  }
  return out;
}

Dataset load_dataset(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open dataset '{}'", path);
  std::stringstream bytes;
  bytes << in.rdbuf();
  Dataset out = parse_dataset(bytes.str(), path);
  if (out.entries.empty()) fail("dataset '{}' has no usable prompts", path);
  return out;
}

}  // namespace ridge::loadgen
