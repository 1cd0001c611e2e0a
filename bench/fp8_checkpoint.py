#!/usr/bin/env python3
"""A Llama-family GGUF (F32/F16/BF16 layer matrices) written as a Hugging Face FP8 checkpoint:
config.json and model.safetensors with every layer matrix in F8_E4M3 and its weight_scale per output
channel (amax / 448, compressed-tensors' "channel" strategy), norms and embeddings in BF16. q/k rows
get llama.cpp's converter permutation undone, so ridge computes the same model from both files.
Used to measure FP8 decode (`ridge bench run -m DIR`, bench/decode_side_by_side.py --no-llama).

    python3 bench/fp8_checkpoint.py IN.gguf OUT_DIR
"""
import json
import os
import sys

import gguf
import numpy as np

MATRICES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
            "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
            "ffn_down": "mlp.down_proj"}
NORMS = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}


def e4m3_bytes(x):
    """Nearest finite E4M3 byte of each value (|x| <= 448 after scaling)."""
    b = np.arange(256)
    e, m = (b >> 3) & 0xF, b & 7
    v = np.where(b & 0x80, -1.0, 1.0) * np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))
    finite = np.flatnonzero((b & 0x7F) != 0x7F)
    order = finite[np.argsort(v[finite], kind="stable")]
    values = v[order].astype(np.float32)
    i = np.clip(np.searchsorted(values, x), 1, len(values) - 1)
    return order[np.where(np.abs(values[i - 1] - x) <= np.abs(values[i] - x), i - 1, i)].astype(np.uint8)


def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def bf16(x):
    return (x.astype(np.float32).view(np.uint32) + 0x8000 >> 16).astype(np.uint16)


def main():
    src, out = sys.argv[1], sys.argv[2]
    r = gguf.GGUFReader(src)
    field = lambda k: r.fields[k].contents()
    arch = field("general.architecture")
    n_layer, n_head = field(f"{arch}.block_count"), field(f"{arch}.attention.head_count")
    n_head_kv = field(f"{arch}.attention.head_count_kv") if f"{arch}.attention.head_count_kv" in r.fields else n_head
    tensors = {t.name: t for t in r.tensors}
    embd = np.asarray(gguf.quants.dequantize(tensors["token_embd.weight"].data, tensors["token_embd.weight"].tensor_type))
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": int(embd.shape[1]),
              "num_hidden_layers": int(n_layer), "num_attention_heads": int(n_head), "num_key_value_heads": int(n_head_kv),
              "intermediate_size": int(tensors["blk.0.ffn_up.weight"].shape[1]), "vocab_size": int(embd.shape[0]),
              "max_position_embeddings": int(field(f"{arch}.context_length")),
              "rms_norm_eps": float(field(f"{arch}.attention.layer_norm_rms_epsilon")),
              "rope_theta": float(field(f"{arch}.rope.freq_base")) if f"{arch}.rope.freq_base" in r.fields else 10000.0,
              "tie_word_embeddings": "output.weight" not in tensors,
              "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized",
                                      "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float",
                                                                                "strategy": "channel"}}}}}
    blobs = {}
    dense = lambda name: np.asarray(gguf.quants.dequantize(tensors[name].data, tensors[name].tensor_type), dtype=np.float32)
    blobs["model.embed_tokens.weight"] = ("BF16", bf16(embd), embd.shape)
    norm = dense("output_norm.weight")
    blobs["model.norm.weight"] = ("BF16", bf16(norm), norm.shape)
    if "output.weight" in tensors:
        head = dense("output.weight")
        blobs["lm_head.weight"] = ("BF16", bf16(head), head.shape)
    for i in range(n_layer):
        for g, h in NORMS.items():
            v = dense(f"blk.{i}.{g}.weight")
            blobs[f"model.layers.{i}.{h}.weight"] = ("BF16", bf16(v), v.shape)
        for g, h in MATRICES.items():
            w = dense(f"blk.{i}.{g}.weight")
            if g in ("attn_q", "attn_k"):
                w = unpermute(w, n_head if g == "attn_q" else n_head_kv)
            scale = (np.abs(w).max(axis=1, keepdims=True) / 448).astype(np.float32)
            scale[scale == 0] = 1
            blobs[f"model.layers.{i}.{h}.weight"] = ("F8_E4M3", e4m3_bytes(w / scale), w.shape)
            blobs[f"model.layers.{i}.{h}.weight_scale"] = ("F32", scale, scale.shape)
        print(f"layer {i + 1}/{n_layer}", file=sys.stderr, end="\r")
    os.makedirs(out, exist_ok=True)
    header, offset = {}, 0
    for name, (dtype, data, shape) in blobs.items():
        n = data.nbytes
        header[name] = {"dtype": dtype, "shape": [int(s) for s in shape], "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(len(raw).to_bytes(8, "little") + raw)
        for dtype, data, shape in blobs.values():
            f.write(np.ascontiguousarray(data).tobytes())
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    print(f"\nwrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
