#pragma once
// The Hugging Face cache as huggingface_hub writes it, so that both find each other's files:
//   <cache>/models--ORG--REPO/blobs/<etag>                  the bytes (etag: an LFS file's SHA-256, else its git blob id)
//   <cache>/models--ORG--REPO/blobs/<etag>.incomplete       a download in progress
//   <cache>/models--ORG--REPO/snapshots/<commit>/<path>     a relative symlink to its blob
//   <cache>/models--ORG--REPO/refs/<revision>               the commit a branch or tag was at (no newline)
//   <cache>/.locks/models--ORG--REPO/<etag>.lock            flock'd while one process downloads the blob
// Callers pass validated ids and paths (hub/repo_ref.h); every path here stays under the repo folder.
#include <string>
#include <vector>

namespace ridge::hub {

class RepoCache {
 public:
  RepoCache(const std::string& cache_dir, const std::string& repo_id);

  const std::string& folder() const { return folder_; }
  std::string blob_path(const std::string& etag) const;
  std::string incomplete_path(const std::string& etag) const { return blob_path(etag) + ".incomplete"; }
  std::string lock_path(const std::string& etag) const { return locks_ + "/" + etag + ".lock"; }
  std::string snapshot_dir(const std::string& commit) const;
  std::string snapshot_path(const std::string& commit, const std::string& file) const;

  // The commit a revision names: itself if it is a commit id, else refs/<revision>; "" if unknown.
  std::string commit_for(const std::string& revision) const;
  // refs/<revision> = commit, unless the revision is that commit (huggingface_hub's rule).
  void write_ref(const std::string& revision, const std::string& commit) const;
  // snapshots/<commit>/<file> -> ../../blobs/<etag> (one more "../" per folder in `file`).
  void link_snapshot(const std::string& commit, const std::string& file, const std::string& etag) const;
  // Whether snapshots/<commit>/<file> exists and leads to a file (a dangling link does not count).
  bool has_file(const std::string& commit, const std::string& file) const;
  // Every file of a snapshot, as repository paths ('/'-separated, sorted); none if it is absent.
  std::vector<std::string> snapshot_files(const std::string& commit) const;

 private:
  std::string folder_;
  std::string locks_;
};

// "ORG/REPO" -> "models--ORG--REPO".
std::string repo_folder_name(const std::string& repo_id);
// The symlink target from snapshots/<commit>/<file> to blobs/<etag>.
std::string relative_blob_link(const std::string& file, const std::string& etag);

}  // namespace ridge::hub
