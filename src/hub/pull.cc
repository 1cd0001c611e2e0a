#include "hub/pull.h"

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/log.h"
#include "hub/blob_download.h"
#include "hub/cache_layout.h"
#include "hub/file_choice.h"
#include "hub/hub_api.h"

namespace ridge::hub {

namespace {

std::string read_snapshot_file(const RepoCache& cache, const std::string& commit, const std::string& file) {
  if (!cache.has_file(commit, file)) return "";
  std::ifstream in(cache.snapshot_path(commit, file), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The index's shards and the sentence-transformers modules' files, once the first files are here.
std::vector<std::string> followups(const RepoCache& cache, const std::string& commit,
                                   const std::vector<std::string>& repo_files) {
  return safetensors_followups(repo_files, read_snapshot_file(cache, commit, "model.safetensors.index.json"),
                               read_snapshot_file(cache, commit, "modules.json"));
}

PulledModel finished(const RepoCache& cache, const std::string& commit, const FilePlan& plan,
                     std::vector<std::string> files) {
  PulledModel m;
  m.commit = commit;
  m.path = plan.model_file.empty() ? cache.snapshot_dir(commit) : cache.snapshot_path(commit, plan.model_file);
  m.files = std::move(files);
  return m;
}

PulledModel pull_offline(const RepoRef& ref, const HubConfig& config, const RepoCache& cache) {
  const std::string commit = cache.commit_for(ref.revision);
  const auto absent = [&](const std::string& what) {
    fail("HF_HUB_OFFLINE is set and {} of {} (revision {}) is not in the cache {}: unset HF_HUB_OFFLINE to fetch it",
         what, ref.repo_id, ref.revision, config.cache_dir);
  };
  if (commit.empty()) absent("no snapshot");
  const std::vector<std::string> have = cache.snapshot_files(commit);
  if (have.empty()) absent("no snapshot");
  FilePlan plan;
  std::vector<std::string> files;
  try {  // the choice made among the cached files only
    plan = choose_files(have, ref);
    files = plan.files;
    if (plan.safetensors)
      for (std::string& f : followups(cache, commit, have)) files.push_back(std::move(f));
  } catch (const Error& e) {
    fail("HF_HUB_OFFLINE is set and the cache does not hold what is asked: {}", e.what());
  }
  for (const std::string& f : files)
    if (!cache.has_file(commit, f)) absent("'" + f + "'");
  return finished(cache, commit, plan, std::move(files));
}

void fetch(const HubHttp& http, const HubConfig& config, const RepoRef& ref, const RepoCache& cache,
           const RepoInfo& info, const std::string& path) {
  const RepoFile* f = info.find(path);
  if (!f) fail("file '{}' not found in {} at revision {}", path, ref.repo_id, ref.revision);
  if (!cache.has_file(info.commit, path)) {
    BlobDownload d;
    d.url = resolve_url(config.endpoint, ref.repo_id, info.commit, path);
    d.blob_path = cache.blob_path(f->etag());
    d.lock_path = cache.lock_path(f->etag());
    d.display = ref.repo_id + "/" + path;
    d.size = f->size;
    d.sha256 = f->sha256;
    d.git_blob_id = f->blob_id;
    d.progress = config.progress;
    download_blob(http, d);
  }
  cache.link_snapshot(info.commit, path, f->etag());
}

}  // namespace

PulledModel pull_model(const RepoRef& ref, const HubConfig& config) {
  const RepoCache cache(config.cache_dir, ref.repo_id);
  if (config.offline) return pull_offline(ref, config, cache);
  const HubHttp http(config.token);
  RepoInfo info;
  try {
    info = fetch_repo_info(http, config.endpoint, ref.repo_id, ref.revision);
  } catch (const HubUnreachable& e) {  // as huggingface_hub does: a complete cached snapshot still serves
    PulledModel cached;
    try {
      cached = pull_offline(ref, config, cache);
    } catch (const Error&) {
      throw e;
    }
    log_warning("{}; using the cached snapshot {}", e.what(), cached.commit);
    return cached;
  }
  cache.write_ref(ref.revision, info.commit);
  const std::vector<std::string> repo_files = info.paths();
  const FilePlan plan = choose_files(repo_files, ref);
  std::vector<std::string> files = plan.files;
  for (const std::string& f : plan.files) fetch(http, config, ref, cache, info, f);
  if (plan.safetensors) {
    for (const std::string& f : followups(cache, info.commit, repo_files)) {
      fetch(http, config, ref, cache, info, f);
      files.push_back(f);
    }
  }
  return finished(cache, info.commit, plan, std::move(files));
}

}  // namespace ridge::hub
