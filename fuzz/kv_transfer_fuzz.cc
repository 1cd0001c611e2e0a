// libFuzzer target for what a disaggregation peer sends (kv_transfer/; see fuzz/README.md). There is
// no decoder of peer bytes in kv_events/ (it only encodes MessagePack for routers). Byte 0 (% 3) picks:
//   0: base64_decode (the peer's transport address in POST /ridge/kv/prefill); decoding what
//      base64_encode wrote gives the bytes back, and what decodes re-encodes to text that decodes
//      to the same bytes;
//   1: note_transfer_id (a note that arrived through the transport); transfer_note of a transfer
//      id read from JSON (as the prefill route reads it) gives that id back;
//   2: incompatibility (the "pool" of a prefill request against this instance's pool description),
//      with the body parsed as the route does.
// ridge::Error is the expected failure (base64); anything else escaping aborts.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "kv_transfer/kv_sender.h"
#include "kv_transfer/pool_description.h"
#include "kv_transfer/transport.h"
#include "fuzz_common.h"

namespace {

using ridge::fuzz::check;

void base64(std::string_view text) {
  const std::string encoded = ridge::kvx::base64_encode(text);
  check(encoded.size() % 4 == 0 && ridge::kvx::base64_decode(encoded) == text);
  try {
    const std::string bytes = ridge::kvx::base64_decode(text);
    check(bytes.size() <= text.size() / 4 * 3);
    ridge::fuzz::accepted("base64");
    check(ridge::kvx::base64_decode(ridge::kvx::base64_encode(bytes)) == bytes);
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
}

void note(std::string_view text) {
  const std::string id = ridge::kvx::note_transfer_id(std::string(text));
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, false);
  if (body.is_object() && body.contains("transfer_id") && body["transfer_id"].is_string()) {
    check(id == body["transfer_id"].get<std::string>());
    ridge::fuzz::accepted("note");
    check(ridge::kvx::note_transfer_id(ridge::kvx::transfer_note(id)) == id);
  } else {
    check(id.empty());
  }
}

void pool(std::string_view text) {
  static const nlohmann::json mine = {{"model", "0123456789abcdef"}, {"n_layer", 2},   {"n_kv_heads", 2},
                                      {"head_dim", 64},              {"block_size", 16}, {"dtype", "f16"},
                                      {"keys_only", false},          {"n_blocks", 100}};
  check(ridge::kvx::incompatibility(mine, mine).empty());
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, false);
  if (!body.is_object()) return;
  const std::string why = ridge::kvx::incompatibility(mine, body.value("pool", nlohmann::json()));
  ridge::fuzz::accepted(why.empty() ? "compatible pool" : why.c_str());
  if (why.empty()) {
    // The route then reads the peer's block count as an int32 (SendTarget::remote_n_blocks): an
    // accepted count must fit, or the layer stride of the puts would be a truncated one.
    const nlohmann::json& n_blocks = body["pool"]["n_blocks"];
    check(n_blocks.is_number_integer() && n_blocks.get<int64_t>() > 0);
    check(n_blocks.is_number_unsigned() ? n_blocks.get<uint64_t>() <= INT32_MAX : n_blocks.get<int64_t>() <= INT32_MAX);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: base64(text); break;
    case 1: note(text); break;
    default: pool(text); break;
  }
  return 0;
}
