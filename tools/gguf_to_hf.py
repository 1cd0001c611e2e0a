#!/usr/bin/env python3
"""Writes a Hugging Face checkpoint directory from a GGUF file: config.json for its architecture,
safetensors in F32, F16 or BF16 (dequantized from any type the gguf package reads), the tokenizer
and tokenizer_config.json with the GGUF's chat template. llama.cpp's converter's changes are undone
(q/k rows permuted for interleaved RoPE, Gemma's norm weights stored plus one, experts stacked,
DeepSeek's kv_b_proj split per head), so the result is what the original checkpoint would be.

    python3 tools/gguf_to_hf.py MODEL.gguf OUT_DIR [--dtype f32|f16|bf16] [--max-shard-size 2GB] [--no-tokenizer]

Architectures: llama (and Mixtral-style llama with experts), mistral, qwen2, qwen2moe, qwen3,
qwen3moe, olmoe, gemma3, deepseek2.
"""
import argparse
import json
import pathlib
import re
import sys

import gguf
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

NORM_SHIFT = 1.0  # Gemma's RMSNorm scales by 1 + w; llama.cpp's converter stores 1 + w
DTYPES = {"f32": ("float32", np.float32), "f16": ("float16", np.float16), "bf16": ("bfloat16", None)}


class Gguf:
    def __init__(self, path):
        self.reader = gguf.GGUFReader(str(path))
        self.tensors = {t.name: t for t in self.reader.tensors}
        self.arch = self.get("general.architecture")

    def get(self, key, default=None):
        field = self.reader.fields.get(key)
        if field is None:
            return default
        value = field.contents()
        # float32 metadata as its shortest decimal (1e-06, not 9.99999997e-07)
        return float(str(np.float32(value))) if isinstance(value, (float, np.floating)) else value

    def hp(self, key, default=None):
        value = self.get(f"{self.arch}.{key}", default)
        if isinstance(value, list):  # a per-layer array of one value
            if len(set(value)) != 1:
                sys.exit(f"{self.arch}.{key} differs between layers, which the converter does not write")
            value = value[0]
        return value

    def array(self, name):
        """The tensor in f32, in PyTorch's order (GGUF's shape reversed)."""
        t = self.tensors[name]
        data = gguf.quants.dequantize(t.data, t.tensor_type)
        return np.asarray(data, dtype=np.float32).reshape([int(d) for d in reversed(t.shape)])


def unpermute(w, n_head):
    """Inverse of llama.cpp's permute: rows interleaved as (n_head, d/2, 2) back to HF's halves (n_head, 2, d/2)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def model_type(g):
    if g.arch == "llama":
        return "mixtral" if g.hp("expert_count", 0) else "llama"
    if g.arch == "deepseek2":
        v3 = g.hp("expert_gating_func", 1) == 2 or "blk.{}.exp_probs_b.bias".format(g.hp("leading_dense_block_count", 0)) in g.tensors
        return "deepseek_v3" if v3 or g.hp("expert_group_count", 0) > 1 else "deepseek_v2"
    types = {"mistral": "mistral", "qwen2": "qwen2", "qwen2moe": "qwen2_moe", "qwen3": "qwen3", "qwen3moe": "qwen3_moe",
             "olmoe": "olmoe", "gemma3": "gemma3_text"}
    if g.arch not in types:
        sys.exit(f"architecture '{g.arch}' is not supported by the converter")
    return types[g.arch]


def common_config(g, mtype, dtype_name):
    n_embd, n_head = g.hp("embedding_length"), g.hp("attention.head_count")
    if "rope_freqs.weight" in g.tensors:
        sys.exit("rope_freqs.weight (Llama 3 frequency scaling): its config.json fields cannot be recovered")
    c = {
        "architectures": [ARCH_CLASS[mtype]], "model_type": mtype, "torch_dtype": dtype_name,
        "vocab_size": int(g.tensors["token_embd.weight"].shape[1]), "hidden_size": n_embd,
        "num_hidden_layers": g.hp("block_count"), "num_attention_heads": n_head,
        "num_key_value_heads": g.hp("attention.head_count_kv", n_head),
        "head_dim": g.hp("attention.key_length", n_embd // n_head),
        "intermediate_size": g.hp("feed_forward_length", 0),
        "max_position_embeddings": g.hp("context_length", 2048),
        "rms_norm_eps": g.hp("attention.layer_norm_rms_epsilon", 1e-5),
        "rope_theta": g.hp("rope.freq_base", 10000.0), "hidden_act": "silu",
        "tie_word_embeddings": "output.weight" not in g.tensors,
        "bos_token_id": g.get("tokenizer.ggml.bos_token_id"), "eos_token_id": g.get("tokenizer.ggml.eos_token_id"),
    }
    scaling = g.hp("rope.scaling.type", "none")
    if scaling == "linear":
        c["rope_scaling"] = {"rope_type": "linear", "factor": g.hp("rope.scaling.factor", 1.0)}
    elif scaling not in ("none", "", "yarn"):
        sys.exit(f"rope scaling '{scaling}' is not supported by the converter")
    return c


def moe_config(g, mtype, c):
    if mtype == "mixtral":
        c.update(num_local_experts=g.hp("expert_count"), num_experts_per_tok=g.hp("expert_used_count"),
                 intermediate_size=g.hp("expert_feed_forward_length", c["intermediate_size"]))
    elif mtype in ("qwen2_moe", "qwen3_moe", "olmoe"):
        width = g.hp("expert_feed_forward_length", c["intermediate_size"])
        c.update(num_experts=g.hp("expert_count"), num_experts_per_tok=g.hp("expert_used_count"),
                 moe_intermediate_size=width, norm_topk_prob=mtype == "qwen3_moe", decoder_sparse_step=1,
                 mlp_only_layers=[])
        if mtype == "olmoe":
            c.update(intermediate_size=width, clip_qkv=None)
        if mtype == "qwen2_moe":
            shared = g.hp("expert_shared_feed_forward_length", 0) or c["intermediate_size"]
            c.update(shared_expert_intermediate_size=shared)


def gemma3_config(g, c):
    c.pop("hidden_act")
    c.update(hidden_activation="gelu_pytorch_tanh", query_pre_attn_scalar=c["head_dim"],
             final_logit_softcapping=g.hp("final_logit_softcapping"), attn_logit_softcapping=None,
             rope_scaling=None, sliding_window=g.hp("attention.sliding_window"),
             rope_local_base_freq=g.hp("rope.freq_base_swa", 10000.0))
    if c["num_hidden_layers"] == 62:  # Gemma 3 27B scales scores by n_embd / n_head
        c["query_pre_attn_scalar"] = c["hidden_size"] // c["num_attention_heads"]
    if c["sliding_window"]:
        pattern = g.hp("attention.sliding_window_pattern", 6)
        c["sliding_window_pattern"] = pattern
        c["layer_types"] = ["full_attention" if pattern and (l + 1) % pattern == 0 else "sliding_attention"
                            for l in range(c["num_hidden_layers"])]


def deepseek_config(g, mtype, c):
    rope = g.hp("rope.dimension_count")
    key = g.hp("attention.key_length_mla", g.hp("attention.key_length"))
    value = g.hp("attention.value_length_mla", g.hp("attention.value_length"))
    groups = g.hp("expert_group_count", 0)
    norm, scale = bool(g.hp("expert_weights_norm", False)), g.hp("expert_weights_scale", 1.0) or 1.0
    if mtype == "deepseek_v2" and norm and scale != 1.0:
        sys.exit("deepseek2 with renormalised and scaled expert weights has no deepseek_v2 config")
    c.update(num_key_value_heads=c["num_attention_heads"], q_lora_rank=g.hp("attention.q_lora_rank") or None,
             kv_lora_rank=g.hp("attention.kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=key - rope,
             v_head_dim=value, n_routed_experts=g.hp("expert_count"), num_experts_per_tok=g.hp("expert_used_count"),
             moe_intermediate_size=g.hp("expert_feed_forward_length"), n_shared_experts=g.hp("expert_shared_count", 0),
             first_k_dense_replace=g.hp("leading_dense_block_count", 0), moe_layer_freq=1, norm_topk_prob=norm,
             routed_scaling_factor=scale, scoring_func="sigmoid" if g.hp("expert_gating_func", 1) == 2 else "softmax",
             topk_method="noaux_tc" if mtype == "deepseek_v3" else "greedy", n_group=max(groups, 1),
             topk_group=max(g.hp("expert_group_used_count", 0), 1))
    c.pop("head_dim")
    if g.hp("rope.scaling.attn_factor", 1.0) != 1.0:
        sys.exit("rope.scaling.attn_factor other than 1 has no config.json field")
    if g.hp("rope.scaling.type", "none") == "yarn":
        mscale = g.hp("rope.scaling.yarn_log_multiplier", 0.0) / 0.1
        c["rope_scaling"] = {"type": "yarn", "factor": g.hp("rope.scaling.factor", 1.0),
                             "original_max_position_embeddings": g.hp("rope.scaling.original_context_length"),
                             "beta_fast": g.hp("rope.scaling.yarn_beta_fast", 32.0),
                             "beta_slow": g.hp("rope.scaling.yarn_beta_slow", 1.0),
                             "mscale": mscale, "mscale_all_dim": mscale}


ARCH_CLASS = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
              "qwen2": "Qwen2ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3": "Qwen3ForCausalLM",
              "qwen3_moe": "Qwen3MoeForCausalLM", "olmoe": "OlmoeForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
              "deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM"}

# GGUF tensor name (after "blk.N.") -> HF name (after "model.layers.N.")
LAYER_NAMES = {
    "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm", "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj", "ffn_gate_inp": "mlp.gate",
    "ffn_gate_shexp": "mlp.shared_experts.gate_proj", "ffn_up_shexp": "mlp.shared_experts.up_proj",
    "ffn_down_shexp": "mlp.shared_experts.down_proj", "ffn_gate_inp_shexp": "mlp.shared_expert_gate",
    "exp_probs_b": "mlp.gate.e_score_correction_bias", "attn_q_a": "self_attn.q_a_proj",
    "attn_q_a_norm": "self_attn.q_a_layernorm", "attn_q_b": "self_attn.q_b_proj",
    "attn_kv_a_mqa": "self_attn.kv_a_proj_with_mqa", "attn_kv_a_norm": "self_attn.kv_a_layernorm",
    "attn_kv_b": "self_attn.kv_b_proj",
}
GEMMA_NAMES = {"post_attention_norm": "post_attention_layernorm", "ffn_norm": "pre_feedforward_layernorm",
               "post_ffw_norm": "post_feedforward_layernorm"}
EXPERT_NAMES = {"ffn_gate_exps": "gate_proj", "ffn_up_exps": "up_proj", "ffn_down_exps": "down_proj"}
MIXTRAL_EXPERT_NAMES = {"ffn_gate_exps": "w1", "ffn_up_exps": "w3", "ffn_down_exps": "w2"}


def hf_tensors(g, mtype, c):
    """Yields (HF name, f32 array) for every tensor of the GGUF."""
    n_head, n_head_kv = c["num_attention_heads"], c["num_key_value_heads"]
    permuted = g.arch in ("llama", "mistral")  # the converter interleaved their q/k rows
    gemma = mtype == "gemma3_text"
    for name in g.tensors:
        w = g.array(name)
        if gemma and name.endswith("norm.weight"):
            w = w - NORM_SHIFT  # the converter stores Gemma's 1 + w
        if name == "token_embd.weight":
            yield "model.embed_tokens.weight", w
            continue
        if name == "output_norm.weight":
            yield "model.norm.weight", w
            continue
        if name == "output.weight":
            yield "lm_head.weight", w
            continue
        m = re.fullmatch(r"blk\.(\d+)\.(\w+)\.(weight|bias)", name)
        if not m:
            sys.exit(f"tensor '{name}' has no Hugging Face name in the converter")
        layer, base, kind = m.groups()
        p = f"model.layers.{layer}."
        if base in EXPERT_NAMES:
            names = MIXTRAL_EXPERT_NAMES if mtype == "mixtral" else EXPERT_NAMES
            group = "block_sparse_moe.experts" if mtype == "mixtral" else "mlp.experts"
            for e in range(w.shape[0]):
                yield f"{p}{group}.{e}.{names[base]}.weight", w[e]
            continue
        if base in ("attn_k_b", "attn_v_b"):
            if base == "attn_v_b":
                k_b = g.array(f"blk.{layer}.attn_k_b.weight")  # (n_head, rank, nope)
                heads = [np.concatenate([k_b[h].T, w[h]], axis=0) for h in range(w.shape[0])]
                yield f"{p}self_attn.kv_b_proj.weight", np.concatenate(heads, axis=0)
            continue
        hf = (GEMMA_NAMES.get(base) if gemma else None) or LAYER_NAMES.get(base)
        if hf is None:
            sys.exit(f"tensor '{name}' has no Hugging Face name in the converter")
        if mtype == "mixtral" and base == "ffn_gate_inp":
            hf = "block_sparse_moe.gate"
        if mtype == "qwen2_moe" and base.endswith("_shexp"):
            hf = hf.replace("shared_experts", "shared_expert")
        if base == "ffn_gate_inp_shexp":
            w = w.reshape(1, -1)
        if permuted and kind == "weight" and base in ("attn_q", "attn_k"):
            w = unpermute(w, n_head if base == "attn_q" else n_head_kv)
        if base == "exp_probs_b":
            yield p + hf, w
            continue
        yield f"{p}{hf}.{kind}", w


def as_dtype(w, dtype):
    if dtype == "bf16":
        import torch  # numpy has no bfloat16
        return torch.from_numpy(np.array(w, dtype=np.float32)).to(torch.bfloat16)
    return np.ascontiguousarray(w, dtype=DTYPES[dtype][1])


def parse_size(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?)B?", text.upper())
    if not m:
        sys.exit(f"--max-shard-size '{text}' is not a size (e.g. 500MB, 2GB)")
    return int(float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)])


def save(tensors, out, dtype, max_shard):
    """model.safetensors, or shards with model.safetensors.index.json when they exceed max_shard."""
    if dtype == "bf16":
        from safetensors.torch import save_file
    else:
        from safetensors.numpy import save_file
    shards, current, size = [], {}, 0
    for name, w in tensors:
        w = as_dtype(w, dtype)
        nbytes = w.numel() * w.element_size() if dtype == "bf16" else w.nbytes
        if max_shard and current and size + nbytes > max_shard:
            shards.append(current)
            current, size = {}, 0
        current[name] = w
        size += nbytes
    shards.append(current)
    if len(shards) == 1:
        save_file(shards[0], str(out / "model.safetensors"), metadata={"format": "pt"})
        return
    weight_map, total = {}, 0
    for i, shard in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, str(out / file), metadata={"format": "pt"})
        for name, w in shard.items():
            weight_map[name] = file
            total += w.numel() * w.element_size() if dtype == "bf16" else w.nbytes
    (out / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}, indent=2))


def fix_special_tokens(g, out):
    """The GGUF's own BOS / EOS and add_bos, where transformers' GGUF conversion guesses otherwise
    (it names SmolLM2's <|im_start|> as both and adds it to every text)."""
    tokens = g.get("tokenizer.ggml.tokens") or []
    bos, eos = g.get("tokenizer.ggml.bos_token_id"), g.get("tokenizer.ggml.eos_token_id")
    add_bos = g.get("tokenizer.ggml.add_bos_token")
    config_path, tokenizer_path = out / "tokenizer_config.json", out / "tokenizer.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    if bos is not None and bos < len(tokens):
        config["bos_token"] = tokens[bos]
    if eos is not None and eos < len(tokens):
        config["eos_token"] = tokens[eos]
    if add_bos is not None:
        config["add_bos_token"] = bool(add_bos)
    tokenizer = json.loads(tokenizer_path.read_text())
    post = tokenizer.get("post_processor") or {}
    if post.get("type") == "TemplateProcessing" and add_bos is not None:
        # The template adds BOS alone: as the GGUF says, with its BOS, or not at all.
        def keep(items):
            return [i for i in items if "Sequence" in i or add_bos]
        post["single"], post["pair"] = keep(post["single"]), keep(post["pair"])
        if add_bos and bos is not None:
            for item in post["single"] + post["pair"]:
                if "SpecialToken" in item:
                    item["SpecialToken"]["id"] = tokens[bos]
            post["special_tokens"] = {tokens[bos]: {"id": tokens[bos], "ids": [bos], "tokens": [tokens[bos]]}}
        else:
            post["special_tokens"] = {}
        tokenizer_path.write_text(json.dumps(tokenizer, ensure_ascii=False))
    if eos is not None:
        ends = [eos] + [t for t in [g.get("tokenizer.ggml.eot_token_id")] if t is not None and t != eos]
        (out / "generation_config.json").write_text(json.dumps(
            {"bos_token_id": bos, "eos_token_id": ends if len(ends) > 1 else eos}, indent=2))
    return config


def write_tokenizer(gguf_path, g, out):
    try:
        from gguf_tokenizer_to_hf import write_hf_tokenizer
    except ImportError:
        from transformers import AutoTokenizer
        path = pathlib.Path(gguf_path).resolve()

        def write_hf_tokenizer(_, out_dir):
            AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name).save_pretrained(str(out_dir))
    write_hf_tokenizer(gguf_path, out)
    config = fix_special_tokens(g, out)
    template = g.get("tokenizer.chat_template")
    if template:
        config["chat_template"] = template
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False))


def convert(gguf_path, out_dir, dtype="f32", max_shard_size=None, tokenizer=True):
    g = Gguf(gguf_path)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mtype = model_type(g)
    config = common_config(g, mtype, DTYPES[dtype][0])
    if mtype == "gemma3_text":
        gemma3_config(g, config)
    elif mtype.startswith("deepseek"):
        deepseek_config(g, mtype, config)
    else:
        moe_config(g, mtype, config)
    save(hf_tensors(g, mtype, config), out, dtype, parse_size(max_shard_size) if max_shard_size else 0)
    (out / "config.json").write_text(json.dumps(config, indent=2))
    if tokenizer:
        write_tokenizer(gguf_path, g, out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf")
    parser.add_argument("out_dir")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    parser.add_argument("--max-shard-size", help="split the weights into files of at most this size (e.g. 2GB)")
    parser.add_argument("--no-tokenizer", action="store_true", help="write only config.json and the weights")
    args = parser.parse_args(argv)
    print(convert(args.gguf, args.out_dir, args.dtype, args.max_shard_size, not args.no_tokenizer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
