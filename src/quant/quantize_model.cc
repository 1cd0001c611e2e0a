#include "quant/quantize_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <cstring>
#include <optional>
#include <thread>

#include "bench/progress.h"
#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "kernels/ref/fp4.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "quant/block_quantize.h"
#include "quant/importance_matrix.h"

namespace ridge::quant {
namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's GGML_QNT_VERSION: the block layouts written here
constexpr int64_t kSlabFloats = int64_t(16) << 20;  // f32 values converted per slab: 64 MiB
constexpr int64_t kRowsPerTask = 8;

ModelHints hints_of(const gguf::GgufFile& in) {
  ModelHints h;
  h.arch = in.get_string("general.architecture").value_or("");
  const std::string p = h.arch + ".";
  h.n_layer = in.get_int(p + "block_count").value_or(0);
  h.n_head = in.get_int(p + "attention.head_count").value_or(0);
  h.n_head_kv = in.get_int(p + "attention.head_count_kv").value_or(h.n_head);
  h.n_expert = in.get_int(p + "expert_count").value_or(0);
  return h;
}

bool is_split_key(const std::string& key) {
  return key == "split.no" || key == "split.count" || key == "split.tensors.count";
}

// The input's metadata with the quantization keys set; a key the input already has keeps its
// place (as llama.cpp's quantizer does), so the two outputs list metadata in the same order.
void copy_metadata(const gguf::GgufFile& in, const QuantizeOptions& options, gguf::GgufWriter& out) {
  // llama.cpp sets a key by removing it and appending it: the keys it sets come last, in the
  // order it sets them, so the input's copies of them are skipped here.
  const auto set_later = [&](const std::string& key) {
    return key == "general.quantization_version" || key == "general.file_type" ||
           (options.imatrix && key.rfind("quantize.imatrix.", 0) == 0);
  };
  for (const auto& [key, value] : in.metadata()) {
    if (key == "general.alignment" || is_split_key(key) || set_later(key)) continue;  // the writer sets the alignment
    out.add_value(key, value);
  }
  out.add_u32("general.quantization_version", kQuantizationVersion);
  out.add_u32("general.file_type", static_cast<uint32_t>(options.rules.file_type));
  if (options.imatrix) {  // the keys llama-quantize records
    out.add_string("quantize.imatrix.file", options.imatrix_file);
    if (!options.imatrix->datasets.empty()) out.add_string("quantize.imatrix.dataset", options.imatrix->datasets[0]);
    out.add_u32("quantize.imatrix.entries_count", uint32_t(options.imatrix->size()));
    out.add_u32("quantize.imatrix.chunks_count", uint32_t(options.imatrix->chunk_count));
  }
}

// The importance weights for one tensor, checked against its shape (one row of weights per expert).
const float* importance_for(const QuantizeOptions& options, const gguf::TensorInfo& t) {
  if (!options.imatrix) return nullptr;
  const std::vector<float>* w = options.imatrix->find(t.name);
  if (!w) return nullptr;
  const int64_t experts = t.shape.size() > 2 ? t.shape[2] : 1;
  if (int64_t(w->size()) != t.shape[0] * experts)
    fail("importance matrix for '{}' has {} values, the tensor needs {} ({} columns x {} experts)", t.name, w->size(),
         t.shape[0] * experts, t.shape[0], experts);
  return w->data();
}

// The factors of `t`'s matrices (one per expert) from its ".scale" tensor in the input; empty
// when it has none.
std::vector<float> input_factors(const gguf::GgufFile& in, const gguf::TensorInfo& t) {
  const std::string name = gguf::factor_name(t.name);
  const gguf::TensorInfo* s = name.empty() ? nullptr : in.find_tensor(name);
  if (!s) return {};
  const int64_t experts = t.shape.size() > 2 ? t.shape[2] : 1;
  if (s->type != DType::F32 || s->n_elements != experts)
    fail("tensor '{}' must hold {} f32 factor(s) for '{}'", name, experts, t.name);
  std::vector<float> out(static_cast<size_t>(experts));
  std::memcpy(out.data(), s->data, size_t(experts) * 4);
  return out;
}

// Row r of `t` as f32 (its input factor and AWQ's scaling applied), in `row` unless it is f32 already.
const float* f32_row(const gguf::TensorInfo& t, int64_t r, const std::vector<float>& factors, const AwqTransform* awq,
                     std::vector<float>& row, const RowTransform* transform = nullptr) {
  const int64_t n_per_row = t.shape[0];
  const uint8_t* src = t.data + r * dtype_row_bytes(t.type, n_per_row);
  if (t.type == DType::F32 && factors.empty() && !awq && !transform) return reinterpret_cast<const float*>(src);
  row.resize(size_t(n_per_row));
  ref::dequantize_row(t.type, src, row.data(), n_per_row);
  if (!factors.empty()) {
    const int64_t rows_per_expert = t.shape.size() > 1 ? t.shape[1] : 1;
    const float f = factors[size_t(r / rows_per_expert)];
    for (float& v : row) v *= f;
  }
  if (awq) apply_awq(*awq, r, row.data(), n_per_row);
  if (transform) transform->apply(t.name, r, row.data(), n_per_row);
  return row.data();
}

// NVFP4: one factor per matrix (expert) so that its group scales use E4M3's whole range.
std::vector<float> nvfp4_factors(const gguf::TensorInfo& t, const std::vector<float>& in_factors, int threads) {
  const int64_t rows_per_expert = t.shape.size() > 1 ? t.shape[1] : 1;
  const int64_t experts = t.n_elements / t.shape[0] / rows_per_expert;
  std::vector<float> amax(size_t(experts * rows_per_expert), 0.0f);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
  for (int64_t r = 0; r < experts * rows_per_expert; ++r) {
    thread_local std::vector<float> row;
    const float* x = f32_row(t, r, in_factors, nullptr, row);
    for (int64_t i = 0; i < t.shape[0]; ++i) amax[size_t(r)] = std::max(amax[size_t(r)], std::fabs(x[i]));
  }
  std::vector<float> out(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) {
    const float m = *std::max_element(amax.begin() + e * rows_per_expert, amax.begin() + (e + 1) * rows_per_expert);
    out[size_t(e)] = ref::nvfp4_global_scale(&m, 1);
  }
  return out;
}

// Quantizes rows [first, first + n) of `t` into `dst`, dequantizing each to f32 first.
void quantize_slab(const gguf::TensorInfo& t, DType to, const float* importance, const std::vector<float>& in_factors,
                   const AwqTransform* awq, const std::vector<float>& out_factors, int64_t first, int64_t n, uint8_t* dst,
                   int threads, const RowTransform* transform) {
  const int64_t n_per_row = t.shape[0];
  const int64_t rows_per_expert = t.shape.size() > 1 ? t.shape[1] : 1;
  const int64_t dst_row = dtype_row_bytes(to, n_per_row);
  const int64_t tasks = (n + kRowsPerTask - 1) / kRowsPerTask;
  std::string error;
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> row;
#pragma omp for schedule(dynamic)
    for (int64_t task = 0; task < tasks; ++task) {
      try {
        for (int64_t r = first + task * kRowsPerTask; r < std::min(first + n, first + (task + 1) * kRowsPerTask); ++r) {
          const float* f32 = f32_row(t, r, in_factors, awq, row, transform);
          const float* w = importance ? importance + (r / rows_per_expert) * n_per_row : nullptr;
          if (to == DType::NVFP4) {  // with the matrix's factor
            const float global = out_factors[size_t(r / rows_per_expert)];
            if (w) quantize_row_fp4_weighted(to, f32, dst + (r - first) * dst_row, n_per_row, w, global);
            else ref::quantize_nvfp4(f32, dst + (r - first) * dst_row, n_per_row, global);
            continue;
          }
          quantize_rows(to, f32, dst + (r - first) * dst_row, 1, n_per_row, w);
        }
      } catch (const std::exception& e) {
#pragma omp critical
        if (error.empty()) error = e.what();
      }
    }
  }
  if (!error.empty()) fail("tensor '{}': {}", t.name, error);
}

}  // namespace

QuantizeReport quantize_gguf(const QuantizeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const gguf::GgufFile in = gguf::GgufFile::open(options.input);
  const int threads = options.threads > 0 ? options.threads : int(std::max(1u, std::thread::hardware_concurrency()));

  std::vector<TensorDesc> descs;
  for (const auto& t : in.tensors()) descs.push_back({t.name, t.type, t.shape});
  const std::vector<TypeChoice> choices = choose_types(descs, hints_of(in), options.rules);
  // llama-quantize refuses the very low-bit types without importance weights (a dry run only sizes).
  for (size_t i = 0; i < descs.size() && !options.imatrix && !options.dry_run; ++i)
    if (choices[i].quantize && choices[i].needs_imatrix)
      fail("--type {}: tensor '{}' would be {}, which needs an importance matrix, as in llama-quantize: give --imatrix "
           "(ridge imatrix makes one)", file_type_info(options.rules.file_type).name, descs[i].name,
           dtype_name(choices[i].type));
  const std::vector<size_t> order = quantize_order(descs);
  AwqPlan awq;
  if (options.awq) {
    if (!options.imatrix) fail("--awq scales by the activations an importance matrix records: give --imatrix");
    std::map<std::string, DType> types;
    for (size_t i = 0; i < descs.size(); ++i)
      if (choices[i].quantize && choices[i].type != descs[i].type) types[descs[i].name] = choices[i].type;
    if (!options.dry_run) awq = plan_awq(in, *options.imatrix, types, options.awq_weighted_rounding, threads);
  }
  const auto awq_of = [&](const std::string& name) -> const AwqTransform* {
    const auto it = awq.tensors.find(name);
    return it == awq.tensors.end() ? nullptr : &it->second;
  };
  // AWQ's inputs are x / s: the importance of a scaled matrix's columns is theirs over s².
  std::map<std::string, std::vector<float>> awq_importance;
  const auto importance_of = [&](const gguf::TensorInfo& t) -> const float* {
    const float* w = importance_for(options, t);
    if (options.awq && !options.awq_weighted_rounding) return static_cast<const float*>(nullptr);  // AWQ's own rounding
    const AwqTransform* a = awq_of(t.name);
    if (!w || !a || a->col_scale.empty()) return w;
    auto& out = awq_importance[t.name];
    out.assign(w, w + t.shape[0]);
    for (size_t c = 0; c < out.size(); ++c) out[c] /= a->col_scale[c] * a->col_scale[c];
    return out.data();
  };

  // An input's "<weight>.scale" factors go with their weight: folded into its values when the
  // weight is requantized (and dropped), copied when the weight is.
  std::map<std::string, bool> weight_requantized;
  for (size_t i = 0; i < descs.size(); ++i) {
    const TypeChoice& c = choices[i];
    weight_requantized[descs[i].name] = c.quantize && c.type != descs[i].type;
  }
  const auto folded = [&](const std::string& name) {
    constexpr std::string_view kSuffix = ".scale";
    if (name.size() <= kSuffix.size() || name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return false;
    const auto it = weight_requantized.find(name.substr(0, name.size() - kSuffix.size()) + ".weight");
    return it != weight_requantized.end() && it->second;
  };
  std::map<std::string, std::vector<int64_t>> factor_shapes;  // the factors ridge writes

  QuantizeReport report;
  for (size_t i : order) {
    const gguf::TensorInfo& t = in.tensors()[i];
    if (folded(t.name)) continue;
    const TypeChoice& c = choices[i];
    TensorOutcome o{t.name, t.type, c.quantize ? c.type : t.type, t.n_bytes, 0, false, c.fell_back, false};
    o.quantized = o.to != o.from || (options.transform && options.transform->applies(t.name));
    if (o.quantized) {
      if (!can_quantize(o.to)) fail("tensor '{}': ridge cannot write {} blocks", t.name, dtype_name(o.to));
      if (t.type != DType::F32 && !ref::can_dequantize(t.type))
        fail("tensor '{}': ridge cannot read {} blocks to requantize them", t.name, dtype_name(t.type));
      o.used_imatrix = importance_for(options, t) != nullptr;
      if (c.needs_imatrix && !o.used_imatrix && options.imatrix && !options.dry_run)
        fail("tensor '{}': the importance matrix has no entry for it, and {} needs one (llama-quantize refuses it too)",
             t.name, dtype_name(o.to));
    }
    int64_t rows = 1;
    for (size_t d = 1; d < t.shape.size(); ++d) rows *= t.shape[d];
    o.bytes_out = o.quantized ? dtype_row_bytes(o.to, t.shape[0]) * rows : t.n_bytes;
    report.bytes_in += o.bytes_in;
    report.bytes_out += o.bytes_out;
    report.n_params += t.n_elements;
    ++report.type_counts[o.to];
    report.tensors.push_back(o);
    if (o.quantized && o.to == DType::NVFP4) {
      const int64_t experts = t.shape.size() > 2 ? t.shape[2] : 1;
      TensorOutcome f{gguf::factor_name(t.name), DType::F32, DType::F32, 0, experts * 4, false, false, false, true};
      if (f.name.empty()) fail("tensor '{}': an NVFP4 weight's name must end in .weight (its factor is <name>.scale)", t.name);
      factor_shapes[f.name] = {experts};
      report.bytes_out += f.bytes_out;
      report.tensors.push_back(f);
    }
  }
  if (options.dry_run) return report;

  gguf::GgufWriter out(options.output, in.alignment());
  copy_metadata(in, options, out);
  for (const TensorOutcome& o : report.tensors)
    out.add_tensor(o.name, o.to, o.factor ? factor_shapes.at(o.name) : in.find_tensor(o.name)->shape);
  out.write_header();

  std::optional<bench::ProgressBar> bar;
  if (options.progress) bar.emplace("quantize", report.bytes_in, bench::ProgressBar::Unit::Bytes);
  std::vector<uint8_t> buffer;
  std::vector<float> factors;  // of the last NVFP4 weight, written right after it
  for (const TensorOutcome& o : report.tensors) {
    if (o.factor) {
      out.write_tensor_data(factors.data(), factors.size() * 4);
      continue;
    }
    const gguf::TensorInfo& t = *in.find_tensor(o.name);
    if (bar) bar->set_note(o.name);
    const std::vector<float> in_factors = o.quantized ? input_factors(in, t) : std::vector<float>{};
    if (o.quantized && o.to == DType::NVFP4) factors = nvfp4_factors(t, in_factors, threads);
    if (!o.quantized && awq_of(t.name)) {  // a norm that takes AWQ's divisor (F32, checked by plan_awq)
      std::vector<float> values(reinterpret_cast<const float*>(t.data), reinterpret_cast<const float*>(t.data) + t.n_elements);
      apply_awq(*awq_of(t.name), 0, values.data(), t.n_elements);
      out.write_tensor_data(values.data(), values.size() * 4);
    } else if (!o.quantized) {
      out.write_tensor_data(t.data, size_t(t.n_bytes));
    } else {
      const float* importance = importance_of(t);
      const int64_t rows = t.n_elements / t.shape[0];
      const int64_t slab = std::max<int64_t>(1, std::min(rows, kSlabFloats / t.shape[0]));
      const int64_t dst_row = dtype_row_bytes(o.to, t.shape[0]);
      buffer.resize(size_t(slab * dst_row));
      for (int64_t r = 0; r < rows; r += slab) {
        const int64_t n = std::min(slab, rows - r);
        const RowTransform* transform = options.transform && options.transform->applies(t.name) ? options.transform : nullptr;
        quantize_slab(t, o.to, importance, in_factors, awq_of(t.name), factors, r, n, buffer.data(), threads, transform);
        out.write_tensor_data(buffer.data(), size_t(n * dst_row));
      }
    }
    if (bar) bar->advance(o.bytes_in);
  }
  out.finish();
  if (bar) bar->finish();
  report.awq_groups = awq.groups;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ridge::quant
