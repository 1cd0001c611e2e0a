#pragma once
// A Hub repository as a user names it: `ORG/REPO[@REVISION][:QUANT|:FILE]`, with or without `hf://`
// (`hf://ORG/REPO[@REVISION]/PATH` names a file too). Every part is validated here, once, so that
// nothing taken from a name (or later from the Hub's answers) can point outside the cache.
#include <string>
#include <string_view>

namespace ridge::hub {

struct RepoRef {
  std::string repo_id;           // "ORG/REPO"
  std::string revision = "main"; // a branch, tag or commit
  std::string quant;             // a GGUF quant tag ("Q4_K_M"), or ""
  std::string file;              // a file inside the repository, or ""
};

// True for "hf://..." (a model named that way is fetched, never read as a local path).
bool is_hub_uri(std::string_view arg);
// Parses either form; Error naming the offending part on anything the Hub would not accept.
RepoRef parse_repo_ref(std::string_view arg);

// The Hub's rules for an "ORG/REPO" id: two parts of [A-Za-z0-9_.-], neither starting or ending in
// '-' or '.', no "--" or "..", at most 96 characters.
bool is_valid_repo_id(std::string_view id);
// Branch / tag names: [A-Za-z0-9_.-/], no empty part, no "..", at most 256 characters.
bool is_valid_revision(std::string_view rev);
// A path inside a repository (names from a user or from the Hub): relative, '/'-separated parts that
// are neither empty, "." nor "..", no backslash or control character, at most 1024 bytes.
bool is_valid_repo_path(std::string_view path);
// A commit id as the Hub gives it: 40 lowercase hex digits.
bool is_commit_hash(std::string_view s);

}  // namespace ridge::hub
