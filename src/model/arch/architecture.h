#pragma once
// An architecture is what a model family adds to the shared loader and forward pass: its
// hyperparameters, the names of its tensors, and its layer as a sequence of named blocks
// (model/arch/layer_pass.h). One file per architecture (model/arch/<name>.cc), found by name in
// the registry (model/arch/registry.h); the KV store, the scheduler and the runner never ask.
#include <cstdint>
#include <string_view>

#include "model/arch/gguf_binding.h"
#include "model/arch/layer_pass.h"
#include "model/model_spec.h"
#include "model/weights.h"

namespace ridge {

class Architecture {
 public:
  virtual ~Architecture() = default;
  virtual std::string_view name() const = 0;
  // The family's own hyperparameters (the shared ones, read_common_hparams, are in spec already).
  // Error on a value ridge does not run, naming it.
  virtual void read_hparams(const GgufHparams& hparams, ModelSpec& spec) const = 0;
  // Layer l's tensors, named as llama.cpp names them.
  virtual void bind_layer(TensorBinder& bind, const ModelSpec& spec, int64_t l, LayerWeights& w) const = 0;
  // Layer l of the forward pass over the batch in `pass`.
  virtual void layer(LayerPass& pass, const ModelSpec& spec, const LayerWeights& w, int64_t l) const = 0;
};

}  // namespace ridge
