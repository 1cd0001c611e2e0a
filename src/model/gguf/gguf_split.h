#pragma once
// Split GGUF files, as llama.cpp's gguf-split writes them: PREFIX-00001-of-00003.gguf ..., each a
// GGUF file holding some of the tensors, the first also the model's metadata, every one the keys
// split.no (from 0), split.count and split.tensors.count. GgufFile::open reads them as one file;
// the naming rule lives here.
#include <string>
#include <vector>

namespace ridge::gguf {

// PREFIX-0000N-of-0000M.gguf for split.no `no` (from 0) of `count`: llama.cpp's llama_split_path.
std::string split_shard_path(const std::string& prefix, int no, int count);

// Every file of the model `path` names, by the naming rule alone (nothing is opened): all shards
// for a name ending in -0000N-of-0000M.gguf, otherwise `path` itself. For sizes on disk.
std::vector<std::string> split_file_paths(const std::string& path);

}  // namespace ridge::gguf
