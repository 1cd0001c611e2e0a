"""The same random Llama weights as an HF safetensors checkpoint and as a GGUF file give the same logits.

The GGUF copy is written the way llama.cpp's converter writes Llama models: q/k rows permuted so that
RoPE rotates adjacent pairs. The safetensors copy keeps HF's layout (rotate_half pairs). Equal logits
show that both loaders bind every tensor correctly and that the two RoPE orderings agree.
"""
import json
import os
import subprocess
import sys

import gguf
import numpy as np
import pytest

N_VOCAB, N_EMBD, N_LAYER, N_HEAD, N_HEAD_KV, N_FF = 96, 64, 2, 4, 2, 160
HEAD_DIM = N_EMBD // N_HEAD


def permute_for_gguf(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def random_weights(seed=0):
    rng = np.random.default_rng(seed)
    r = lambda *shape: (rng.standard_normal(shape) * 0.2).astype(np.float32)
    w = {"model.embed_tokens.weight": r(N_VOCAB, N_EMBD), "model.norm.weight": 1 + r(N_EMBD),
         "lm_head.weight": r(N_VOCAB, N_EMBD)}
    for i in range(N_LAYER):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1 + r(N_EMBD)
        w[p + "post_attention_layernorm.weight"] = 1 + r(N_EMBD)
        w[p + "self_attn.q_proj.weight"] = r(N_HEAD * HEAD_DIM, N_EMBD)
        w[p + "self_attn.k_proj.weight"] = r(N_HEAD_KV * HEAD_DIM, N_EMBD)
        w[p + "self_attn.v_proj.weight"] = r(N_HEAD_KV * HEAD_DIM, N_EMBD)
        w[p + "self_attn.o_proj.weight"] = r(N_EMBD, N_HEAD * HEAD_DIM)
        w[p + "mlp.gate_proj.weight"] = r(N_FF, N_EMBD)
        w[p + "mlp.up_proj.weight"] = r(N_FF, N_EMBD)
        w[p + "mlp.down_proj.weight"] = r(N_EMBD, N_FF)
    return w


def write_safetensors(path, tensors):
    """tensors: name -> f32 array, or (safetensors dtype, uint8 array of the raw bytes, shape)."""
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        dtype, data, shape = t if isinstance(t, tuple) else ("F32", t.astype(np.float32), t.shape)
        data = data.tobytes()
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw + b"".join(blobs))


def write_hf_dir(path, w, quantization_config=None):
    os.makedirs(path, exist_ok=True)
    write_safetensors(os.path.join(path, "model.safetensors"), w)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": N_EMBD,
              "num_hidden_layers": N_LAYER, "num_attention_heads": N_HEAD, "num_key_value_heads": N_HEAD_KV,
              "intermediate_size": N_FF, "vocab_size": N_VOCAB, "max_position_embeddings": 256,
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False}
    if quantization_config:
        config["quantization_config"] = quantization_config
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)


def write_gguf(path, w):
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("random-llama")
    writer.add_block_count(N_LAYER)
    writer.add_context_length(256)
    writer.add_embedding_length(N_EMBD)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(N_VOCAB)
    writer.add_tensor("token_embd.weight", w["model.embed_tokens.weight"])
    writer.add_tensor("output_norm.weight", w["model.norm.weight"])
    writer.add_tensor("output.weight", w["lm_head.weight"])
    for i in range(N_LAYER):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        writer.add_tensor(b + "attn_norm.weight", w[p + "input_layernorm.weight"])
        writer.add_tensor(b + "ffn_norm.weight", w[p + "post_attention_layernorm.weight"])
        writer.add_tensor(b + "attn_q.weight", permute_for_gguf(w[p + "self_attn.q_proj.weight"], N_HEAD))
        writer.add_tensor(b + "attn_k.weight", permute_for_gguf(w[p + "self_attn.k_proj.weight"], N_HEAD_KV))
        writer.add_tensor(b + "attn_v.weight", w[p + "self_attn.v_proj.weight"])
        writer.add_tensor(b + "attn_output.weight", w[p + "self_attn.o_proj.weight"])
        writer.add_tensor(b + "ffn_gate.weight", w[p + "mlp.gate_proj.weight"])
        writer.add_tensor(b + "ffn_up.weight", w[p + "mlp.up_proj.weight"])
        writer.add_tensor(b + "ffn_down.weight", w[p + "mlp.down_proj.weight"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def logits(ridge_bin, model, ids, out):
    subprocess.run([ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, ids)), "-o", out],
                   check=True, capture_output=True)
    return np.fromfile(out, dtype=np.float32).reshape(len(ids), N_VOCAB)


def test_safetensors_and_gguf_give_the_same_logits(ridge_bin, tmp_path):
    w = random_weights()
    hf_dir, gguf_path = str(tmp_path / "hf"), str(tmp_path / "model.gguf")
    write_hf_dir(hf_dir, w)
    write_gguf(gguf_path, w)
    ids = [3, 17, 95, 0, 42, 42, 7, 61, 88, 12, 5, 70]
    from_hf = logits(ridge_bin, hf_dir, ids, str(tmp_path / "hf.bin"))
    from_gguf = logits(ridge_bin, gguf_path, ids, str(tmp_path / "gguf.bin"))
    assert np.all(np.isfinite(from_hf))
    # f16 attention inputs make the two pair orders round differently now and then (summation order).
    np.testing.assert_allclose(from_hf, from_gguf, rtol=5e-3, atol=5e-3)
    # And the logits depend on position: RoPE is applied (a permutation bug would not cancel out).
    assert not np.allclose(from_hf[4], from_hf[5])


def modelopt_nvfp4(w):
    """NVFP4 as ModelOpt stores it: per-tensor factor amax / (6 * 448), an E4M3 scale per 16 values
    (the gguf package's encoder), nearest E2M1 codes, two per byte (value 2j in the low nibble).
    Returns (packed U8 [rows, cols/2], scales U8 [rows, cols/16], factor, the dequantized weights)."""
    q = gguf.quants.NVFP4
    rows, cols = w.shape
    factor = np.float32(np.abs(w).max() / (6 * 448))
    groups = w.astype(np.float32).reshape(rows, cols // 16, 16)
    scales = q.fp32_to_ue4m3(np.abs(groups).max(axis=-1) / np.float32(6.0) / factor).astype(np.uint8)
    d = (q.ue4m3_to_fp32(scales).astype(np.float32) * factor)[..., None]  # half-scales: codes are doubled values
    kvalues = np.array(q.kvalues, dtype=np.float32)
    codes = np.argmin(np.abs(kvalues * d[..., None] - groups[..., None]), axis=-1).astype(np.uint8)
    dequantized = (kvalues[codes] * d).reshape(rows, cols).astype(np.float32)
    packed = (codes.reshape(rows, cols)[:, 0::2] | (codes.reshape(rows, cols)[:, 1::2] << 4)).astype(np.uint8)
    return packed, scales, factor, dequantized


def test_nvfp4_checkpoints_load_as_their_weights(ridge_bin, tmp_path):
    """A ModelOpt NVFP4 checkpoint (and the same in compressed-tensors' names) computes what its
    dequantized weights do in f32, up to the int8 activations of the NVFP4 kernels; both namings
    give the same bits."""
    w = random_weights(1)
    modelopt, compressed, dequantized = dict(w), dict(w), dict(w)
    for name, t in w.items():
        if not name.endswith("_proj.weight") or t.shape[1] % 64:
            continue  # down_proj's rows of 160 values do not fill 64-value blocks: left f32
        packed, scales, factor, deq = modelopt_nvfp4(t)
        base = name.removesuffix(".weight")
        modelopt[name] = ("U8", packed, packed.shape)
        modelopt[base + ".weight_scale"] = ("F8_E4M3", scales, scales.shape)
        modelopt[base + ".weight_scale_2"] = ("F32", np.array(factor, dtype=np.float32), [])
        modelopt[base + ".input_scale"] = ("F32", np.array(1.0, dtype=np.float32), [])
        del compressed[name]
        compressed[base + ".weight_packed"] = ("U8", packed, packed.shape)
        compressed[base + ".weight_scale"] = ("F8_E4M3", scales, scales.shape)
        compressed[base + ".weight_global_scale"] = ("F32", np.array(1 / factor, dtype=np.float32), [1])
        dequantized[name] = deq
    dirs = {k: str(tmp_path / k) for k in ("modelopt", "compressed", "dequantized")}
    write_hf_dir(dirs["modelopt"], modelopt, {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})
    write_hf_dir(dirs["compressed"], compressed, {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"})
    write_hf_dir(dirs["dequantized"], dequantized)
    ids = [3, 17, 95, 0, 42, 42, 7, 61, 88, 12, 5, 70]
    got = {k: logits(ridge_bin, d, ids, str(tmp_path / f"{k}.bin")) for k, d in dirs.items()}
    assert np.array_equal(got["modelopt"], got["compressed"])
    ref = got["dequantized"]
    rel = np.sqrt(np.mean((got["modelopt"] - ref) ** 2) / np.mean(ref ** 2))
    assert rel < 0.06, rel  # measured 0.031; swapped nibbles give 1.48, a factor twice too big 0.63
    assert (got["modelopt"].argmax(axis=1) == ref.argmax(axis=1)).mean() >= 0.9


def e4m3_table():
    """Every finite FP8 E4M3 value by its byte (0x7f / 0xff are NaN in E4M3 'fn')."""
    b = np.arange(256)
    sign = np.where(b & 0x80, -1.0, 1.0)
    e, m = (b >> 3) & 0xF, b & 7
    v = sign * np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))
    v[(b & 0x7F) == 0x7F] = np.nan
    return v.astype(np.float32)


def to_e4m3(x):
    """The byte of the nearest finite E4M3 value (saturating at ±448)."""
    table = e4m3_table()
    finite = np.flatnonzero(np.isfinite(table))
    order = finite[np.argsort(table[finite], kind="stable")]
    values = table[order]
    i = np.clip(np.searchsorted(values, x), 1, len(values) - 1)
    pick = np.where(np.abs(values[i - 1] - x) <= np.abs(values[i] - x), i - 1, i)
    return order[pick].astype(np.uint8)


@pytest.mark.parametrize("layout", ["per_tensor", "per_channel", "block", "block_inv"])
def test_fp8_checkpoints_load_as_their_weights(ridge_bin, tmp_path, monkeypatch, layout):
    """FP8 E4M3 checkpoints (compressed-tensors / ModelOpt weight_scale per tensor, per channel or per
    128 x 128 block; DeepSeek-style weight_scale_inv per block) compute what their dequantized weights
    do: the FP8 kernels convert exactly and multiply in f32, so only summation order differs."""
    module = sys.modules[__name__]
    for name, value in {"N_EMBD": 128, "N_FF": 256, "HEAD_DIM": 32}.items():
        monkeypatch.setattr(module, name, value)
    w = random_weights(2)
    fp8, dequantized = dict(w), dict(w)
    table = e4m3_table()
    for name, t in w.items():
        if not name.endswith("_proj.weight"):
            continue
        rows, cols = t.shape
        base = name.removesuffix(".weight")
        if layout == "per_tensor":
            scale = np.float32(np.abs(t).max() / 448)
            expanded, stored = np.full_like(t, scale), np.array(scale, dtype=np.float32)
        elif layout == "per_channel":
            stored = (np.abs(t).max(axis=1, keepdims=True) / 448).astype(np.float32)
            expanded = np.broadcast_to(stored, t.shape)
        else:
            br, bc = -(-rows // 128), cols // 128
            blocks = np.zeros((br, bc), dtype=np.float32)
            for i in range(br):
                for j in range(bc):
                    blocks[i, j] = np.abs(t[128 * i:128 * (i + 1), 128 * j:128 * (j + 1)]).max() / 448
            stored = blocks
            expanded = np.repeat(np.repeat(blocks, 128, axis=0)[:rows], 128, axis=1)
        codes = to_e4m3((t / expanded).astype(np.float32))
        fp8[name] = ("F8_E4M3", codes, codes.shape)
        key = ".weight_scale_inv" if layout == "block_inv" else ".weight_scale"
        fp8[base + key] = ("F32", stored, list(stored.shape))
        dequantized[name] = (table[codes] * expanded).astype(np.float32)
    write_hf_dir(str(tmp_path / "fp8"), fp8, {"quant_method": "fp8", "weight_block_size": [128, 128]})
    write_hf_dir(str(tmp_path / "deq"), dequantized)
    ids = [3, 17, 95, 0, 42, 42, 7, 61, 88, 12, 5, 70]
    got = logits(ridge_bin, str(tmp_path / "fp8"), ids, str(tmp_path / "a.bin"))
    ref = logits(ridge_bin, str(tmp_path / "deq"), ids, str(tmp_path / "b.bin"))
    np.testing.assert_allclose(got, ref, rtol=1e-3, atol=1e-3)


def test_quantized_checkpoints_that_do_not_fit_fail_clearly(ridge_bin, tmp_path):
    """Scales of a shape no layout has, NVFP4 rows that miss ridge's 64-value blocks, a NaN scale:
    each load stops with an error that names the tensor."""
    w = random_weights(3)
    name = "model.layers.0.mlp.down_proj.weight"  # [64, 160]: 160 values per row
    cases = {}
    codes = to_e4m3(w[name] / np.float32(0.01))
    cases["scale shape"] = {name: ("F8_E4M3", codes, codes.shape),
                            name.replace(".weight", ".weight_scale"): ("F32", np.ones(3, dtype=np.float32), [3])}
    cases["nan scale"] = {name: ("F8_E4M3", codes, codes.shape),
                          name.replace(".weight", ".weight_scale"): ("F32", np.array(np.nan, dtype=np.float32), [])}
    packed = np.zeros((64, 80), dtype=np.uint8)
    cases["nvfp4 rows"] = {name: ("U8", packed, packed.shape),
                           name.replace(".weight", ".weight_scale"): ("F8_E4M3", np.zeros((64, 10), dtype=np.uint8), [64, 10])}
    for label, patch in cases.items():
        d = str(tmp_path / label.replace(" ", "_"))
        write_hf_dir(d, {**w, **patch})
        r = subprocess.run([ridge_bin, "logits", "-m", d, "--tokens", "1,2,3", "-o", str(tmp_path / "x.bin")],
                           capture_output=True, text=True)
        assert r.returncode != 0, label
        assert "down_proj" in r.stderr and "Segmentation" not in r.stderr, (label, r.stderr)
