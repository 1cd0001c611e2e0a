// The GGUF `bert` layout (llama.cpp's converter): "bert.*" hyperparameters and llama.cpp's tensor
// names. Weights stay in the mapped file in their stored type (F32, F16, Q8_0, ...).
#include "core/error.h"
#include "embed/encoder_model.h"
#include "model/arch/gguf_binding.h"

namespace ridge {
namespace {

struct BertGgufStorage {
  std::shared_ptr<const gguf::GgufFile> file;
  std::vector<std::vector<float>> f32_copies;
};

}  // namespace

EncoderModel load_bert_gguf(const std::string& path) {
  return load_bert_gguf(std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path)), path);
}

EncoderModel load_bert_gguf(std::shared_ptr<const gguf::GgufFile> opened, const std::string& path) {
  EncoderModel model;
  try {
    auto storage = std::make_shared<BertGgufStorage>();
    storage->file = std::move(opened);
    const gguf::GgufFile& file = *storage->file;
    const std::string arch = file.get_string("general.architecture").value_or("");
    if (arch != "bert") fail("general.architecture '{}' is not an encoder ridge runs (bert)", arch);
    const GgufHparams h(file, arch);
    EncoderSpec& s = model.spec;
    s.name = file.get_string("general.name").value_or("bert");
    s.n_embd = h.required_int("embedding_length");
    s.n_head = h.required_int("attention.head_count");
    s.n_layer = h.required_int("block_count");
    s.n_ff = h.required_int("feed_forward_length");
    s.n_positions = h.required_int("context_length");
    s.norm_eps = float(h.get_double("attention.layer_norm_epsilon").value_or(1e-12));
    if (h.get_bool("attention.causal").value_or(false)) fail("bert.attention.causal is true; ridge's BERT attends both ways");
    const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight");
    if (!embd || embd->shape.size() != 2) fail("missing 2-D tensor 'token_embd.weight'");
    s.n_vocab = embd->shape[1];
    if (const gguf::TensorInfo* types = file.find_tensor("token_types.weight")) {
      if (types->shape.size() != 2) fail("tensor 'token_types.weight' must be 2-D");
      s.n_token_types = types->shape[1];
    }
    for (int64_t v : {s.n_embd, s.n_head, s.n_layer, s.n_ff, s.n_positions})
      if (v <= 0 || v > (int64_t(1) << 24)) fail("a bert.* shape is out of range ({})", v);
    if (s.n_embd % s.n_head != 0) fail("embedding_length {} is not a multiple of {} heads", s.n_embd, s.n_head);

    TensorBinder b(file, storage->f32_copies);
    bind_encoder_weights(
        s, model.weights, [&](const std::string& name, int64_t rows, int64_t cols) { return b.matrix(name, rows, cols); },
        [&](const std::string& name, int64_t n) { return b.vector(name, n); });
    model.storage = storage;
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
  return model;
}

}  // namespace ridge
