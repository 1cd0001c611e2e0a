#include "eval/humaneval_data.h"

#include <zlib.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/model_store.h"

namespace ridge::eval {
namespace {

// The whole file, inflated when it is gzip (zlib reads plain files unchanged).
std::string read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail("cannot read '{}'", path);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string why = n < 0 ? std::string(msg ? msg : "read error") : std::string();
  gzclose(f);
  if (n < 0) fail("'{}': {}", path, why);
  return out;
}

std::string required_string(const nlohmann::json& j, const char* key, const std::string& path, int line) {
  if (!j.contains(key) || !j[key].is_string()) fail("{} line {}: no string field '{}'", path, line, key);
  return j[key].get<std::string>();
}

}  // namespace

std::vector<CodeProblem> load_code_problems(const std::string& path) {
  const std::string text = read_maybe_gzip(path);
  std::vector<CodeProblem> problems;
  size_t pos = 0;
  for (int line = 1; pos < text.size(); ++line) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string row = text.substr(pos, end - pos);
    pos = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(row);
    } catch (const nlohmann::json::exception& e) {
      fail("{} line {}: {}", path, line, e.what());
    }
    if (!j.is_object()) fail("{} line {}: not a JSON object", path, line);
    CodeProblem p;
    p.task_id = required_string(j, "task_id", path, line);
    p.prompt = required_string(j, "prompt", path, line);
    p.entry_point = required_string(j, "entry_point", path, line);
    p.test = required_string(j, "test", path, line);
    if (j.contains("canonical_solution") && j["canonical_solution"].is_string()) p.canonical_solution = j["canonical_solution"];
    problems.push_back(std::move(p));
  }
  if (problems.empty()) fail("'{}' holds no problems", path);
  return problems;
}

std::string default_humaneval_path() { return ridge_home() + "/data/HumanEval.jsonl.gz"; }

}  // namespace ridge::eval
