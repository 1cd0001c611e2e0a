#include "cli/disagg_options.h"

#include <cstdio>

#include "core/error.h"
#include "kv_transfer/pool_description.h"
#include "serve/kv_prefill_route.h"

namespace ridge::cli {

void add_disagg_options(CLI::App* cmd, DisaggCliOptions& o) {
  cmd->add_option("--role", o.role,
                  "prefill: compute prompts for decode instances and send their K/V; decode: serve clients, with long "
                  "prompts prefilled by --prefill-endpoint; both: everything here")
      ->check(CLI::IsMember({"prefill", "decode", "both"}))
      ->capture_default_str();
  cmd->add_option("--prefill-endpoint", o.prefill_endpoints, "a prefill instance, http://HOST:PORT (repeat for several; used in turn)");
  cmd->add_option("--kv-transfer-timeout", o.transfer_timeout_s,
                  "seconds a decode instance waits for a prompt's K/V before computing it itself")
      ->capture_default_str();
  cmd->add_option("--remote-prefill-min-tokens", o.min_tokens,
                  "decode: prompts with fewer uncached tokens are computed here")
      ->capture_default_str();
  cmd->add_option("--kv-transport", o.transport, "the KV transport (ucx)")->check(CLI::IsMember({"ucx"}))->capture_default_str();
}

std::unique_ptr<Disaggregation> setup_disaggregation(const DisaggCliOptions& o, EngineConfig& config) {
  if (o.role == "both") {
    if (!o.prefill_endpoints.empty()) fail("--prefill-endpoint needs --role decode");
    return nullptr;
  }
  if (config.parallel) fail("--role {} runs in one process (no --tp / --pp / --ep)", o.role);
  if (config.device == Device::Cuda) fail("--role {} keeps the KV pool in host memory: use --device cpu", o.role);
  config.device = Device::Cpu;
  auto d = std::make_unique<Disaggregation>();
  d->role = o.role;
  d->transport = kvx::make_ucx_transport();
  d->allocator = [t = d->transport.get()](size_t bytes) { return t->allocate(bytes); };
  config.kv_allocator = &d->allocator;
  if (o.role == "decode") {
    if (o.prefill_endpoints.empty()) fail("--role decode needs a prefill instance: --prefill-endpoint http://HOST:PORT");
    kvx::RemotePrefillOptions ro;
    ro.endpoints = o.prefill_endpoints;
    ro.min_tokens = std::max<int64_t>(1, o.min_tokens);
    ro.timeout_s = o.transfer_timeout_s;
    d->client = std::make_shared<kvx::RemotePrefillClient>(ro, *d->transport);
    config.remote_prefill = d->client;
  } else if (!o.prefill_endpoints.empty()) {
    fail("--prefill-endpoint is for --role decode");
  }
  return d;
}

void attach_disaggregation(Disaggregation& d, Engine& engine, const Model& model, HttpServer& server) {
  const nlohmann::json pool = kvx::describe_pool(model, engine.host_kv_store()->layout());
  if (d.client) d.client->set_pool(pool);
  if (d.role == "prefill") add_kv_prefill_route(server, engine, *d.transport, pool);
  std::fprintf(stderr, "role: %s, KV transport %s, pool %s\n", d.role.c_str(), std::string(d.transport->name()).c_str(),
               pool.dump().c_str());
}

}  // namespace ridge::cli
