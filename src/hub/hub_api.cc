#include "hub/hub_api.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "hub/repo_ref.h"

namespace ridge::hub {

namespace {

bool is_hex(const std::string& s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string string_field(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t size_field(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() && it->get<int64_t>() >= 0 ? it->get<int64_t>() : -1;
}

RepoFile parse_sibling(const nlohmann::json& s, const std::string& repo_id) {
  if (!s.is_object()) fail("{}: the Hub's file list holds something that is not a file", repo_id);
  RepoFile f;
  f.path = string_field(s, "rfilename");
  if (!is_valid_repo_path(f.path)) fail("{}: the Hub lists a file named '{}', which is not a safe relative path", repo_id, f.path);
  f.blob_id = string_field(s, "blobId");
  if (!is_hex(f.blob_id, 40)) fail("{}: the Hub gives '{}' no git blob id (asked with blobs=true)", repo_id, f.path);
  f.size = size_field(s, "size");
  if (const auto lfs = s.find("lfs"); lfs != s.end() && lfs->is_object()) {
    f.sha256 = string_field(*lfs, "sha256");
    if (!is_hex(f.sha256, 64)) fail("{}: the Hub's LFS SHA-256 of '{}' is not 64 hex digits", repo_id, f.path);
    if (const int64_t size = size_field(*lfs, "size"); size >= 0) f.size = size;
  }
  return f;
}

}  // namespace

std::vector<std::string> RepoInfo::paths() const {
  std::vector<std::string> out;
  for (const RepoFile& f : files) out.push_back(f.path);
  return out;
}

const RepoFile* RepoInfo::find(const std::string& path) const {
  for (const RepoFile& f : files)
    if (f.path == path) return &f;
  return nullptr;
}

RepoInfo parse_repo_info(const std::string& json_text, const std::string& repo_id) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: the Hub's answer is not JSON: {}", repo_id, e.what());
  }
  if (!doc.is_object()) fail("{}: the Hub's answer is not a JSON object", repo_id);
  RepoInfo info;
  info.commit = string_field(doc, "sha");
  if (!is_commit_hash(info.commit)) fail("{}: the Hub's answer has no commit id ('sha')", repo_id);
  const auto siblings = doc.find("siblings");
  if (siblings == doc.end() || !siblings->is_array()) fail("{}: the Hub's answer has no file list ('siblings')", repo_id);
  for (const nlohmann::json& s : *siblings) info.files.push_back(parse_sibling(s, repo_id));
  return info;
}

RepoInfo fetch_repo_info(const HubHttp& http, const std::string& endpoint, const std::string& repo_id,
                         const std::string& revision) {
  const std::string url =
      endpoint + "/api/models/" + repo_id + "/revision/" + url_encode(revision, false) + "?blobs=true";
  const HttpReply reply = http.get(url);
  const std::string what = "repository " + repo_id + " at revision " + revision;
  if (!reply.transport_error.empty())
    throw HubUnreachable(what + ": cannot reach " + endpoint + " (" + reply.transport_error +
                         "); set HF_ENDPOINT if the Hub is elsewhere, or HF_HUB_OFFLINE=1 to use the cache only");
  if (reply.status != 200) fail_http_status(reply, what);
  return parse_repo_info(reply.body, repo_id);
}

std::string resolve_url(const std::string& endpoint, const std::string& repo_id, const std::string& commit,
                        const std::string& path) {
  return endpoint + "/" + repo_id + "/resolve/" + commit + "/" + url_encode(path, true);
}

}  // namespace ridge::hub
