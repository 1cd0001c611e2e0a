// libFuzzer target for the Hugging Face checkpoint readers (see fuzz/README.md). Byte 0 (% 3) picks:
//   0: a safetensors file (SafetensorsFile::parse of the rest, in memory); when it parses, every
//      tensor's byte range must lie in the input, tile the data section, and be found by name;
//   1: a config.json (the rest parsed as JSON, as read_hf_config does, then model_spec_from_hf_config);
//   2: a model.safetensors.index.json (the rest, written into a temporary checkpoint directory
//      beside two small valid shards, a.safetensors and b.safetensors; SafetensorsCheckpoint::open).
// ridge::Error is the expected failure; anything else escaping aborts.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/safetensors/hf_config.h"
#include "model/safetensors/safetensors_checkpoint.h"
#include "model/safetensors/safetensors_file.h"
#include "fuzz_common.h"

namespace {

using ridge::fuzz::check;

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  check(bool(out));
}

// A safetensors file of the tensors named in `header` (JSON), with `data` after it.
std::string shard(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header + data;
}

// The checkpoint directory, made once (and removed at exit): shards a.safetensors ("x", "y") and
// b.safetensors ("z"). Never destroyed, so the exit handler can still read it.
const std::string& checkpoint_dir() {
  static const std::string& dir = *new std::string([] {
    char tmpl[] = "/tmp/ridge_safetensors_fuzz.XXXXXX";
    check(::mkdtemp(tmpl) != nullptr);
    const std::string d = tmpl;
    write_file(d + "/a.safetensors",
               shard(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                     R"("y":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]},"__metadata__":{"format":"pt"}})",
                     std::string(12, '\x01')));
    write_file(d + "/b.safetensors", shard(R"({"z":{"dtype":"F16","shape":[3],"data_offsets":[0,6]}})", std::string(6, '\x02')));
    std::atexit([] { std::filesystem::remove_all(checkpoint_dir()); });
    return d;
  }());
  return dir;
}

void exercise_file(std::span<const uint8_t> bytes) {
  const ridge::SafetensorsFile file = ridge::SafetensorsFile::parse(bytes, "fuzz");
  uint64_t total = 0;
  for (const ridge::SafetensorsTensor& t : file.tensors()) {
    check(t.begin <= t.end && t.data >= bytes.data() && t.data + (t.end - t.begin) <= bytes.data() + bytes.size());
    check(file.find(t.name) == &t);
    check(t.n_elements >= 0 && int64_t(t.shape.size()) <= 8);
    if (t.end > t.begin) {
      volatile uint8_t first = t.data[0], last = t.data[t.end - t.begin - 1];
      (void)first, (void)last;
    }
    total += t.end - t.begin;
  }
  check(total <= bytes.size());
  for (const auto& [key, value] : file.metadata()) {
    volatile size_t n = key.size() + value.size();
    (void)n;
  }
}

void exercise_config(std::string_view text) {
  const auto config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return;  // read_hf_config: "not valid JSON"
  const ridge::ModelSpec spec = ridge::model_spec_from_hf_config(config);
  check(spec.n_head > 0);
}

void exercise_index(std::string_view text) {
  const std::string& dir = checkpoint_dir();
  write_file(dir + "/model.safetensors.index.json", text);
  const ridge::SafetensorsCheckpoint checkpoint = ridge::SafetensorsCheckpoint::open(dir);
  for (const char* name : {"x", "y", "z", "w"})
    if (const ridge::SafetensorsTensor* t = checkpoint.find(name)) check(t->name == name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> rest(data + 1, size - 1);
  const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());
  try {
    switch (data[0] % 3) {
      case 0: exercise_file(rest); break;
      case 1: exercise_config(text); break;
      default: exercise_index(text); break;
    }
    ridge::fuzz::accepted(data[0] % 3 == 0 ? "safetensors" : data[0] % 3 == 1 ? "config.json" : "index");
  } catch (const ridge::Error& e) {
    ridge::fuzz::rejected(e);
  }
  return 0;
}
