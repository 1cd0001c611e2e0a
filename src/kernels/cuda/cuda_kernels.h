#pragma once
// The CUDA kernels as the rest of ridge calls them: plain pointers to device memory, shapes, and a
// stream passed as void* (a cudaStream_t; nullptr is the legacy default stream), so nothing outside
// src/kernels/cuda needs a CUDA header. Every launcher checks its arguments and its launch and
// throws ridge::Error on a CUDA error or on a type or shape it does not handle (never a silent skip).
// Numerics follow the CPU path (kernels/ref, kernels/cpu): the same activation quantization and
// integer block dots for 4/8-bit weights, the same RoPE table, RMSNorm summed in double.
#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "kernels/cuda/weight_layout.h"
#include "kv/kv_dtype.h"

namespace ridge::cuda {

using Stream = void*;

// ---- runtime (runtime.cc) ----------------------------------------------------------------------

int device_count();  // 0 when there is no device or no usable driver; never throws

struct DeviceProps {
  std::string name;
  int major = 0, minor = 0;
  int n_sms = 0;
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  double datasheet_bandwidth_gbs = 0;  // from the memory clock and bus width the driver reports
};
DeviceProps device_props(int device);
void set_device(int device);
std::string driver_versions();  // "driver 13.0, runtime 13.0"

void* device_malloc(int64_t bytes);  // cudaMalloc; the error names the size
void device_free(void* p);
void* pinned_malloc(int64_t bytes);  // page-locked host memory for async copies
void pinned_free(void* p);
void copy_to_device(void* dst, const void* src, int64_t bytes, Stream s);  // async on s
void copy_to_host(void* dst, const void* src, int64_t bytes, Stream s);
void copy_on_device(void* dst, const void* src, int64_t bytes, Stream s);
void fill_zero(void* dst, int64_t bytes, Stream s);

Stream stream_create();
void stream_destroy(Stream s);
void stream_sync(Stream s);
void device_sync();

// CUDA graphs: capture the work queued on s between begin and end into an executable graph.
void capture_begin(Stream s);
void* capture_end(Stream s);  // cudaGraphExec_t
void graph_launch(void* exec, Stream s);
void graph_destroy(void* exec);

void* event_create();
void event_destroy(void* e);
void event_record(void* e, Stream s);
float event_elapsed_ms(void* start, void* end);  // waits for `end`

// ---- activations and weights (gemv.cu, dequant.cu) ---------------------------------------------

// Activations as int8 blocks of 32 for the integer dots, in cpu::quantize_activations' rounding:
// q = round-half-even(x * 127/amax), d = amax/127 rounded to f16, s = d·Σq rounded to f16.
struct ActBlocks {
  int8_t* q;    // (n_tokens, cols)
  float* meta;  // (n_tokens, cols/32, 4): d, s, Σq (as float), 0
};
void quantize_activations(const float* x, int64_t n_tokens, int64_t cols, ActBlocks out, Stream s);

// A matrix in the device layout of weight_layout.h.
struct DeviceMatrix {
  DType type = DType::F32;
  const uint8_t* data = nullptr;  // weight_sections(type, rows, cols).bytes
  int64_t rows = 0, cols = 0;
};

// Skinny GEMM for decode: y[t * rows + r] (+)= dot(W row r, x row t) for up to kGemvMaxTokens
// tokens, one warp per output row. Up to three matrices of one type that read the same input
// (Q, K, V; gate, up) go in one launch. Quantized types read `acts`; float types read `x`.
inline constexpr int64_t kGemvMaxTokens = 8;
struct GemvOutput {
  DeviceMatrix w;
  float* y;  // (n_tokens, w.rows)
};
struct GemvArgs {
  GemvOutput out[3];
  int n_out = 1;
  const float* x = nullptr;  // (n_tokens, cols) f32
  ActBlocks acts{};          // quantize_activations(x) for quantized types
  int64_t n_tokens = 1;
  bool accumulate = false;   // y += x·Wᵀ (the residual add folded in)
};
bool gemv_quantized(DType type);  // Q4_0, Q4_1, Q8_0, Q6_K: integer dots against ActBlocks
void gemv(const GemvArgs& args, Stream s);

// Rows of a device matrix to f32: out (n_rows, cols) = W[row_ids[i]] (the embedding lookup).
// row_ids is device memory.
void dequantize_rows(const DeviceMatrix& w, const int32_t* row_ids, int64_t n_rows, float* out, Stream s);
// The whole matrix to BF16 (rows, cols): the GEMM copy of a quantized weight, made once at upload.
void dequantize_to_bf16(const DeviceMatrix& w, uint16_t* out, Stream s);
void round_to_bf16(const float* x, int64_t n, uint16_t* out, Stream s);

// ---- GEMM through cuBLASLt (gemm_lt.cc) -------------------------------------------------------

// One cuBLASLt handle, its workspace and the algorithms chosen per shape. Not thread-safe.
class GemmLt {
 public:
  explicit GemmLt(int64_t workspace_bytes = int64_t(32) << 20);
  ~GemmLt();
  GemmLt(const GemmLt&) = delete;
  GemmLt& operator=(const GemmLt&) = delete;

  // y (n, rows) f32 (+)= x (n, cols) bf16 · w (rows, cols) bf16ᵀ
  void bf16(const uint16_t* w, const uint16_t* x, float* y, int64_t rows, int64_t cols, int64_t n, bool accumulate,
            Stream s);
  // y (n, rows) bf16 = (scale_w · scale_x) · x (n, cols) e4m3 · w (rows, cols) e4m3ᵀ; scales are device
  // floats (per tensor). Hopper and later.
  void fp8(const uint8_t* w, const uint8_t* x, uint16_t* y, int64_t rows, int64_t cols, int64_t n, const float* scale_w,
           const float* scale_x, Stream s);

 private:
  struct Plan;
  Plan& plan_for(int kind, int64_t rows, int64_t cols, int64_t n, bool accumulate);
  void* handle_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  struct Plans;
  Plans* plans_ = nullptr;
};

// ---- normalisation, RoPE, activations, sampling (elementwise.cu) -------------------------------

// out row i = RMSNorm(x row rows[i]) · weight (rows == nullptr: row i); sums of squares in double.
void rms_norm(const float* x, const int32_t* rows, const float* weight, int64_t n_rows, int64_t n, float eps, float* out,
              Stream s);

// RoPE from a table of (cos, sin) per position and pair, built on the host exactly as ref::rope
// builds its angles (backend/rope_table), so the rotation is the CPU's bit for bit.
struct RopeTable {
  const float* cos_sin = nullptr;  // (n_positions, rope_dim / 2, 2)
  int64_t n_positions = 0;
  int64_t head_dim = 0, rope_dim = 0;
  bool neox = false;
};
// x: (n_tokens, n_heads, head_dim) in place; positions: device (n_tokens), each < n_positions.
void rope(const RopeTable& table, const int32_t* positions, int64_t n_tokens, int64_t n_heads, float* x, Stream s);

void swiglu(float* gate, const float* up, int64_t n, Stream s);                         // gate = silu(gate) · up
void add(float* x, const float* y, int64_t n, Stream s);                               // x += y
void add_bias(float* x, const float* bias, int64_t n_rows, int64_t n, Stream s);       // x[r] += bias
void argmax_rows(const float* x, int64_t n_rows, int64_t n, int32_t* out, Stream s);  // first maximum, as the CPU sampler

// ---- probes (elementwise.cu) -------------------------------------------------------------------

// Reads `bytes` (a multiple of 16) with 16-byte loads and writes one float per thread block into
// `sink` (at least read_probe_blocks() floats): the device's read bandwidth.
int read_probe_blocks();
void read_probe(const void* data, int64_t bytes, float* sink, Stream s);
// Pseudo-random values of a given scale: BF16 (~N(0, scale²)-like) and FP8 E4M3 bytes.
void fill_random_bf16(uint16_t* out, int64_t n, uint32_t seed, float scale, Stream s);
void fill_random_fp8(uint8_t* out, int64_t n, uint32_t seed, float scale, Stream s);

// ---- paged attention (attention.cu) -----------------------------------------------------------

// One layer of the device KV store (backend/cuda/device_kv_store.h): per block K rows then V rows;
// FP8/INT8 with one f32 scale per position and kv head.
struct KvLayerDevice {
  KvDtype dtype = KvDtype::F16;
  int32_t block_size = 16;
  int64_t n_kv_heads = 0, head_dim = 0;
  uint8_t* data = nullptr;  // block b's keys at data + b * block_bytes, values + value_offset
  int64_t block_bytes = 0, value_offset = 0, row_bytes = 0;
  float* scales = nullptr;  // block b: (2, block_size, n_kv_heads) at scales + b * block_scales
  int64_t block_scales = 0;
};

// k, v: (n_tokens, kv_dim) f32; slots: device (n_tokens) block * block_size + slot, < 0 skips the token.
void kv_write(const KvLayerDevice& kv, const float* k, const float* v, const int32_t* slots, int64_t n_tokens,
              Stream s);

inline constexpr int kAttentionTile = 64;     // positions per tile of the online softmax
inline constexpr int kAttentionMaxGroup = 8;  // query heads per kv head
inline constexpr int kAttentionMaxSplits = 64;
bool attention_head_dim_supported(int64_t head_dim);  // 64, 128, 256

struct AttentionArgs {
  int64_t n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  int64_t n_tokens = 0;
  const int32_t* positions = nullptr;      // device (n_tokens): token t attends positions 0..positions[t]
  const int32_t* table_offsets = nullptr;  // device (n_tokens): token t's block table at tables + offset
  const int32_t* tables = nullptr;         // device, the block tables side by side
  // Split-K (flash-decoding): positions [i * split_size, (i + 1) * split_size) per split, merged after.
  int n_splits = 1;
  int split_size = 1 << 30;  // a multiple of kAttentionTile when n_splits > 1
  float* partials = nullptr;  // attention_partial_floats(...) floats when n_splits > 1
};
int64_t attention_partial_floats(int64_t n_tokens, int64_t n_heads, int64_t head_dim, int n_splits);
// q: (n_tokens, n_heads, head_dim) -> out: same shape. GQA: query head h reads kv head h / (n_heads / n_kv_heads).
void attention(const AttentionArgs& args, const KvLayerDevice& kv, const float* q, float* out, Stream s);

}  // namespace ridge::cuda
