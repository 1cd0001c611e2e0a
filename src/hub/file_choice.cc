#include "hub/file_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"

namespace ridge::hub {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return s;
}

bool contains(const std::vector<std::string>& files, const std::string& f) {
  return std::find(files.begin(), files.end(), f) != files.end();
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A GGUF holding a model (not a projector, an importance matrix or a draft head), as llama.cpp judges.
bool is_model_gguf(const std::string& path) {
  if (!path.ends_with(".gguf")) return false;
  const std::string name = base_name(path);
  for (const char* other : {"mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-"})
    if (name.find(other) != std::string::npos) return false;
  return true;
}

// "<TAG>." or "<TAG>-" anywhere in the path, ignoring case (llama.cpp's `TAG[.-]` search).
bool matches_tag(const std::string& path, const std::string& tag) {
  const std::string p = upper(path), t = upper(tag);
  for (size_t at = p.find(t); at != std::string::npos; at = p.find(t, at + 1)) {
    const size_t next = at + t.size();
    if (next < p.size() && (p[next] == '.' || p[next] == '-')) return true;
  }
  return false;
}

bool is_first_shard(const std::string& path) { return gguf_split_info(path).index == 1; }

// The file and, for a split one, every shard with its prefix and count, in order.
std::vector<std::string> with_shards(const std::vector<std::string>& repo_files, const std::string& file) {
  const GgufSplit split = gguf_split_info(file);
  if (split.count <= 1) return {file};
  std::vector<std::string> shards;
  for (int i = 1; i <= split.count; ++i) {
    const std::string shard = fmt::format("{}-{:05d}-of-{:05d}.gguf", split.prefix, i, split.count);
    if (!contains(repo_files, shard)) fail("'{}' is split in {} files but the repository has no '{}'", file, split.count, shard);
    shards.push_back(shard);
  }
  return shards;
}

std::string listing(const std::vector<std::string>& files, bool gguf_only) {
  std::string out;
  for (const std::string& f : files)
    if (!gguf_only || f.ends_with(".gguf")) out += (out.empty() ? "" : ", ") + f;
  return out.empty() ? "(none)" : out;
}

FilePlan gguf_plan(const std::vector<std::string>& repo_files, const RepoRef& ref) {
  const std::vector<std::string> tags = ref.quant.empty() ? std::vector<std::string>{"Q4_K_M", "Q8_0"}
                                                          : std::vector<std::string>{ref.quant};
  for (const std::string& tag : tags)
    for (const std::string& f : repo_files)
      if (is_model_gguf(f) && is_first_shard(f) && matches_tag(f, tag)) return {with_shards(repo_files, f), f, false};
  if (!ref.quant.empty())
    fail("{} has no GGUF file for quant '{}'; its GGUF files: {}", ref.repo_id, ref.quant, listing(repo_files, true));
  for (const std::string& f : repo_files)
    if (is_model_gguf(f) && is_first_shard(f)) return {with_shards(repo_files, f), f, false};
  fail("{} has no model GGUF file; its GGUF files: {}", ref.repo_id, listing(repo_files, true));
}

// Small files a safetensors model (or a sentence-transformers pipeline) is read with, when present.
constexpr const char* kSupportFiles[] = {
    "config.json",       "generation_config.json", "tokenizer.json",   "tokenizer_config.json",
    "special_tokens_map.json", "tokenizer.model",  "vocab.txt",        "chat_template.jinja",
    "modules.json",      "config_sentence_transformers.json", "sentence_bert_config.json",
    "model.safetensors.index.json", "model.safetensors",
};

nlohmann::json parse_json(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{} is not valid JSON: {}", what, e.what());
  }
}

}  // namespace

GgufSplit gguf_split_info(const std::string& path) {
  GgufSplit s;
  s.prefix = path.ends_with(".gguf") ? path.substr(0, path.size() - 5) : path;
  // "-00001-of-00003": 5 digits, "-of-", 5 digits (15 characters) at the end of the stem.
  const std::string& p = s.prefix;
  if (p.size() <= 15 || p[p.size() - 15] != '-' || p.compare(p.size() - 9, 4, "-of-") != 0) return s;
  const auto digits = [&](size_t at) {
    int v = 0;
    for (size_t i = at; i < at + 5; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(p[i]))) return -1;
      v = v * 10 + (p[i] - '0');
    }
    return v;
  };
  const int index = digits(p.size() - 14), count = digits(p.size() - 5);
  if (index < 1 || count < 1 || index > count) return s;
  s.index = index;
  s.count = count;
  s.prefix.resize(p.size() - 15);
  return s;
}

FilePlan choose_files(const std::vector<std::string>& repo_files, const RepoRef& ref) {
  if (!ref.file.empty()) {
    if (!contains(repo_files, ref.file))
      fail("file '{}' not found in {} at revision {}", ref.file, ref.repo_id, ref.revision);
    if (!ref.file.ends_with(".gguf")) return {{ref.file}, ref.file, false};
    const GgufSplit split = gguf_split_info(ref.file);
    const std::string first =
        split.count > 1 ? fmt::format("{}-00001-of-{:05d}.gguf", split.prefix, split.count) : ref.file;
    return {with_shards(repo_files, ref.file), first, false};
  }
  if (std::any_of(repo_files.begin(), repo_files.end(), is_model_gguf)) return gguf_plan(repo_files, ref);
  if (!contains(repo_files, "model.safetensors") && !contains(repo_files, "model.safetensors.index.json"))
    fail("{} has neither GGUF nor safetensors model files; it has: {}", ref.repo_id, listing(repo_files, false));
  if (!ref.quant.empty())
    fail("{} is a safetensors repository: a quant tag (':{}') picks among GGUF files only", ref.repo_id, ref.quant);
  FilePlan plan;
  plan.safetensors = true;
  for (const char* f : kSupportFiles)
    if (contains(repo_files, f)) plan.files.push_back(f);
  return plan;
}

std::vector<std::string> safetensors_followups(const std::vector<std::string>& repo_files, const std::string& index_json,
                                               const std::string& modules_json) {
  std::set<std::string> wanted;
  if (!index_json.empty()) {
    const nlohmann::json index = parse_json(index_json, "model.safetensors.index.json");
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
      fail("model.safetensors.index.json has no weight_map object");
    for (const auto& [tensor, shard] : index["weight_map"].items()) {
      if (!shard.is_string()) fail("model.safetensors.index.json: tensor '{}' names no shard file", tensor);
      const std::string f = shard.get<std::string>();
      if (!is_valid_repo_path(f) || !contains(repo_files, f))
        fail("model.safetensors.index.json names shard '{}', which the repository does not have", f);
      wanted.insert(f);
    }
  }
  if (!modules_json.empty()) {
    const nlohmann::json modules = parse_json(modules_json, "modules.json");
    if (!modules.is_array()) fail("modules.json is not a list of modules");
    for (const nlohmann::json& m : modules) {
      if (!m.is_object() || !m.contains("path") || !m["path"].is_string()) continue;
      const std::string dir = m["path"].get<std::string>();
      if (dir.empty()) continue;  // the transformer itself, in the repository's root
      if (!is_valid_repo_path(dir)) fail("modules.json names module path '{}', which is not a repository folder", dir);
      for (const std::string& f : repo_files)
        if (f.starts_with(dir + "/") && (f.ends_with(".json") || f.ends_with(".safetensors"))) wanted.insert(f);
    }
  }
  return {wanted.begin(), wanted.end()};
}

}  // namespace ridge::hub
