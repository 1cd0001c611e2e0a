"""ridge's reference dequantizer against the gguf package's `gguf.quants.dequantize`.

For every type ridge decodes: random blocks (quantized by the package where it can, and random bytes
with random finite f16 scales, which reach every bit pattern of the quants) and every tensor of the
default model. The f32 results must be bit-identical: ridge forms each value with the same operations
in the same order as the package (and ggml), so no rounding difference is expected. Should one ever
appear, the test reports the largest difference in ulps and still fails above 1 ulp.

Q8_K has no decoder in the package (it is ggml's dot-product activation format); it is compared with
the one-line formula from ggml's dequantize_row_q8_K (x = d * q, d an f32) written here in numpy.
Run with `pytest -s` to see the per-type summary lines.
"""
import os
import subprocess
import tempfile

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
from gguf import GGMLQuantizationType as T  # noqa: E402
from gguf.constants import GGML_QUANT_SIZES  # noqa: E402

# (type, byte offsets of the f16 scale/min fields inside one block)
F16_FIELDS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
    T.IQ2_XXS: [0], T.IQ2_XS: [0], T.IQ2_S: [0], T.IQ3_XXS: [0], T.IQ3_S: [0], T.IQ1_S: [0],
    T.IQ4_NL: [0], T.IQ4_XS: [0], T.TQ1_0: [52], T.TQ2_0: [64],
}
PACKAGE_QUANTIZES = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.MXFP4, T.NVFP4, T.TQ1_0, T.TQ2_0]
# MXFP4 and NVFP4 scales are bytes (E8M0, unsigned E4M3): random bytes reach every one of them.
# IQ1_M keeps its f16 d in the top nibbles of its four u16 scales (set apart below).
BLOCK_TYPES = list(F16_FIELDS) + [T.Q8_K, T.MXFP4, T.NVFP4, T.IQ1_M]
N_BLOCKS = 4096


def ridge_dequant_raw(ridge_bin, qtype, raw: bytes) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.f32")
        with open(src, "wb") as f:
            f.write(raw)
        subprocess.run([ridge_bin, "dequant", "--type", qtype.name, "--raw", src, "-o", dst], check=True)
        return np.fromfile(dst, dtype=np.float32)


def nvfp4_quantize(data: np.ndarray) -> np.ndarray:
    """ggml's quantize_row_nvfp4_ref in numpy on the package's E4M3 codec (the package has no NVFP4
    quantizer): per 16 values the scale E4M3(amax / 6), then the nearest code (the first on ties)."""
    q = gguf.quants.NVFP4
    groups = data.astype(np.float32).reshape(-1, 4, 16)
    d_bytes = q.fp32_to_ue4m3(np.abs(groups).max(axis=-1) / np.float32(6.0))
    d = q.ue4m3_to_fp32(d_bytes).astype(np.float32)[..., None, None]
    kvalues = np.array(q.kvalues, dtype=np.float32)
    codes = np.argmin(np.abs(kvalues * d - groups[..., None]), axis=-1).astype(np.uint8)  # (blocks, 4, 16)
    qs = codes[..., :8] | (codes[..., 8:] << np.uint8(4))
    return np.concatenate([d_bytes.astype(np.uint8), qs.reshape(-1, 32)], axis=-1).ravel()


def reference(qtype, raw: np.ndarray) -> np.ndarray:
    if qtype == T.Q8_K:  # not in the package: ggml's dequantize_row_q8_K
        blocks = raw.reshape(-1, 292)
        d = blocks[:, :4].copy().view(np.float32)
        q = blocks[:, 4:260].copy().view(np.int8).astype(np.float32)
        return (d * q).ravel()
    return np.asarray(gguf.quants.dequantize(raw, qtype), dtype=np.float32).ravel()


def max_ulp(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in units in the last place, counting across zero (+0 and -0 are 1 apart)."""
    def ordered(x):
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF) - 1, i)
    return int(np.max(np.abs(ordered(a) - ordered(b)))) if a.size else 0


def check(ridge_out: np.ndarray, ref: np.ndarray, what: str):
    assert ridge_out.shape == ref.shape, f"{what}: {ridge_out.shape} values, reference {ref.shape}"
    assert np.all(np.isfinite(ref)), f"{what}: the test made a non-finite reference"
    if np.array_equal(ridge_out.view(np.uint32), ref.view(np.uint32)):
        print(f"\n{what}: bit-exact ({ref.size} values)", end="")
        return
    ulp = max_ulp(ridge_out, ref)
    print(f"\n{what}: max {ulp} ulp", end="")
    assert ulp <= 1, f"{what}: ridge differs from the reference by up to {ulp} ulp"


def random_finite_f16(rng, n) -> np.ndarray:
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    bits = np.where((bits & 0x7C00) == 0x7C00, bits & 0x83FF, bits)  # inf/nan exponent -> zero exponent
    return bits.astype(np.uint16)


def random_blocks(rng, qtype) -> np.ndarray:
    block_bytes = GGML_QUANT_SIZES[qtype][1]
    raw = rng.integers(0, 256, size=(N_BLOCKS, block_bytes), dtype=np.uint8)
    if qtype == T.Q8_K:
        d = (rng.standard_normal(N_BLOCKS) * 0.01).astype(np.float32)
        raw[:, :4] = d.view(np.uint8).reshape(N_BLOCKS, 4)
    if qtype == T.MXFP4:  # exponents whose 12 * 2^(e-128) stays finite
        raw[:, 0] = rng.integers(0, 253, size=N_BLOCKS, dtype=np.uint8)
    if qtype == T.IQ1_M:
        d = random_finite_f16(rng, N_BLOCKS)
        scales = raw[:, 48:56].copy().view(np.uint16) & np.uint16(0x0FFF)
        for w in range(4):
            scales[:, w] |= ((d >> np.uint16(4 * w)) & np.uint16(0xF)) << np.uint16(12)
        raw[:, 48:56] = scales.view(np.uint8)
    for off in F16_FIELDS.get(qtype, []):
        raw[:, off:off + 2] = random_finite_f16(rng, N_BLOCKS).view(np.uint8).reshape(N_BLOCKS, 2)
    return raw.ravel()


@pytest.mark.parametrize("qtype", BLOCK_TYPES, ids=lambda t: t.name)
def test_random_bytes(ridge_bin, qtype):
    raw = random_blocks(np.random.default_rng(int(qtype)), qtype)
    check(ridge_dequant_raw(ridge_bin, qtype, raw.tobytes()), reference(qtype, raw), f"{qtype.name} random bytes")


@pytest.mark.parametrize("qtype", PACKAGE_QUANTIZES, ids=lambda t: t.name)
def test_package_quantized(ridge_bin, qtype):
    rng = np.random.default_rng(100 + int(qtype))
    data = (rng.standard_normal((64, 512)) * rng.uniform(0.01, 3.0, size=(64, 1))).astype(np.float32)
    data[0, :64] = 0.0  # an all-zero block: scale 0
    raw = nvfp4_quantize(data) if qtype == T.NVFP4 else np.asarray(gguf.quants.quantize(data, qtype)).view(np.uint8).ravel()
    ref = reference(qtype, raw) if qtype not in (T.F32, T.F16) else np.asarray(
        gguf.quants.dequantize(raw.view(np.float32 if qtype == T.F32 else np.float16), qtype), dtype=np.float32).ravel()
    check(ridge_dequant_raw(ridge_bin, qtype, raw.tobytes()), ref, f"{qtype.name} quantized by gguf")


def test_plain_types_random_bits(ridge_bin):
    rng = np.random.default_rng(7)
    f16 = random_finite_f16(rng, 1 << 16)
    f16[: 1 << 15] = np.arange(1 << 15, dtype=np.uint16)  # every positive finite half, and then some
    f16 = np.where((f16 & 0x7C00) == 0x7C00, 0, f16).astype(np.uint16)
    check(ridge_dequant_raw(ridge_bin, T.F16, f16.tobytes()), f16.view(np.float16).astype(np.float32), "F16 bit patterns")
    bf16 = rng.integers(0, 1 << 16, size=1 << 16, dtype=np.uint16)
    bf16 = np.where((bf16 & 0x7F80) == 0x7F80, bf16 & 0x807F, bf16).astype(np.uint16)
    check(ridge_dequant_raw(ridge_bin, T.BF16, bf16.tobytes()), reference(T.BF16, bf16.view(np.uint8)), "BF16 bit patterns")


def test_default_model_tensors(ridge_bin, default_model):
    reader = gguf.GGUFReader(default_model)
    tensors = list(reader.tensors)
    assert tensors
    per_type = {}
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out.f32")
        for t in tensors:
            subprocess.run([ridge_bin, "dequant", default_model, "--tensor", t.name, "-o", out_path], check=True)
            ours = np.fromfile(out_path, dtype=np.float32)
            ref = reference(t.tensor_type, np.asarray(t.data).view(np.uint8)) if t.tensor_type not in (T.F32, T.F16) \
                else np.asarray(gguf.quants.dequantize(np.asarray(t.data), t.tensor_type), dtype=np.float32).ravel()
            assert ours.size == int(np.prod(t.shape)), t.name
            if np.array_equal(ours.view(np.uint32), ref.view(np.uint32)):
                ulp = 0
            else:
                ulp = max_ulp(ours, ref)
                assert ulp <= 1, f"{t.name} ({t.tensor_type.name}): differs by up to {ulp} ulp"
            count, worst = per_type.get(t.tensor_type.name, (0, 0))
            per_type[t.tensor_type.name] = (count + 1, max(worst, ulp))
    for name, (count, worst) in sorted(per_type.items()):
        print(f"\ndefault model {name}: {count} tensors, " + ("bit-exact" if worst == 0 else f"max {worst} ulp"), end="")
