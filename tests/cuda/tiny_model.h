#pragma once
// A small random Llama model written and loaded once per test (synth), for the CUDA tests.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "model/model_loader.h"
#include "model/synth/synth_model.h"

namespace ridge::test {

// n_embd / n_head = head_dim; two layers, GQA of 2; stddev 0.15 makes greedy choices clear.
inline synth::SynthOptions tiny_options(DType type, int64_t n_embd, int64_t n_head, int64_t n_ff, int64_t n_ctx) {
  synth::SynthOptions o;
  o.spec.arch = "llama";
  o.spec.name = "tiny";
  o.spec.n_vocab = 512;
  o.spec.n_embd = n_embd;
  o.spec.n_layer = 2;
  o.spec.n_head = n_head;
  o.spec.n_head_kv = n_head / 2;
  o.spec.head_dim = n_embd / n_head;
  o.spec.rope_dim = o.spec.head_dim;
  o.spec.n_ff = n_ff;
  o.spec.n_ctx_train = n_ctx;
  o.type = type;
  o.stddev = 0.15f;
  return o;
}

// Writes the model to a temporary file, calls use(path), and removes the file.
template <typename Use>
void with_tiny_model_file(const synth::SynthOptions& o, const std::string& tag, Use&& use) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ridge_" + tag + "_" + std::to_string(getpid()) + ".gguf")).string();
  synth::write_synth_model(o, path);
  try {
    use(path);
  } catch (...) {
    std::filesystem::remove(path);
    throw;
  }
  std::filesystem::remove(path);
}

}  // namespace ridge::test
