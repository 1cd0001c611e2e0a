#pragma once
// `ridge serve --role prefill|decode|both`: disaggregated prefill/decode. A decode instance (the
// one clients talk to) reserves blocks for each long prompt and asks a prefill instance
// (--prefill-endpoint) to compute it and put the K/V into them over the KV transport (UCX).
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/engine.h"
#include "kv_transfer/remote_prefill_client.h"
#include "kv_transfer/transport.h"
#include "serve/http_server.h"

namespace ridge::cli {

struct DisaggCliOptions {
  std::string role = "both";
  std::vector<std::string> prefill_endpoints;
  double transfer_timeout_s = 60;
  int64_t min_tokens = 64;
  std::string transport = "ucx";  // ucx; loopback only inside one process (tests)
};

void add_disagg_options(CLI::App* cmd, DisaggCliOptions& o);

// What a prefill or decode instance holds beside its engine: the transport whose memory is the KV
// pool, and on a decode instance the client that asks prefill instances.
struct Disaggregation {
  std::string role;
  std::unique_ptr<kvx::KvTransport> transport;
  KvAllocator allocator;
  std::shared_ptr<kvx::RemotePrefillClient> client;
};

// Null for --role both. Before the engine is made: sets config's KV allocator and remote prefill.
std::unique_ptr<Disaggregation> setup_disaggregation(const DisaggCliOptions& o, EngineConfig& config);
// After the engine and the server are made: the pool description, and a prefill instance's route.
void attach_disaggregation(Disaggregation& d, Engine& engine, const Model& model, HttpServer& server);

}  // namespace ridge::cli
