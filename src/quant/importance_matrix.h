#pragma once
// An importance matrix: for each weight tensor, the sum over calibration tokens of the square
// of each input column's activation (one row of sums per expert for a 3-D expert tensor) and the
// number of tokens summed. The quantizers weight each column's rounding error by sum / count, so
// precision goes where activations are large. Stored as llama.cpp's imatrix GGUF
// ("<tensor>.in_sum2" and "<tensor>.counts" f32 tensors, imatrix.* metadata), so either tool's
// file feeds either tool's quantizer.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::quant {

class ImportanceMatrix {
 public:
  struct Entry {
    std::vector<double> sums;    // (n_mat, cols): per matrix (expert), per column, sum of x^2
    std::vector<int64_t> counts;  // (n_mat): tokens summed per matrix
  };

  // Adds one matmul's input: n_tokens rows of `cols` activations, for matrix `mat` of `n_mat`.
  void accumulate(const std::string& tensor, const float* x, int64_t n_tokens, int64_t cols, int64_t mat = 0,
                  int64_t n_mat = 1);
  // The per-column weights the quantizer takes (sums / count; 1 where a matrix saw no token),
  // or nullptr when the tensor has no entry. Computed on first use.
  const std::vector<float>* find(std::string_view tensor) const;
  size_t size() const { return entries_.size(); }
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

  std::vector<std::string> datasets;  // the calibration texts' names
  int64_t chunk_count = 0, chunk_size = 0;

  // Error naming the problem for a file that is not an imatrix GGUF or whose tensors disagree.
  static ImportanceMatrix load(const std::string& path);
  void save(const std::string& path) const;  // whole or not at all (GgufWriter)

 private:
  std::map<std::string, Entry, std::less<>> entries_;
  mutable std::map<std::string, std::vector<float>, std::less<>> weights_;
};

}  // namespace ridge::quant
