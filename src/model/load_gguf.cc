#include "model/load_gguf.h"
#include "model/pack_weights.h"


#include <algorithm>
#include <array>
#include <cstring>

#include "core/error.h"
#include "core/huge_pages.h"
#include "kernels/ref/dequant.h"

namespace ridge {
namespace {

constexpr std::array kArchitectures = {"llama", "mistral", "qwen2"};

// Keeps the mapped file alive, the weights' huge-page copy, and f32 copies of small vectors
// (norms, biases) stored in other types.
struct GgufStorage {
  std::shared_ptr<const gguf::GgufFile> file;
  std::vector<std::vector<float>> f32_copies;
  std::unique_ptr<HugePageBuffer> weights;
  std::vector<std::unique_ptr<HugePageBuffer>> recoded;  // matrices re-encoded at load (pack_weights.h)
};

// Copies the file's tensor data section into huge pages and points every weight view there.
void move_weights_to_huge_pages(GgufStorage& storage, ModelWeights& w) {
  const auto& tensors = storage.file->tensors();
  if (tensors.empty()) return;
  const uint8_t* section = tensors[0].data - tensors[0].offset;
  const size_t size = size_t(storage.file->file_size() - storage.file->data_offset());
  storage.weights = std::make_unique<HugePageBuffer>(size);
  std::memcpy(storage.weights->data(), section, size);
  auto relocate = [&](WeightRef& ref) {
    const auto* p = static_cast<const uint8_t*>(ref.data);
    if (p >= section && p < section + size) ref.data = storage.weights->data() + (p - section);
  };
  for (WeightRef* ref : {&w.token_embd, &w.output_norm, &w.output, &w.rope_freqs}) relocate(*ref);
  for (auto& l : w.layers)
    for (WeightRef* ref : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv, &l.wo, &l.ffn_norm, &l.w_gate,
                           &l.w_up, &l.w_down})
      relocate(*ref);
}

class WeightBinder {
 public:
  WeightBinder(GgufStorage& storage) : storage_(storage) {}

  // A matrix of `rows` x `cols`, kept in its file type (dequantized inside the matmul).
  WeightRef matrix(const std::string& name, int64_t rows, int64_t cols, bool required = true) {
    const gguf::TensorInfo* t = storage_.file->find_tensor(name);
    if (!t) {
      if (required) fail("missing tensor '{}'", name);
      return {};
    }
    const int64_t file_rows = t->shape.size() > 1 ? t->shape[1] : 1;
    if (t->shape.size() > 2 || t->shape[0] != cols || file_rows != rows)
      fail("tensor '{}' has shape {}, expected [{}, {}]", name, shape_string(*t), cols, rows);
    if (!ref::can_dequantize(t->type)) fail("tensor '{}' has type {}, which ridge cannot compute with", name, dtype_name(t->type));
    return WeightRef{t->type, t->data, rows, cols};
  }

  // A vector of `n` values, always f32 (converted once if the file stores another type).
  WeightRef vector(const std::string& name, int64_t n, bool required = true) {
    WeightRef w = matrix(name, 1, n, required);
    if (!w.present() || w.type == DType::F32) return w;
    auto& copy = storage_.f32_copies.emplace_back(size_t(n));
    ref::dequantize_row(w.type, w.data, copy.data(), n);
    return WeightRef{DType::F32, copy.data(), 1, n};
  }

 private:
  static std::string shape_string(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    return s + "]";
  }

  GgufStorage& storage_;
};

}  // namespace

ModelSpec model_spec_from_gguf(const gguf::GgufFile& file) {
  ModelSpec spec;
  spec.arch = file.get_string("general.architecture").value_or("");
  if (std::find(kArchitectures.begin(), kArchitectures.end(), spec.arch) == kArchitectures.end())
    fail("architecture '{}' is not supported (ridge runs llama, mistral, qwen2)", spec.arch);
  spec.name = file.get_string("general.name").value_or(spec.arch);
  const std::string& a = spec.arch;
  auto required = [&](const std::string& key) { return file.get(a + "." + key).as_int(a + "." + key); };

  spec.n_layer = required("block_count");
  spec.n_embd = required("embedding_length");
  spec.n_ff = required("feed_forward_length");
  spec.n_head = required("attention.head_count");
  spec.n_head_kv = file.get_int(a + ".attention.head_count_kv").value_or(spec.n_head);
  spec.n_ctx_train = file.get_int(a + ".context_length").value_or(2048);
  spec.head_dim = file.get_int(a + ".attention.key_length").value_or(spec.n_head > 0 ? spec.n_embd / spec.n_head : 0);
  spec.rope_dim = file.get_int(a + ".rope.dimension_count").value_or(spec.head_dim);
  spec.rope_theta = float(file.get_double(a + ".rope.freq_base").value_or(10000.0));
  spec.rms_eps = float(file.get_double(a + ".attention.layer_norm_rms_epsilon").value_or(1e-5));
  spec.rope_style = a == "qwen2" ? RopeStyle::NeoX : RopeStyle::Normal;
  if (const auto vocab = file.get_int(a + ".vocab_size")) {
    spec.n_vocab = *vocab;
  } else if (const auto* tokens = file.find("tokenizer.ggml.tokens")) {
    spec.n_vocab = int64_t(tokens->as_array("tokenizer.ggml.tokens").size());
  }
  const std::string scaling = file.get_string(a + ".rope.scaling.type").value_or("none");
  if (scaling == "linear") {
    spec.rope_scaling.type = RopeScaling::Type::Linear;
    spec.rope_scaling.factor = float(file.get_double(a + ".rope.scaling.factor").value_or(1.0));
  } else if (scaling != "none" && scaling != "") {
    fail("RoPE scaling '{}' is not supported", scaling);
  }
  spec.qkv_bias = file.find_tensor("blk.0.attn_q.bias") != nullptr;
  spec.tied_embeddings = file.find_tensor("output.weight") == nullptr;
  validate(spec);
  return spec;
}

Model load_gguf_model(const std::string& path) {
  auto file = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
  try {
    return load_gguf_model(std::move(file));
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

Model load_gguf_model(std::shared_ptr<const gguf::GgufFile> file) {
  auto storage = std::make_shared<GgufStorage>(GgufStorage{std::move(file), {}, nullptr, {}});
  Model model;
  {
    model.spec = model_spec_from_gguf(*storage->file);
    const ModelSpec& s = model.spec;
    WeightBinder bind(*storage);
    auto& w = model.weights;
    w.token_embd = bind.matrix("token_embd.weight", s.n_vocab, s.n_embd);
    w.output_norm = bind.vector("output_norm.weight", s.n_embd);
    w.output = s.tied_embeddings ? w.token_embd : bind.matrix("output.weight", s.n_vocab, s.n_embd);
    w.rope_freqs = bind.vector("rope_freqs.weight", s.rope_dim / 2, /*required=*/false);
    w.layers.resize(size_t(s.n_layer));
    for (int64_t i = 0; i < s.n_layer; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      auto& l = w.layers[size_t(i)];
      l.attn_norm = bind.vector(p + "attn_norm.weight", s.n_embd);
      l.wq = bind.matrix(p + "attn_q.weight", s.q_dim(), s.n_embd);
      l.wk = bind.matrix(p + "attn_k.weight", s.kv_dim(), s.n_embd);
      l.wv = bind.matrix(p + "attn_v.weight", s.kv_dim(), s.n_embd);
      l.bq = bind.vector(p + "attn_q.bias", s.q_dim(), s.qkv_bias);
      l.bk = bind.vector(p + "attn_k.bias", s.kv_dim(), s.qkv_bias);
      l.bv = bind.vector(p + "attn_v.bias", s.kv_dim(), s.qkv_bias);
      l.wo = bind.matrix(p + "attn_output.weight", s.n_embd, s.q_dim());
      l.ffn_norm = bind.vector(p + "ffn_norm.weight", s.n_embd);
      l.w_gate = bind.matrix(p + "ffn_gate.weight", s.n_ff, s.n_embd);
      l.w_up = bind.matrix(p + "ffn_up.weight", s.n_ff, s.n_embd);
      l.w_down = bind.matrix(p + "ffn_down.weight", s.n_embd, s.n_ff);
    }
  }
  move_weights_to_huge_pages(*storage, model.weights);
  // The copy is ours: regroup it for the CPU kernels in place (re-encoded matrices move to new buffers).
  storage->recoded = pack_weights_for_cpu(model.weights).buffers;
  model.storage = storage;
  return model;
}

}  // namespace ridge
