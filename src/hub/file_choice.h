#pragma once
// Which files of a repository make the model a reference asks for. GGUF repositories follow
// llama.cpp's `-hf` rule: the quant tag (default Q4_K_M, then Q8_0, then the first model file)
// matches "<TAG>." or "<TAG>-" in a file name, case-insensitive; a split file brings all its
// shards. Safetensors repositories bring config, tokenizer and sentence-transformers files and
// every shard their index names (a second step, once the index and modules.json are here).
#include <string>
#include <vector>

#include "hub/repo_ref.h"

namespace ridge::hub {

struct FilePlan {
  std::vector<std::string> files;  // to fetch, in order
  std::string model_file;          // the file to load (a GGUF's first shard); "" = the snapshot folder
  bool safetensors = false;        // the second step (index shards, pipeline modules) is due
};

// Error (listing what the repository has) when nothing fits.
FilePlan choose_files(const std::vector<std::string>& repo_files, const RepoRef& ref);

// The second step of a safetensors repository: the shards `index_json` names and the files of the
// sentence-transformers modules `modules_json` lists ("" for an absent file), each checked against
// the repository's files.
std::vector<std::string> safetensors_followups(const std::vector<std::string>& repo_files, const std::string& index_json,
                                               const std::string& modules_json);

// "name-00002-of-00003.gguf" -> {index 2, count 3, prefix "name"}; count 1 for an unsplit file.
struct GgufSplit {
  std::string prefix;
  int index = 1;
  int count = 1;
};
GgufSplit gguf_split_info(const std::string& path);

}  // namespace ridge::hub
