#pragma once
// A sentence-transformers model directory's pipeline, read from its own files: modules.json (the
// Transformer, Pooling, Dense and Normalize modules in order), 1_Pooling/config.json,
// <n>_Dense/config.json + model.safetensors, sentence_bert_config.json (max_seq_length) and
// config_sentence_transformers.json (task prompts, the default prompt). A directory without
// modules.json gets sentence-transformers' own default: mean pooling, no normalisation.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "embed/pooling.h"

namespace ridge {

struct EmbeddingPipeline {
  int64_t max_seq_length = 0;  // tokens a text is truncated to (0: the model's positions)
  PoolingMode pooling = PoolingMode::Mean;
  bool include_prompt = true;  // false: the prompt's tokens are left out of the pooling
  std::vector<DenseLayer> dense;
  bool normalize = false;
  std::map<std::string, std::string> prompts;  // name -> text prepended ("query" -> "task: search result | query: ")
  std::string default_prompt_name;             // "" when none
  // A cross-encoder (BertForSequenceClassification): the input is a pair, the "vector" its scores
  // (CLS through the pooler and the classifier, a sigmoid for one label, as sentence-transformers'
  // CrossEncoder.predict gives them), and /v1/rerank and /v1/score run pairs through it.
  bool cross_encoder = false;
  int64_t output_dim(int64_t n_embd) const { return dense.empty() ? n_embd : dense.back().out; }
  // The text of prompt `name`; error listing the model's prompts when it has none of that name.
  const std::string& prompt(const std::string& name) const;
};

// Error naming the file and field: an unknown module type, a pooling config with no mode, a Dense
// layer whose shapes do not chain.
EmbeddingPipeline read_embedding_pipeline(const std::string& dir, int64_t n_embd);

}  // namespace ridge
