#pragma once
// The Hub's model API: what a revision of a repository holds.
//   GET {endpoint}/api/models/{ORG}/{REPO}/revision/{REV}?blobs=true
//   -> {"sha": commit, "siblings": [{"rfilename", "blobId", "size", "lfs": {"sha256", "size"}}]}
// and where one of its files is fetched from: {endpoint}/{ORG}/{REPO}/resolve/{commit}/{path}.
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "hub/hub_http.h"

namespace ridge::hub {

struct RepoFile {
  std::string path;    // validated repository path
  std::string blob_id; // git blob id (40 hex)
  int64_t size = -1;   // bytes; -1 if the Hub did not say
  std::string sha256;  // an LFS file's SHA-256 (64 hex), "" for a file kept in git
  // The blob's name in the cache: what huggingface_hub takes from X-Linked-Etag / ETag.
  const std::string& etag() const { return sha256.empty() ? blob_id : sha256; }
};

struct RepoInfo {
  std::string commit;  // 40 hex
  std::vector<RepoFile> files;
  std::vector<std::string> paths() const;
  const RepoFile* find(const std::string& path) const;
};

// The Hub could not be reached at all (as opposed to an HTTP error): a cached snapshot may still serve.
class HubUnreachable : public Error {
 public:
  using Error::Error;
};

RepoInfo fetch_repo_info(const HubHttp& http, const std::string& endpoint, const std::string& repo_id,
                         const std::string& revision);
// The API's answer read and validated (hostile JSON gives an Error, never a path outside the repo).
RepoInfo parse_repo_info(const std::string& json_text, const std::string& repo_id);
std::string resolve_url(const std::string& endpoint, const std::string& repo_id, const std::string& commit,
                        const std::string& path);

}  // namespace ridge::hub
