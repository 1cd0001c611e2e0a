#include "quant/importance_matrix.h"

#include <cstring>

#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"

namespace ridge::quant {
namespace {

constexpr std::string_view kSums = ".in_sum2", kCounts = ".counts";

bool strip_suffix(std::string& s, std::string_view suffix) {
  if (s.size() <= suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  s.resize(s.size() - suffix.size());
  return true;
}

std::vector<float> read_f32(const gguf::TensorInfo& t) {
  if (t.type != DType::F32) fail("imatrix tensor '{}' is {}, not F32", t.name, dtype_name(t.type));
  std::vector<float> v(size_t(t.n_elements));
  std::memcpy(v.data(), t.data, v.size() * sizeof(float));
  return v;
}

}  // namespace

void ImportanceMatrix::accumulate(const std::string& tensor, const float* x, int64_t n_tokens, int64_t cols, int64_t mat,
                                  int64_t n_mat) {
  Entry& e = entries_[tensor];
  if (e.counts.empty()) {
    e.sums.assign(size_t(cols * n_mat), 0.0);
    e.counts.assign(size_t(n_mat), 0);
  }
  if (int64_t(e.counts.size()) != n_mat || int64_t(e.sums.size()) != cols * n_mat)
    fail("imatrix: tensor '{}' seen with {} columns x {} matrices, then {} x {}", tensor,
         e.sums.size() / e.counts.size(), e.counts.size(), cols, n_mat);
  double* sums = e.sums.data() + mat * cols;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t j = 0; j < cols; ++j) sums[j] += double(x[t * cols + j]) * double(x[t * cols + j]);
  e.counts[size_t(mat)] += n_tokens;
  weights_.erase(tensor);
}

const std::vector<float>* ImportanceMatrix::find(std::string_view tensor) const {
  if (auto w = weights_.find(tensor); w != weights_.end()) return &w->second;
  auto it = entries_.find(tensor);
  if (it == entries_.end()) return nullptr;
  const Entry& e = it->second;
  const size_t cols = e.sums.size() / e.counts.size();
  std::vector<float> w(e.sums.size());
  for (size_t m = 0; m < e.counts.size(); ++m) {
    // f32 sums divided by an f32 count, as llama.cpp's loader computes them from the file.
    const float count = float(e.counts[m]);
    for (size_t j = 0; j < cols; ++j) w[m * cols + j] = count > 0 ? float(e.sums[m * cols + j]) / count : 1.0f;
  }
  return &weights_.emplace(std::string(tensor), std::move(w)).first->second;
}

ImportanceMatrix ImportanceMatrix::load(const std::string& path) {
  const gguf::GgufFile file = gguf::GgufFile::open(path);
  if (file.get_string("general.type").value_or("") != "imatrix")
    fail("{} is no imatrix file (general.type is not 'imatrix'); write one with `ridge imatrix`", path);
  ImportanceMatrix m;
  if (const auto* d = file.find("imatrix.datasets"))
    for (const auto& v : d->as_array("imatrix.datasets")) m.datasets.push_back(v.as_string("imatrix.datasets"));
  m.chunk_count = file.get_int("imatrix.chunk_count").value_or(0);
  m.chunk_size = file.get_int("imatrix.chunk_size").value_or(0);
  for (const auto& t : file.tensors()) {
    std::string name = t.name;
    if (!strip_suffix(name, kSums)) continue;
    const auto* counts = file.find_tensor(name + std::string(kCounts));
    if (!counts) fail("{}: '{}' has no '{}{}' beside it", path, t.name, name, kCounts);
    const std::vector<float> sums = read_f32(t), n = read_f32(*counts);
    if (n.empty() || sums.size() % n.size() != 0)
      fail("{}: '{}' holds {} sums for {} matrices", path, name, sums.size(), n.size());
    Entry& e = m.entries_[name];
    e.sums.assign(sums.begin(), sums.end());
    for (float c : n) {
      if (!(c >= 0)) fail("{}: '{}' has a negative or NaN count", path, name);
      e.counts.push_back(int64_t(c));
    }
  }
  if (m.entries_.empty()) fail("{} holds no imatrix entries", path);
  return m;
}

void ImportanceMatrix::save(const std::string& path) const {
  gguf::GgufWriter out(path);
  out.add_string("general.type", "imatrix");
  out.add_string_array("imatrix.datasets", datasets);
  out.add_u32("imatrix.chunk_count", uint32_t(chunk_count));
  out.add_u32("imatrix.chunk_size", uint32_t(chunk_size));
  for (const auto& [name, e] : entries_) {  // a std::map: sorted names, as llama.cpp writes them
    const int64_t n_mat = int64_t(e.counts.size());
    out.add_tensor(name + std::string(kSums), DType::F32, {int64_t(e.sums.size()) / n_mat, n_mat});
    out.add_tensor(name + std::string(kCounts), DType::F32, {1, n_mat});
  }
  out.write_header();
  for (const auto& [name, e] : entries_) {
    const std::vector<float> sums(e.sums.begin(), e.sums.end());
    out.write_tensor_data(sums.data(), sums.size() * sizeof(float));
    const std::vector<float> counts(e.counts.begin(), e.counts.end());
    out.write_tensor_data(counts.data(), counts.size() * sizeof(float));
  }
  out.finish();
}

}  // namespace ridge::quant
