#include "hub/repo_ref.h"

#include <algorithm>

#include "core/error.h"

namespace ridge::hub {

namespace {

constexpr std::string_view kScheme = "hf://";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

bool is_valid_repo_part(std::string_view part) {
  if (part.empty()) return false;
  if (!std::all_of(part.begin(), part.end(), is_name_char)) return false;
  const char first = part.front(), last = part.back();
  return first != '-' && first != '.' && last != '-' && last != '.';
}

bool is_valid_quant(std::string_view q) {
  return !q.empty() && q.size() <= 64 && std::all_of(q.begin(), q.end(), [](char c) { return is_name_char(c) && c != '.'; });
}

// Splits "REPO@REV" into its parts; the revision stays untouched when there is no '@'.
void take_revision(std::string& text, RepoRef& ref, std::string_view arg) {
  const size_t at = text.find('@');
  if (at == std::string::npos) return;
  ref.revision = text.substr(at + 1);
  text.resize(at);
  if (!is_valid_revision(ref.revision)) fail("'{}': '{}' is not a valid revision", arg, ref.revision);
}

}  // namespace

bool is_hub_uri(std::string_view arg) { return arg.starts_with(kScheme); }

bool is_valid_repo_id(std::string_view id) {
  if (id.size() > 96 || id.find("--") != std::string_view::npos || id.find("..") != std::string_view::npos) return false;
  const size_t slash = id.find('/');
  if (slash == std::string_view::npos) return false;
  return is_valid_repo_part(id.substr(0, slash)) && is_valid_repo_part(id.substr(slash + 1));
}

bool is_valid_revision(std::string_view rev) {
  if (rev.empty() || rev.size() > 256 || rev.find("..") != std::string_view::npos) return false;
  if (rev.front() == '/' || rev.back() == '/' || rev.find("//") != std::string_view::npos) return false;
  return std::all_of(rev.begin(), rev.end(), [](char c) { return is_name_char(c) || c == '/'; });
}

bool is_valid_repo_path(std::string_view path) {
  if (path.empty() || path.size() > 1024) return false;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (end == path.size()) break;
    start = end + 1;
  }
  return std::none_of(path.begin(), path.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\'; });
}

bool is_commit_hash(std::string_view s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

RepoRef parse_repo_ref(std::string_view arg) {
  std::string_view rest = arg;
  const bool uri = is_hub_uri(rest);
  if (uri) rest.remove_prefix(kScheme.size());
  RepoRef ref;
  // ORG/REPO is the first two '/'-separated parts; a third part (hf:// only) is a file path.
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) fail("'{}': expected ORG/REPO (a Hub repository id)", arg);
  const size_t second = rest.find('/', slash + 1);
  const size_t colon = rest.find(':');
  std::string head(rest.substr(0, std::min({second, colon, rest.size()})));
  std::string tail;
  if (colon != std::string_view::npos && colon < second) {
    tail = std::string(rest.substr(colon + 1));
    take_revision(head, ref, arg);
    if (ref.revision == "main") take_revision(tail, ref, arg);
    if (tail.find('.') != std::string::npos || tail.find('/') != std::string::npos) {
      ref.file = tail;
    } else {
      ref.quant = tail;
      if (!is_valid_quant(ref.quant)) fail("'{}': '{}' is not a quant tag (letters, digits, '_' and '-')", arg, tail);
    }
  } else if (second != std::string_view::npos) {
    if (!uri) fail("'{}': a file inside a repository is named ORG/REPO:FILE", arg);
    take_revision(head, ref, arg);
    ref.file = std::string(rest.substr(second + 1));
  } else {
    take_revision(head, ref, arg);
  }
  if (!is_valid_repo_id(head))
    fail("'{}': '{}' is not a valid Hub repository id (ORG/REPO of letters, digits, '_', '-', '.'; no '..' or '--')", arg, head);
  if (!ref.file.empty() && !is_valid_repo_path(ref.file))
    fail("'{}': '{}' is not a valid path inside a repository", arg, ref.file);
  ref.repo_id = std::move(head);
  return ref;
}

}  // namespace ridge::hub
