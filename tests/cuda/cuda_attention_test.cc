// The KV write and paged attention kernels against the host KV store and the CPU attention kernel,
// for every KV type, head size, GQA group, history length and split-K. Skipped without a device.
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "backend/cuda/device_kv_store.h"
#include "cuda_test_util.h"
#include "kernels/cpu/attention.h"

namespace ridge::cuda {
namespace {

using test::all_near;
using test::from_device;
using test::to_device;

struct Case {
  int heads, kv_heads, dim, block_size;
};

TEST(CudaAttention, KvWriteStoresWhatTheHostStoreStores) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (KvDtype dtype : {KvDtype::F16, KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    const KvLayout layout{1, 3, 64, 16, 4, dtype};
    KvStore host(layout);
    DeviceKvStore dev(layout);
    const int n = 9, kv_dim = 3 * 64;
    std::vector<float> k(size_t(n * kv_dim)), v(k.size());
    for (auto& x : k) x = normal(rng);
    for (auto& x : v) x = normal(rng);
    std::fill(k.begin(), k.begin() + 64, 0.0f);  // a zero head: scale 1
    const std::vector<int32_t> slots = {0, 1, 17, 63, 40, -1, 33, 2, 16};
    for (int t = 0; t < n; ++t)
      if (slots[size_t(t)] >= 0)
        host.write(0, slots[size_t(t)] / 16, slots[size_t(t)] % 16, k.data() + t * kv_dim, v.data() + t * kv_dim);
    const DeviceBuffer dk = to_device(k), dv = to_device(v), ds = to_device(slots);
    kv_write(dev.layer(0), dk.as<float>(), dv.as<float>(), ds.as<int32_t>(), n, nullptr);
    // The same encoded bytes and scales; the device keeps keys as rows where the host transposes them.
    const KvLayerView hv = host.layer(0);
    const KvLayerDevice dl = dev.layer(0);
    std::vector<uint8_t> data(size_t(hv.block_bytes * layout.n_blocks));
    std::vector<float> scales(size_t(std::max<int64_t>(1, hv.block_scales * layout.n_blocks)));
    dev.download_layer(0, data.data(), layout.scaled() ? scales.data() : nullptr);
    const int64_t eb = layout.element_bytes();
    for (int32_t slot_id : slots) {
      if (slot_id < 0) continue;
      const BlockId b = slot_id / 16;
      const int slot = slot_id % 16;
      const uint8_t* dev_key = data.data() + b * dl.block_bytes + slot * dl.row_bytes;
      const uint8_t* dev_value = dev_key + dl.value_offset;
      ASSERT_EQ(0, std::memcmp(dev_value, hv.value_row(b, slot), size_t(dl.row_bytes))) << kv_dtype_name(dtype) << " V " << slot_id;
      for (int h = 0; h < 3; ++h)
        for (int d = 0; d < 64; ++d)
          ASSERT_EQ(0, std::memcmp(dev_key + (h * 64 + d) * eb, hv.key_head(b, h) + (d * 16 + slot) * eb, size_t(eb)))
              << kv_dtype_name(dtype) << " K " << slot_id << " head " << h << " dim " << d;
      if (layout.scaled())
        for (int h = 0; h < 3; ++h) {
          EXPECT_EQ(scales[size_t(b * dl.block_scales + slot * 3 + h)], hv.key_scales(b, slot)[h]) << kv_dtype_name(dtype);
          EXPECT_EQ(scales[size_t(b * dl.block_scales + 16 * 3 + slot * 3 + h)], hv.value_scales(b, slot)[h]);
        }
    }
  }
}

TEST(CudaAttention, PagedAttentionMatchesTheCpuKernel) {
  RIDGE_REQUIRE_CUDA();
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (KvDtype dtype : {KvDtype::F16, KvDtype::BF16, KvDtype::FP8_E4M3, KvDtype::INT8}) {
    for (const Case& c : {Case{4, 4, 64, 16}, Case{9, 3, 64, 16}, Case{32, 8, 128, 16}, Case{8, 1, 128, 32}, Case{2, 2, 256, 16}}) {
      const int max_pos = 1100, n_blocks_seq = (max_pos + c.block_size) / c.block_size, n_seqs = 3;
      const KvLayout layout{1, c.kv_heads, c.dim, c.block_size, n_blocks_seq * n_seqs + 2, dtype};
      KvStore host(layout);
      DeviceKvStore dev(layout);
      // Three sequences with scattered blocks; every position written on both stores.
      std::vector<int32_t> pool(size_t(layout.n_blocks));
      std::iota(pool.begin(), pool.end(), 0);
      std::shuffle(pool.begin(), pool.end(), rng);
      std::vector<std::vector<BlockId>> tables;
      for (int sq = 0; sq < n_seqs; ++sq) tables.emplace_back(pool.begin() + sq * n_blocks_seq, pool.begin() + (sq + 1) * n_blocks_seq);
      const int kv_dim = c.kv_heads * c.dim;
      std::vector<float> k(size_t(max_pos * kv_dim)), v(k.size());
      for (int sq = 0; sq < n_seqs; ++sq) {
        for (auto& x : k) x = normal(rng);
        for (auto& x : v) x = normal(rng);
        std::vector<int32_t> slots(static_cast<size_t>(max_pos));
        for (int p = 0; p < max_pos; ++p) {
          const BlockId b = tables[size_t(sq)][size_t(p / c.block_size)];
          slots[size_t(p)] = b * c.block_size + p % c.block_size;
          host.write(0, b, p % c.block_size, k.data() + p * kv_dim, v.data() + p * kv_dim);
        }
        const DeviceBuffer dk = to_device(k), dv = to_device(v), ds = to_device(slots);
        kv_write(dev.layer(0), dk.as<float>(), dv.as<float>(), ds.as<int32_t>(), max_pos, nullptr);
      }
      // Query tokens at awkward positions of the three sequences.
      const std::vector<int32_t> positions = {0, 1, 63, 64, 65, 255, 256, 700, 1099};
      const int n = int(positions.size());
      std::vector<int32_t> offsets(static_cast<size_t>(n)), flat;
      for (int sq = 0; sq < n_seqs; ++sq) flat.insert(flat.end(), tables[size_t(sq)].begin(), tables[size_t(sq)].end());
      for (int t = 0; t < n; ++t) offsets[size_t(t)] = (t % n_seqs) * n_blocks_seq;
      std::vector<float> q(size_t(n * c.heads * c.dim));
      for (auto& x : q) x = normal(rng);
      const ref::AttentionArgs args{c.heads, c.kv_heads, c.dim, 1.0f / std::sqrt(float(c.dim))};
      std::vector<float> want(q.size());
      for (int t = 0; t < n; ++t)
        for (int h = 0; h < c.heads; ++h)
          cpu::attention_head_paged(args, h, q.data() + (t * c.heads + h) * c.dim, positions[size_t(t)], host.layer(0),
                                    tables[size_t(t % n_seqs)], want.data() + (t * c.heads + h) * c.dim);
      const DeviceBuffer dq = to_device(q), dpos = to_device(positions), doff = to_device(offsets), dtab = to_device(flat);
      for (const auto& [splits, size] : {std::pair{1, 1 << 30}, std::pair{5, 256}, std::pair{18, 64}}) {
        AttentionArgs a;
        a.n_heads = c.heads;
        a.n_kv_heads = c.kv_heads;
        a.head_dim = c.dim;
        a.scale = args.scale;
        a.n_tokens = n;
        a.positions = dpos.as<int32_t>();
        a.table_offsets = doff.as<int32_t>();
        a.tables = dtab.as<int32_t>();
        a.n_splits = splits;
        a.split_size = size;
        DeviceBuffer partials(std::max<int64_t>(16, attention_partial_floats(n, c.heads, c.dim, splits) * 4));
        a.partials = partials.as<float>();
        DeviceBuffer out(int64_t(q.size()) * 4);
        attention(a, dev.layer(0), dq.as<float>(), out.as<float>(), nullptr);
        EXPECT_TRUE(all_near(from_device<float>(out.get(), q.size()), want, 3e-3f, 3e-3f))
            << kv_dtype_name(dtype) << " heads " << c.heads << "/" << c.kv_heads << " dim " << c.dim << " splits " << splits;
      }
    }
  }
}

}  // namespace
}  // namespace ridge::cuda
