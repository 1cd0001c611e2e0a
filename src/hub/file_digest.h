#pragma once
// Digests of downloaded files (OpenSSL EVP), checked against what the Hub says they are.
#include <string>

namespace ridge::hub {

// Lowercase hex SHA-256 of a file's bytes.
std::string file_sha256(const std::string& path);
// The git blob id of a file: SHA-1 of "blob <size>\0" and its bytes (what the Hub lists for files
// kept in git rather than LFS).
std::string file_git_blob_id(const std::string& path);

}  // namespace ridge::hub
