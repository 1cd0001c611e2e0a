#pragma once
// What `ridge serve`, `ridge batch` and `ridge bench batch` share: the engine's command-line
// flags, loading a model with its tokenizer and chat template, and the memory plan printed at start.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/parallel_options.h"
#include "engine/engine.h"
#include "model/gguf/gguf_file.h"
#include "tokenizer/chat_template.h"

namespace ridge::cli {

struct EngineCliOptions {
  std::string model = "default";
  std::string kv_memory;        // "512MiB", "2GiB", ...; empty: the engine's default
  std::string kv_dtype = "f16";
  bool no_prefix_caching = false;
  std::string chat_template;    // overrides the model's
  std::string device = "auto";  // cpu, cuda, auto
  std::string speculative = "off";  // off, ngram, draft, auto
  std::string draft_model;          // GGUF of a draft model with the same vocabulary
  // KV cache events for KV-aware routers (vLLM's kv_events_config; kv_events/zmq_publisher.h).
  std::string kv_events_endpoint;         // empty: off
  std::string kv_events_replay_endpoint;  // empty: no replay socket
  std::string kv_events_topic;
  std::string kv_events_encoding = "array";
  // Tiered KV cache (kv/kv_tiers): evicted prefix blocks kept in RAM, then on disk.
  std::string kv_offload_ram;   // "4GiB"; empty: no RAM tier
  std::string kv_offload_dir;   // empty: no disk tier
  std::string kv_offload_size = "16GiB";
  ParallelCliOptions parallel;
  EngineConfig config;
  // Given on the command line (they win over what --slo would choose).
  CLI::Option* max_num_seqs_flag = nullptr;
  CLI::Option* max_batched_tokens_flag = nullptr;
  CLI::Option* prefill_chunk_flag = nullptr;
};

void add_engine_options(CLI::App* cmd, EngineCliOptions& o);
EngineConfig engine_config(const EngineCliOptions& o);  // error on a bad size or dtype
int64_t parse_bytes(const std::string& text);           // "1.5GiB", "300MiB", "64M", "1G"; a bare number is MiB

// A model ready for the engine. Kept behind a pointer: the engine holds references into it.
struct LoadedModel {
  std::shared_ptr<const gguf::GgufFile> file;  // null for a Hugging Face checkpoint directory
  Model model;
  Tokenizer tokenizer;
  ChatTemplate chat;
  std::string name;  // file name without .gguf, or the checkpoint directory's name
  std::unique_ptr<LoadedModel> draft;  // --draft-model, when given
};
// The model, and the draft model the options name (checked to share its vocabulary).
std::unique_ptr<LoadedModel> load_model_for_engine(const EngineCliOptions& o);
// shard: only this rank's part of the weights (a model split across ranks).
std::unique_ptr<LoadedModel> load_model_for_engine(const std::string& model, const std::string& chat_template_override,
                                                   const ShardRequest* shard = nullptr);
// A Hugging Face checkpoint directory's chat template: tokenizer_config.json's chat_template, else
// the chat_template.jinja file newer checkpoints carry; nullopt when it has neither.
std::optional<std::string> hf_chat_template(const std::string& dir, const Tokenizer& tokenizer);
// engine_config with the draft model of `m` attached, and the KV event publisher (bound or
// connected here) when the options ask for one.
EngineConfig engine_config(const EngineCliOptions& o, const LoadedModel& m);
// On a rank other than 0 of a split model: serves its part of every step until rank 0 is done,
// then returns true (the command has nothing else to do there). False on rank 0 and when alone.
bool run_as_worker(const EngineCliOptions& o, const LoadedModel& m);

// The prompt of a chat request, rendered with the model's template and tokenized.
std::vector<int32_t> encode_chat(const LoadedModel& m, const std::vector<ChatMessage>& messages);

// Weight bytes, KV bytes per token, tokens of KV that fit, full-context sequences (stderr).
void print_memory_plan(const Engine& engine, const LoadedModel& m);

}  // namespace ridge::cli
