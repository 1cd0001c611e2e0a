#include "model/gguf/gguf_split.h"

#include <filesystem>
#include <optional>
#include <regex>

#include "core/error.h"
#include "model/gguf/gguf_file.h"

namespace ridge::gguf {
namespace {

// split.count is a u16 in llama.cpp's files.
constexpr int64_t kMaxShards = 65535;

struct SplitKeys {
  int no = 0;     // from 0
  int count = 1;
  std::optional<int64_t> n_tensors;  // in all shards together
};

// The split keys of a file that is one shard of several; nullopt for a whole file.
std::optional<SplitKeys> split_keys(const GgufFile& file, const std::string& path) {
  try {
    const auto count = file.get_int("split.count");
    if (!count || *count == 1) return std::nullopt;
    if (*count < 1 || *count > kMaxShards) fail("split.count is {} (1..{} allowed)", *count, kMaxShards);
    const auto no = file.get_int("split.no");
    if (!no) fail("split.count is {} but split.no is missing", *count);
    if (*no < 0 || *no >= *count) fail("split.no is {}, outside 0..{}", *no, *count - 1);
    return SplitKeys{int(*no), int(*count), file.get_int("split.tensors.count")};
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

// The PREFIX of a shard's path, by llama.cpp's llama_split_prefix: the name must end in the
// -0000N-of-0000M.gguf its own split keys give, or its sibling shards cannot be found.
std::string split_prefix(const std::string& path, const SplitKeys& keys) {
  const std::string ending = fmt::format("-{:05d}-of-{:05d}.gguf", keys.no + 1, keys.count);
  if (path.size() <= ending.size() || !path.ends_with(ending))
    fail("{}: the file is shard {} of a split model of {} files, but its name does not end in '{}', so the other shards "
         "cannot be found (keep the names gguf-split gave them)",
         path, keys.no + 1, keys.count, ending);
  return path.substr(0, path.size() - ending.size());
}

// A shard known not to be there; any other trouble (a loop of links, no permission) is for the
// open that follows to name.
bool is_missing(const std::string& path) {
  std::error_code ec;
  return !std::filesystem::exists(path, ec) && !ec;
}

}  // namespace

std::string split_shard_path(const std::string& prefix, int no, int count) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, no + 1, count);
}

std::vector<std::string> split_file_paths(const std::string& path) {
  static const std::regex kShardName(R"((.+)-(\d{5})-of-(\d{5})\.gguf)");
  std::smatch m;
  if (!std::regex_match(path, m, kShardName)) return {path};
  const int no = std::stoi(m[2].str()), count = std::stoi(m[3].str());
  if (no < 1 || no > count) return {path};
  std::vector<std::string> paths;
  for (int i = 0; i < count; ++i) paths.push_back(split_shard_path(m[1].str(), i, count));
  return paths;
}

GgufFile GgufFile::open(const std::string& path) {
  GgufFile file = open_one(path);
  const auto keys = split_keys(file, path);
  if (!keys) return file;
  const std::string prefix = split_prefix(path, *keys);
  if (keys->no == 0) {
    file.add_split_shards(path);
    return file;
  }
  // Named by a later shard: the metadata is in the first.
  const std::string first = split_shard_path(prefix, 0, keys->count);
  if (is_missing(first))
    fail("{} is shard {} of a split model of {} files; its first shard '{}' is missing (pass the first shard)", path,
         keys->no + 1, keys->count, first);
  file = open_one(first);
  const auto first_keys = split_keys(file, first);
  if (!first_keys || first_keys->no != 0 || first_keys->count != keys->count)
    fail("{}: expected shard 1 of {} (from '{}'), but its split keys say {}", first, keys->count, path,
         first_keys ? fmt::format("shard {} of {}", first_keys->no + 1, first_keys->count) : "it is not split");
  file.add_split_shards(first);
  return file;
}

// Appends the tensors of shards 2..N to the first shard's file (this), each still pointing into
// its own shard's map.
void GgufFile::add_split_shards(const std::string& first_path) {
  const SplitKeys first = *split_keys(*this, first_path);
  const std::string prefix = split_prefix(first_path, first);
  for (int no = 1; no < first.count; ++no) {
    const std::string path = split_shard_path(prefix, no, first.count);
    if (is_missing(path))
      fail("{}: split model of {} files, but shard {} '{}' is missing", first_path, first.count, no + 1, path);
    GgufFile shard = open_one(path);
    const auto keys = split_keys(shard, path);
    if (!keys) fail("{}: named as shard {} of {} of '{}', but it has no split.count (not a shard)", path, no + 1, first.count, first_path);
    if (keys->count != first.count)
      fail("{}: split.count is {}, but the first shard '{}' says {}", path, keys->count, first_path, first.count);
    if (keys->no != no) fail("{}: split.no is {}, expected {} from its name", path, keys->no, no);
    if (keys->n_tensors && first.n_tensors && *keys->n_tensors != *first.n_tensors)
      fail("{}: split.tensors.count is {}, but the first shard '{}' says {}", path, *keys->n_tensors, first_path, *first.n_tensors);
    for (auto& t : shard.tensors_) {
      if (tensor_index_.count(t.name)) fail("{}: tensor '{}' is also in an earlier shard of '{}'", path, t.name, first_path);
      tensor_index_.emplace(t.name, tensors_.size());
      tensors_.push_back(std::move(t));
    }
    maps_.push_back(std::move(shard.maps_[0]));
    shards_.push_back(shard.shards_[0]);
  }
  if (first.n_tensors && *first.n_tensors != int64_t(tensors_.size()))
    fail("{}: split.tensors.count says {} tensors, but the {} shards hold {}", first_path, *first.n_tensors, first.count,
         tensors_.size());
}

}  // namespace ridge::gguf
