#pragma once
// POST /ridge/kv/prefill on a prefill instance (`ridge serve --role prefill`): a decode instance
// sends the tokens, the blocks it reserved, its transport address and pool description; this
// instance computes the prompt and puts each layer's K/V into those blocks as soon as it is
// computed (kv_transfer/kv_sender), then answers with what the transfer did. GET
// /ridge/kv/transfers lists the last 64 transfers' reports (bytes, descriptors, the time each
// layer was handed to the transport, the end of the compute and of the transfer).
#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "kv_transfer/transport.h"
#include "serve/http_server.h"

namespace ridge {

void add_kv_prefill_route(HttpServer& server, Engine& engine, kvx::KvTransport& transport, nlohmann::json pool);

}  // namespace ridge
