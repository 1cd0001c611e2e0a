#include "hub/blob_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "bench/progress.h"
#include "core/error.h"
#include "core/log.h"
#include "hub/file_digest.h"

namespace ridge::hub {

namespace fs = std::filesystem;

namespace {

int64_t bytes_in(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? int64_t(st.st_size) : 0;
}

// The .incomplete file, opened for appending; errors while writing are kept, not thrown, because
// the writer runs inside the HTTP client's callback.
class PartialFile {
 public:
  explicit PartialFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot open {} for writing: {}", path, std::strerror(errno));
  }
  ~PartialFile() { close(); }
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  // Starts over (the server sent the whole file, not the range asked for).
  bool restart() {
    if (::ftruncate(fd_, 0) == 0) return true;
    error_ = errno;
    return false;
  }
  bool write(const char* data, size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : ENOSPC;  // a write of nothing is a full device
        return false;
      }
      data += n;
      size -= size_t(n);
    }
    return true;
  }
  void close() {
    if (fd_ >= 0 && ::close(fd_) != 0 && error_ == 0) error_ = errno;
    fd_ = -1;
  }
  int error() const { return error_; }

 private:
  std::string path_;
  int fd_ = -1;
  int error_ = 0;
};

// An exclusive flock on the blob's lock file, for as long as it lives.
class BlobLock {
 public:
  BlobLock(const std::string& path, const std::string& display) {
    if (path.empty()) return;
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot open the lock file {}: {}", path, std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    log_info("{}: another process is downloading it; waiting for {}", display, path);
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) fail("cannot lock {}: {}", path, std::strerror(errno));
  }
  ~BlobLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;

 private:
  int fd_ = -1;
};

[[noreturn]] void fail_write(const BlobDownload& d, const std::string& path, int error) {
  if (error == ENOSPC || error == EDQUOT || error == EFBIG)
    fail("{}: disk full while writing {} ({}); free some space and run again to resume", d.display, path,
         std::strerror(error));
  fail("{}: cannot write {}: {}", d.display, path, std::strerror(error));
}

void verify(const BlobDownload& d, const std::string& path) {
  const int64_t got = bytes_in(path);
  std::string problem;
  if (d.size >= 0 && got != d.size) {
    problem = "size " + std::to_string(got) + " bytes where the Hub says " + std::to_string(d.size);
  } else if (!d.sha256.empty()) {
    if (const std::string sha = file_sha256(path); sha != d.sha256)
      problem = "SHA-256 mismatch: expected " + d.sha256 + ", got " + sha;
  } else if (!d.git_blob_id.empty()) {
    if (const std::string id = file_git_blob_id(path); id != d.git_blob_id)
      problem = "git blob id mismatch: expected " + d.git_blob_id + ", got " + id;
  }
  if (problem.empty()) return;
  std::error_code ec;
  fs::remove(path, ec);
  fail("{}: {}; the download was deleted", d.display, problem);
}

}  // namespace

void download_blob(const HubHttp& http, const BlobDownload& d) {
  std::error_code ec;
  if (fs::exists(d.blob_path, ec)) return;
  fs::create_directories(fs::path(d.blob_path).parent_path(), ec);
  if (ec) fail("cannot create {}: {}", fs::path(d.blob_path).parent_path().string(), ec.message());
  const BlobLock lock(d.lock_path, d.display);
  if (fs::exists(d.blob_path, ec)) return;  // the other process finished it
  const std::string partial = d.blob_path + ".incomplete";
  std::optional<bench::ProgressBar> bar;
  for (int resumes = 0;; ++resumes) {
    int64_t offset = bytes_in(partial);
    PartialFile out(partial);
    if (d.size >= 0 && offset > d.size) {  // not this file's start: begin again
      if (!out.restart()) fail_write(d, partial, out.error());
      offset = 0;
    }
    if (d.progress && !bar) bar.emplace(d.display, d.size, bench::ProgressBar::Unit::Bytes);
    if (bar && offset > 0) bar->advance(offset, "resuming");
    if (d.size >= 0 && offset == d.size) break;
    int64_t received = 0;
    bool restarted = offset == 0, too_long = false;
    const HttpReply reply = http.stream(d.url, offset, [&](int status, const char* data, size_t size) {
      if (status == 200 && !restarted) {  // the server ignored the Range: it sends the file from its start
        restarted = true;
        if (!out.restart()) return false;
        if (bar) bar->advance(-offset);
      }
      if (d.size >= 0 && (restarted ? 0 : offset) + received + int64_t(size) > d.size) {
        too_long = true;  // a server that sends more than the Hub said: stop before it fills the disk
        return false;
      }
      if (!out.write(data, size)) return false;
      received += int64_t(size);
      if (bar) bar->advance(int64_t(size));
      return true;
    });
    out.close();
    if (out.error() != 0) fail_write(d, partial, out.error());
    if (too_long) {
      fs::remove(partial, ec);
      fail("{}: the server sent more than the {} bytes the Hub lists; the download was deleted", d.display, d.size);
    }
    if (!reply.transport_error.empty()) {
      if (received > 0 && resumes < kMaxResumes) {
        log_warning("{}: the connection broke after {} bytes ({}); resuming", d.display, offset + received,
                    reply.transport_error);
        continue;
      }
      fail("{}: download failed: {}; run again to resume from the {} bytes kept", d.display, reply.transport_error,
           bytes_in(partial));
    }
    if (reply.status == 416 && offset > 0) {  // the partial file is longer than the file: start again
      fs::remove(partial, ec);
      if (resumes < kMaxResumes) continue;
    }
    if (reply.status != 200 && reply.status != 206) fail_http_status(reply, "file " + d.display);
    break;
  }
  if (bar) bar->finish();
  verify(d, partial);
  fs::rename(partial, d.blob_path, ec);
  if (ec) fail("{}: cannot rename {} to its final name: {}", d.display, partial, ec.message());
}

}  // namespace ridge::hub
