// ridge dequant (hidden): decode tensors to raw little-endian f32, so tests can compare ridge's
// reference dequantizer with an outside one (tests/conformance/test_dequant.py uses the gguf package).
//   ridge dequant MODEL --tensor NAME [--tensor NAME ...] -o OUT   tensors from a GGUF file, concatenated
//   ridge dequant --type Q4_K --raw BLOCKS -o OUT                   a file of raw blocks of one type
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "kernels/ref/dequant.h"
#include "model/gguf/gguf_file.h"

namespace ridge::cli {
namespace {

struct DequantArgs {
  std::string model;
  std::vector<std::string> tensors;
  std::string type;
  std::string raw;
  std::string output;
};

void append(std::ofstream& out, DType type, const uint8_t* data, int64_t n) {
  std::vector<float> values(static_cast<size_t>(n));
  ref::dequantize_row(type, data, values.data(), n);
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
}

void run_dequant(const DequantArgs& args) {
  std::ofstream out(args.output, std::ios::binary);
  if (!out) fail("cannot write {}", args.output);
  if (!args.raw.empty()) {
    const auto type = dtype_from_name(args.type);
    if (!type) fail("unknown tensor type '{}'", args.type);
    std::ifstream in(args.raw, std::ios::binary);
    if (!in) fail("cannot read {}", args.raw);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    const auto& info = dtype_info(*type);
    if (bytes.size() % size_t(info.block_bytes) != 0)
      fail("{} holds {} bytes, not a whole number of {}-byte {} blocks", args.raw, bytes.size(), info.block_bytes, info.name);
    append(out, *type, bytes.data(), int64_t(bytes.size()) / info.block_bytes * info.block_size);
  } else {
    if (args.model.empty() || args.tensors.empty()) fail("give MODEL and --tensor, or --type and --raw");
    const auto file = gguf::GgufFile::open(args.model);
    for (const auto& name : args.tensors) {
      const auto* t = file.find_tensor(name);
      if (!t) fail("{} has no tensor '{}'", args.model, name);
      append(out, t->type, t->data, t->n_elements);
    }
  }
  if (!out.flush()) fail("write to {} failed", args.output);
}

}  // namespace

void add_dequant_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("dequant", "Decode tensors to raw f32 (for tests)");
  cmd->group("");  // hidden from --help: a test hook, not a user feature
  auto args = std::make_shared<DequantArgs>();
  cmd->add_option("model", args->model, "GGUF file");
  cmd->add_option("--tensor", args->tensors, "tensor name (repeatable)");
  cmd->add_option("--type", args->type, "block type of --raw (Q4_K, F16, ...)");
  cmd->add_option("--raw", args->raw, "file of raw blocks");
  cmd->add_option("-o,--output", args->output, "f32 output file")->required();
  cmd->callback([args] { run_dequant(*args); });
}

}  // namespace ridge::cli
