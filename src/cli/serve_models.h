#pragma once
// `ridge serve` with many models: -m given more than once, or --models-dir. The models are loaded
// on demand by a models::ModelRegistry, each with its own engine, all sharing the machine's cores
// through models::SharedCores; the HTTP server routes by the request's "model".
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/engine_options.h"
#include "serve/http_server.h"

namespace ridge::cli {

struct MultiModelCliOptions {
  std::vector<std::string> models;   // -m [NAME=]SOURCE, each
  std::string models_dir;
  std::vector<std::string> aliases;  // NAME=ALIAS[,ALIAS]
  int32_t models_max = 0;
  std::string models_memory;         // "" : a share of the machine's (or cgroup's) memory
  double load_timeout_s = 120;
  double idle_unload_s = 0;
  bool preload = false;
  // True when the command line asks for more than one model.
  bool active() const { return models.size() > 1 || !models_dir.empty(); }
};

// What each generative model's server side needs beyond the engine flags.
struct ModelServeSettings {
  std::string tool_call_parser;
  std::string reasoning_format = "separate";
  int32_t reasoning_budget = -1;
  std::string embedding_dtype = "auto";
};

// Replaces the engine options' -m (one file) with a repeatable one bound to `o.models`.
void add_multi_model_options(CLI::App* cmd, MultiModelCliOptions& o);

// Serves until `run` returns (it runs the HTTP server until a signal stops it).
void serve_many_models(const MultiModelCliOptions& many, const EngineCliOptions& engine, const ModelServeSettings& settings,
                       const ServerConfig& config, const std::function<void(HttpServer&)>& run);

}  // namespace ridge::cli
