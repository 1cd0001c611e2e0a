#include "hub/cache_layout.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

#include "core/error.h"
#include "hub/repo_ref.h"

namespace ridge::hub {

namespace fs = std::filesystem;

std::string repo_folder_name(const std::string& repo_id) {
  std::string name = "models--" + repo_id;
  const size_t slash = name.find('/');
  if (slash != std::string::npos) name.replace(slash, 1, "--");
  return name;
}

std::string relative_blob_link(const std::string& file, const std::string& etag) {
  std::string up = "../../";
  for (char c : file)
    if (c == '/') up += "../";
  return up + "blobs/" + etag;
}

RepoCache::RepoCache(const std::string& cache_dir, const std::string& repo_id)
    : folder_(cache_dir + "/" + repo_folder_name(repo_id)), locks_(cache_dir + "/.locks/" + repo_folder_name(repo_id)) {
  if (!is_valid_repo_id(repo_id)) fail("'{}' is not a valid Hub repository id", repo_id);
}

std::string RepoCache::blob_path(const std::string& etag) const { return folder_ + "/blobs/" + etag; }

std::string RepoCache::snapshot_dir(const std::string& commit) const { return folder_ + "/snapshots/" + commit; }

std::string RepoCache::snapshot_path(const std::string& commit, const std::string& file) const {
  return snapshot_dir(commit) + "/" + file;
}

std::string RepoCache::commit_for(const std::string& revision) const {
  if (is_commit_hash(revision)) return revision;
  std::ifstream in(folder_ + "/refs/" + revision);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  std::string commit = text.str();
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r')) commit.pop_back();
  return is_commit_hash(commit) ? commit : "";
}

void RepoCache::write_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;
  const fs::path ref = folder_ + "/refs/" + revision;
  std::error_code ec;
  fs::create_directories(ref.parent_path(), ec);
  const fs::path tmp = ref.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << commit;
    if (!out.flush()) fail("cannot write {}", tmp.string());
  }
  fs::rename(tmp, ref, ec);
  if (ec) fail("cannot write {}: {}", ref.string(), ec.message());
}

void RepoCache::link_snapshot(const std::string& commit, const std::string& file, const std::string& etag) const {
  const fs::path link = snapshot_path(commit, file);
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  if (ec) fail("cannot create {}: {}", link.parent_path().string(), ec.message());
  // Made beside it and renamed over it, so that a process pulling the same file never sees it missing.
  const fs::path tmp = link.string() + ".tmp" + std::to_string(::getpid());
  fs::remove(tmp, ec);
  fs::create_symlink(relative_blob_link(file, etag), tmp, ec);
  if (!ec) fs::rename(tmp, link, ec);
  if (ec) fail("cannot link {}: {}", link.string(), ec.message());
}

bool RepoCache::has_file(const std::string& commit, const std::string& file) const {
  std::error_code ec;
  return fs::is_regular_file(snapshot_path(commit, file), ec);
}

std::vector<std::string> RepoCache::snapshot_files(const std::string& commit) const {
  std::vector<std::string> files;
  const fs::path root = snapshot_dir(commit);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!fs::is_regular_file(it->path(), ec)) continue;  // follows the link to its blob
    files.push_back(it->path().lexically_relative(root).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace ridge::hub
