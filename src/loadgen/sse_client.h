#pragma once
// One streaming request to an OpenAI-compatible server, timed as its chunks arrive. Never throws
// for a server's or the network's failure: those come back as a failed result with the message.
#include "loadgen/openai_api.h"
#include "loadgen/request_result.h"
#include "loadgen/workload.h"

namespace ridge::loadgen {

RequestResult send_streaming_request(const Endpoint& endpoint, const RequestSpec& request);

}  // namespace ridge::loadgen
