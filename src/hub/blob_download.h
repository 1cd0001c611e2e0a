#pragma once
// One file of a repository into its blob: bytes go to blobs/<etag>.incomplete (resumed with a Range
// request after an interruption, in this run or a later one), the digest the Hub gave is checked
// (SHA-256 for LFS files, the git blob id for the others), and only then is the file renamed to its
// final name. A wrong digest deletes the partial file; a full disk stops with a clear error. Either
// way nothing is ever left under the final name. The blob's lock file is held (flock, as huggingface_hub's
// filelock takes it) while downloading, so two processes never write one .incomplete file together.
#include <cstdint>
#include <string>

#include "hub/hub_http.h"

namespace ridge::hub {

struct BlobDownload {
  std::string url;        // the file's resolve URL
  std::string blob_path;  // blobs/<etag>
  std::string lock_path;  // .locks/models--ORG--REPO/<etag>.lock; "" = no lock
  std::string display;    // "ORG/REPO/file", for messages and the progress bar
  int64_t size = -1;      // expected bytes, -1 if unknown
  std::string sha256;     // an LFS file's digest, or ""
  std::string git_blob_id;  // checked when there is no SHA-256, if set
  bool progress = true;
};

// Connection drops that still brought bytes are resumed this many times before giving up.
inline constexpr int kMaxResumes = 5;

// Does nothing if the blob exists already.
void download_blob(const HubHttp& http, const BlobDownload& d);

}  // namespace ridge::hub
