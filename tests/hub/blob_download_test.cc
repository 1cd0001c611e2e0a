// download_blob against an in-process HTTP server: ranges, a connection cut half-way, a wrong byte,
// a redirect to another host (no token sent there), HTTP errors and a full disk (/dev/full).
#include "hub/blob_download.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "core/error.h"
#include "hub/file_digest.h"

namespace ridge::testing {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A server of one file at /file (ranges honoured by httplib), the same with one byte changed at
// /wrong, errors at /private and /missing, a redirect to another server at /moved.
class FileServer {
 public:
  explicit FileServer(std::string content) : content_(std::move(content)) {
    server_.Get("/file", [this](const httplib::Request& req, httplib::Response& res) { serve(req, res, content_); });
    server_.Get("/wrong", [this](const httplib::Request& req, httplib::Response& res) {
      std::string bad = content_;
      bad[bad.size() / 3] ^= 1;
      serve(req, res, bad);
    });
    server_.Get("/private", [](const httplib::Request&, httplib::Response& res) { res.status = 401; });
    server_.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_header("X-Error-Code", "EntryNotFound");
    });
    server_.Get("/moved", [this](const httplib::Request& req, httplib::Response& res) {
      record(req);
      res.status = 302;
      res.set_header("Location", redirect_to_);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FileServer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  void redirect_to(const std::string& url) { redirect_to_ = url; }
  void cut_once_after(size_t bytes) { cut_after_ = bytes; }
  std::vector<std::string> ranges() {
    std::lock_guard lock(mu_);
    return ranges_;
  }
  std::vector<std::string> tokens() {
    std::lock_guard lock(mu_);
    return tokens_;
  }

 private:
  void record(const httplib::Request& req) {
    std::lock_guard lock(mu_);
    ranges_.push_back(req.get_header_value("Range"));
    tokens_.push_back(req.get_header_value("Authorization"));
  }
  void serve(const httplib::Request& req, httplib::Response& res, const std::string& body) {
    record(req);
    const size_t cut = cut_after_.exchange(0);
    res.set_content_provider(body.size(), "application/octet-stream",
                             [body, cut, sent = size_t(0)](size_t offset, size_t length, httplib::DataSink& sink) mutable {
                               size_t n = std::min<size_t>(length, 64 << 10);
                               if (cut && sent + n > cut) {
                                 sink.write(body.data() + offset, cut - sent);
                                 return false;  // the connection drops half-way
                               }
                               sink.write(body.data() + offset, n);
                               sent += n;
                               return true;
                             });
  }

  std::string content_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::string redirect_to_;
  std::atomic<size_t> cut_after_{0};
  std::mutex mu_;
  std::vector<std::string> ranges_, tokens_;
};

// Runs a download that must fail with a message holding `part`.
void expect_error(const hub::BlobDownload& d, const std::string& part) {
  try {
    hub::download_blob(hub::HubHttp(""), d);
    ADD_FAILURE() << "no error from " << d.url;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

class BlobDownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ridge-blob-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::mt19937 rng(7);
    content_.resize(1 << 20);
    for (char& c : content_) c = char(rng());
    std::ofstream(dir_ / "ref", std::ios::binary) << content_;
    sha_ = hub::file_sha256((dir_ / "ref").string());
  }
  void TearDown() override { fs::remove_all(dir_); }
  hub::BlobDownload job(const std::string& url) const {
    hub::BlobDownload d;
    d.url = url;
    d.blob_path = (dir_ / "blobs" / sha_).string();
    d.display = "o/r/model.gguf";
    d.size = int64_t(content_.size());
    d.sha256 = sha_;
    d.progress = false;
    return d;
  }

  fs::path dir_;
  std::string content_, sha_;
};

TEST_F(BlobDownloadTest, WholeFileThenNothingMore) {
  FileServer server(content_);
  const hub::BlobDownload d = job(server.url("/file"));
  hub::download_blob(hub::HubHttp(""), d);
  EXPECT_EQ(read_all(d.blob_path), content_);
  EXPECT_FALSE(fs::exists(d.blob_path + ".incomplete"));
  hub::download_blob(hub::HubHttp(""), d);  // present: no request
  EXPECT_EQ(server.ranges().size(), 1u);
}

TEST_F(BlobDownloadTest, ACutConnectionIsResumedWithARange) {
  FileServer server(content_);
  server.cut_once_after(300000);
  const hub::BlobDownload d = job(server.url("/file"));
  hub::download_blob(hub::HubHttp(""), d);
  EXPECT_EQ(read_all(d.blob_path), content_);
  const std::vector<std::string> ranges = server.ranges();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0], "");
  EXPECT_EQ(ranges[1], "bytes=300000-");
}

TEST_F(BlobDownloadTest, AnEarlierRunsPartialFileIsResumed) {
  FileServer server(content_);
  const hub::BlobDownload d = job(server.url("/file"));
  fs::create_directories(fs::path(d.blob_path).parent_path());
  std::ofstream(d.blob_path + ".incomplete", std::ios::binary) << content_.substr(0, 12345);
  hub::download_blob(hub::HubHttp(""), d);
  EXPECT_EQ(read_all(d.blob_path), content_);
  EXPECT_EQ(server.ranges(), std::vector<std::string>{"bytes=12345-"});
}

TEST_F(BlobDownloadTest, AWrongByteIsCaughtAndNothingKept) {
  FileServer server(content_);
  const hub::BlobDownload d = job(server.url("/wrong"));
  expect_error(d, "o/r/model.gguf: SHA-256 mismatch");
  EXPECT_FALSE(fs::exists(d.blob_path));
  EXPECT_FALSE(fs::exists(d.blob_path + ".incomplete"));
  // A git file is checked by its blob id.
  hub::BlobDownload git = job(server.url("/wrong"));
  git.sha256.clear();
  git.git_blob_id = hub::file_git_blob_id((dir_ / "ref").string());
  EXPECT_THROW(hub::download_blob(hub::HubHttp(""), git), Error);
  git.url = server.url("/file");
  hub::download_blob(hub::HubHttp(""), git);
  EXPECT_EQ(read_all(git.blob_path), content_);
}

TEST_F(BlobDownloadTest, AServerSendingTooMuchIsCutOff) {
  FileServer server(content_);
  hub::BlobDownload d = job(server.url("/file"));
  d.size -= 100;
  expect_error(d, "sent more than");
  EXPECT_FALSE(fs::exists(d.blob_path));
  EXPECT_FALSE(fs::exists(d.blob_path + ".incomplete"));
}

TEST_F(BlobDownloadTest, RedirectsKeepTheTokenAtHome) {
  FileServer hub_server(content_), storage(content_);
  hub_server.redirect_to(storage.url("/file"));
  const hub::BlobDownload d = job(hub_server.url("/moved"));
  hub::download_blob(hub::HubHttp("hf_secret"), d);
  EXPECT_EQ(read_all(d.blob_path), content_);
  EXPECT_EQ(hub_server.tokens(), std::vector<std::string>{"Bearer hf_secret"});
  EXPECT_EQ(storage.tokens(), std::vector<std::string>{""});  // another host never sees it
}

TEST_F(BlobDownloadTest, HttpErrorsSayWhatToDo) {
  FileServer server(content_);
  expect_error(job(server.url("/private")), "gated or private: pass a token with HF_TOKEN=");
  expect_error(job(server.url("/missing")), "file not found (HTTP 404)");
  expect_error(job("http://127.0.0.1:1/file"), "download failed");  // nothing listens there
}

TEST_F(BlobDownloadTest, WaitsForAnotherProcessHoldingTheBlobsLock) {
  FileServer server(content_);
  hub::BlobDownload d = job(server.url("/file"));
  d.lock_path = (dir_ / "locks" / (sha_ + ".lock")).string();
  fs::create_directories(dir_ / "locks");
  fs::create_directories(fs::path(d.blob_path).parent_path());
  const int fd = ::open(d.lock_path.c_str(), O_RDWR | O_CREAT, 0644);  // huggingface_hub's filelock, as it were
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::atomic<bool> done{false};
  std::thread downloader([&] {
    hub::download_blob(hub::HubHttp(""), d);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(done);
  std::ofstream(d.blob_path, std::ios::binary) << content_;  // the other process finished the blob
  ::close(fd);
  downloader.join();
  EXPECT_TRUE(done);
  EXPECT_TRUE(server.ranges().empty());  // nothing downloaded twice
}

TEST_F(BlobDownloadTest, AFullDiskStopsWithNothingUnderTheFinalName) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  FileServer server(content_);
  const hub::BlobDownload d = job(server.url("/file"));
  fs::create_directories(fs::path(d.blob_path).parent_path());
  fs::create_symlink("/dev/full", d.blob_path + ".incomplete");  // every write: ENOSPC
  expect_error(d, "disk full");
  EXPECT_FALSE(fs::exists(d.blob_path));
}

}  // namespace
}  // namespace ridge::testing
