#include "model/load_gguf.h"

#include <cstring>

#include "core/error.h"
#include "core/huge_pages.h"
#include "model/arch/common_blocks.h"
#include "model/arch/registry.h"
#include "model/pack_weights.h"

namespace ridge {
namespace {

// Keeps the mapped file alive, the weights' huge-page copy, and f32 copies of small vectors
// (norms, biases) stored in other types.
struct GgufStorage {
  std::shared_ptr<const gguf::GgufFile> file;
  std::vector<std::vector<float>> f32_copies;
  std::unique_ptr<HugePageBuffer> weights;
  std::vector<std::unique_ptr<HugePageBuffer>> recoded;  // matrices re-encoded at load (pack_weights.h)
  std::shared_ptr<const ModelShard> shard;
};

// Copies the file's tensor data sections (one per shard of a split file) into huge pages, one
// after another, and points every weight view there.
void move_weights_to_huge_pages(GgufStorage& storage, ModelWeights& w) {
  if (storage.file->tensors().empty()) return;
  size_t size = 0;
  for (const auto& shard : storage.file->shards()) size += shard.data.size();
  storage.weights = std::make_unique<HugePageBuffer>(size);
  size_t at = 0;
  for (const auto& shard : storage.file->shards()) {
    const uint8_t* section = shard.data.data();
    std::memcpy(storage.weights->data() + at, section, shard.data.size());
    for_each_weight(w, [&](WeightRef& ref) {
      const auto* p = static_cast<const uint8_t*>(ref.data);
      if (p >= section && p < section + shard.data.size()) ref.data = storage.weights->data() + at + (p - section);
    });
    at += shard.data.size();
  }
}

}  // namespace

ModelSpec model_spec_from_gguf(const gguf::GgufFile& file) {
  ModelSpec spec;
  spec.arch = file.get_string("general.architecture").value_or("");
  const Architecture& arch = architecture_of(spec.arch);
  spec.name = file.get_string("general.name").value_or(spec.arch);
  const GgufHparams hparams(file, spec.arch);
  read_common_hparams(hparams, spec);
  arch.read_hparams(hparams, spec);
  validate(spec);
  return spec;
}

Model load_gguf_model(const std::string& path, const ShardRequest* shard) {
  auto file = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
  try {
    return load_gguf_model(std::move(file), shard);
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

Model load_gguf_model(std::shared_ptr<const gguf::GgufFile> file, const ShardRequest* shard) {
  auto storage = std::make_shared<GgufStorage>(GgufStorage{std::move(file), {}, nullptr, {}, nullptr});
  Model model;
  {
    model.spec = model_spec_from_gguf(*storage->file);
    const ModelSpec& s = model.spec;
    const Architecture& arch = architecture_of(s.arch);
    TensorBinder bind(*storage->file, storage->f32_copies);
    auto& w = model.weights;
    w.token_embd = bind.matrix("token_embd.weight", s.n_vocab, s.n_embd);
    w.output_norm = bind.vector("output_norm.weight", s.n_embd);
    w.output = s.tied_embeddings ? w.token_embd : bind.matrix("output.weight", s.n_vocab, s.n_embd);
    w.rope_freqs = bind.vector("rope_freqs.weight", s.rope_dim / 2, /*required=*/false);
    w.layers.resize(size_t(s.n_layer));
    for (int64_t i = 0; i < s.n_layer; ++i) arch.bind_layer(bind, s, i, w.layers[size_t(i)]);
  }
  if (shard) {
    // Only this rank's slices are copied out of the file.
    storage->shard = std::make_shared<const ModelShard>(plan_shard(model.spec, model.weights, *shard));
    storage->weights = shard_weights(model.weights, model.spec, *storage->shard);
    model.shard = storage->shard;
  } else {
    move_weights_to_huge_pages(*storage, model.weights);
  }
  // The copy is ours: regroup it for the CPU kernels in place (re-encoded matrices move to new buffers).
  storage->recoded = pack_weights_for_cpu(model.weights).buffers;
  model.storage = storage;
  return model;
}

}  // namespace ridge
