// A quantized tensor whose block has a NaN or infinite scale is refused at load, naming the tensor
// and the block (model/gguf/block_scales.h): every quantized type's scale fields are found, a block
// of finite scales passes whatever its other bytes hold.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <unistd.h>

#include "core/error.h"
#include "model/gguf/block_scales.h"
#include "model/gguf/gguf_file.h"
#include "model/model_loader.h"
#include "model/synth/synth_model.h"
#include "tiny_arch_spec.h"

namespace ridge {
namespace {

// Writes an f16 `h` into every scale field of a block of `type` (IQ1_M: its four scale nibbles).
void set_scales(DType type, uint8_t* block, uint16_t h) {
  const int64_t end = dtype_info(type).block_bytes;
  auto put = [&](int64_t off) { std::memcpy(block + off, &h, 2); };
  switch (type) {
    case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K: put(0); put(2); break;
    case DType::Q2_K: put(end - 4); put(end - 2); break;
    case DType::Q3_K: case DType::Q6_K: case DType::TQ1_0: case DType::TQ2_0: put(end - 2); break;
    case DType::Q8_K: {
      const float f = h == 0x3c00 ? 1.0f : std::numeric_limits<float>::quiet_NaN();
      std::memcpy(block, &f, 4);
      break;
    }
    case DType::MXFP4: block[0] = h == 0x3c00 ? 127 : 0xff; break;
    case DType::IQ1_M:
      for (int i = 0; i < 4; ++i) {
        uint16_t w;
        std::memcpy(&w, block + 48 + 2 * i, 2);
        w = uint16_t((w & 0x0fff) | (((h >> (4 * i)) & 0xf) << 12));
        std::memcpy(block + 48 + 2 * i, &w, 2);
      }
      break;
    default: put(0);
  }
}

TEST(BlockScales, EveryQuantizedTypesScaleIsChecked) {
  std::mt19937 rng(4);
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                     DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K, DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S,
                     DType::IQ3_XXS, DType::IQ3_S, DType::IQ1_S, DType::IQ1_M, DType::IQ4_NL, DType::IQ4_XS,
                     DType::TQ1_0, DType::TQ2_0, DType::MXFP4}) {
    const int64_t bytes = dtype_info(type).block_bytes, n = 9;
    std::vector<uint8_t> data(size_t(n * bytes));
    for (auto& b : data) b = uint8_t(rng());
    for (int64_t b = 0; b < n; ++b) set_scales(type, data.data() + b * bytes, 0x3c00);  // 1.0
    EXPECT_EQ(first_nonfinite_scale(type, data.data(), n), -1) << dtype_name(type);
    for (const uint16_t bad : {uint16_t(0x7e00), uint16_t(0xfc00)}) {  // NaN, -inf
      std::vector<uint8_t> broken = data;
      set_scales(type, broken.data() + 6 * bytes, bad);
      EXPECT_EQ(first_nonfinite_scale(type, broken.data(), n), 6) << dtype_name(type) << " " << bad;
    }
  }
  const float plain[4] = {1, std::numeric_limits<float>::quiet_NaN(), 2, 3};
  EXPECT_EQ(first_nonfinite_scale(DType::F32, reinterpret_cast<const uint8_t*>(plain), 4), -1);  // no scales
}

TEST(BlockScales, AFileWithANanScaleIsRefusedNamingTheTensor) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("nan_scale_" + std::to_string(getpid()) + ".gguf")).string();
  synth::SynthOptions o;
  o.spec = tiny_spec("llama");
  o.type = DType::Q4_0;
  synth::write_synth_model(o, path);
  EXPECT_NO_THROW(load_model(path));
  int64_t at = 0;
  {
    const auto file = gguf::GgufFile::open(path);
    const gguf::TensorInfo* t = file.find_tensor("blk.1.ffn_down.weight");
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->type, DType::Q4_0);
    at = int64_t(file.data_offset() + t->offset) + 3 * 18;
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at);
    const uint16_t nan = 0x7e00;
    f.write(reinterpret_cast<const char*>(&nan), 2);
  }
  try {
    load_model(path);
    ADD_FAILURE() << "loaded a file with a NaN scale";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'blk.1.ffn_down.weight' (Q4_0): block 3 of"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace ridge
