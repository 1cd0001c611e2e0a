"""`ridge synth` files load and run in both ridge and llama.cpp (llama-cpp-python), in every weight
type, and the two engines compute nearly the same logits on them. Every other architecture ridge
synth writes (qwen3, qwen3moe, gemma3, Mixtral-style llama, qwen2moe, olmoe, deepseek2 with and
without a query bottleneck), scaled down from its named shape, carries the metadata llama.cpp reads
(checked with the gguf package) and loads and runs in llama.cpp with finite, varied logits.
"""
import json
import os
import subprocess

import gguf
import llama_cpp
import numpy as np
import pytest

from llama_oracle import LlamaOracle

SHAPE = ["--n-embd", "256", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "512",
         "--n-vocab", "1000"]
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q6_K"]
TOKENS = [0, 17, 300, 999, 5, 42, 512, 2]
# Correlation of ridge's and llama.cpp's last-position logits. llama.cpp quantizes activations to
# 8 bits for quantized weights, so those agree less closely than the float types.
MIN_CORRELATION = {"F32": 0.9999, "F16": 0.9999, "BF16": 0.999}


def synth(ridge_bin, path, *args):
    subprocess.run([ridge_bin, "synth", *args, "-o", str(path), "-f"], check=True, capture_output=True)
    assert os.path.exists(path)
    return str(path)


def llama_cpp_logits(path, tokens):
    llm = llama_cpp.Llama(model_path=path, n_ctx=64, n_threads=2, logits_all=True, verbose=False)
    llm.eval(tokens)
    logits = np.array(llm.scores[len(tokens) - 1], dtype=np.float32)
    text_tokens = llm.tokenize(b"hello world, this is a test", add_bos=False)
    del llm
    return logits, text_tokens


def ridge_logits(ridge_bin, path, tokens, out):
    subprocess.run([ridge_bin, "logits", "-m", path, "--tokens", ",".join(map(str, tokens)), "-o", str(out)],
                   check=True, capture_output=True)
    return np.fromfile(out, dtype=np.float32).reshape(len(tokens), -1)[-1]


@pytest.mark.parametrize("type_name", TYPES)
def test_both_engines_load_and_agree(ridge_bin, tmp_path, type_name):
    path = synth(ridge_bin, tmp_path / f"tiny.{type_name}.gguf", *SHAPE, "-t", type_name)
    theirs, text_tokens = llama_cpp_logits(path, TOKENS)
    assert theirs.shape == (1000,) and np.isfinite(theirs).all()
    assert 0 < len(text_tokens) < 20  # merges join letter pairs: fewer tokens than the 27 bytes

    run = subprocess.run([ridge_bin, "run", "-m", path, "--tokens", "1,2,3", "-n", "4", "--json"],
                         check=True, capture_output=True, text=True)
    assert len(json.loads(run.stdout)["tokens"]) == 4

    ours = ridge_logits(ridge_bin, path, TOKENS, tmp_path / "logits.f32")
    assert np.isfinite(ours).all()
    correlation = np.corrcoef(ours, theirs)[0, 1]
    assert correlation >= MIN_CORRELATION.get(type_name, 0.98), f"{type_name}: correlation {correlation:.5f}"


def test_named_shape_loads_in_both(ridge_bin, tmp_path):
    path = synth(ridge_bin, tmp_path / "smollm2.gguf", "smollm2-135m", "-t", "Q4_1")
    theirs, _ = llama_cpp_logits(path, TOKENS[:3])
    assert theirs.shape == (49152,) and np.isfinite(theirs).all()
    run = subprocess.run([ridge_bin, "run", "-m", path, "--tokens", "1,2,3", "-n", "2", "--json"],
                         check=True, capture_output=True, text=True)
    assert len(json.loads(run.stdout)["tokens"]) == 2


# Named shapes scaled down to run in milliseconds: 2-3 layers, widths of 64-256, 4-8 experts, a
# 512-token vocabulary. Each also names a weight type, so the 3-D expert tensors and llama.cpp's
# fallbacks for short rows are exercised in several types.
SMALL = ["--n-vocab", "512", "--n-head", "4"]
SMALL_TOKENS = [0, 17, 300, 511, 5, 42, 256, 2, 99, 7]
ARCHITECTURES = {
    "qwen3": (["qwen3-0.6b", "--n-embd", "64", "--n-layer", "2", "--n-head-kv", "2", "--head-dim", "32",
               "--n-ff", "128"], "F16"),
    "qwen3moe": (["qwen3-30b-a3b", "--n-embd", "256", "--n-layer", "2", "--n-head-kv", "2", "--head-dim", "64",
                  "--n-ff", "256", "--n-expert", "8", "--n-expert-used", "2", "--n-ff-expert", "256"], "Q4_K"),
    "gemma3": (["gemma3-270m", "--n-embd", "64", "--n-layer", "3", "--head-dim", "32", "--n-ff", "128",
                "--sliding-window", "4", "--swa-pattern", "3"], "Q8_0"),
    "mixtral": (["mixtral-8x7b", "--n-embd", "64", "--n-layer", "2", "--n-head-kv", "2", "--n-expert", "4",
                 "--n-expert-used", "2", "--n-ff-expert", "128"], "Q4_0"),
    "qwen2moe": (["qwen1.5-moe-a2.7b", "--n-embd", "64", "--n-layer", "2", "--n-head-kv", "2", "--n-ff", "128",
                  "--n-expert", "8", "--n-expert-used", "2", "--n-ff-expert", "32", "--n-shared-expert", "2",
                  "--n-ff-shared", "64"], "Q8_0"),
    "olmoe": (["olmoe-1b-7b", "--n-embd", "128", "--n-layer", "2", "--n-head-kv", "4", "--n-expert", "8",
               "--n-expert-used", "2", "--n-ff-expert", "64"], "BF16"),
    "deepseek2-lite": (["deepseek-v2-lite", "--n-embd", "64", "--n-layer", "3", "--n-ff", "128", "--n-expert", "8",
                        "--n-expert-used", "2", "--n-ff-expert", "32", "--kv-lora-rank", "32",
                        "--qk-rope-head-dim", "16", "--qk-nope-head-dim", "32", "--v-head-dim", "32"], "Q8_0"),
    "deepseek2-v3": (["deepseek-v3", "--n-embd", "64", "--n-layer", "3", "--n-ff", "128", "--n-expert", "8",
                      "--n-expert-used", "2", "--n-ff-expert", "32", "--n-layer-dense-lead", "1",
                      "--kv-lora-rank", "32", "--q-lora-rank", "32", "--qk-rope-head-dim", "16",
                      "--qk-nope-head-dim", "32", "--v-head-dim", "32"], "Q5_0"),
}

# Metadata llama.cpp reads for each, and a few tensors' GGUF shapes ([ne0, ne1, ne2]).
EXPECTED_KEYS = {
    "qwen3": {"general.architecture": "qwen3", "qwen3.attention.key_length": 32, "qwen3.attention.head_count_kv": 2},
    "qwen3moe": {"general.architecture": "qwen3moe", "qwen3moe.expert_count": 8, "qwen3moe.expert_used_count": 2,
                 "qwen3moe.expert_feed_forward_length": 256},
    "gemma3": {"general.architecture": "gemma3", "gemma3.attention.sliding_window": 4,
               "gemma3.attention.sliding_window_pattern": 3, "gemma3.rope.freq_base_swa": 10000.0,
               "gemma3.attention.key_length": 32, "gemma3.attention.head_count_kv": 1},
    "mixtral": {"general.architecture": "llama", "llama.expert_count": 4, "llama.expert_used_count": 2,
                "llama.feed_forward_length": 128},
    "qwen2moe": {"general.architecture": "qwen2moe", "qwen2moe.expert_count": 8,
                 "qwen2moe.expert_feed_forward_length": 32, "qwen2moe.expert_shared_feed_forward_length": 64},
    "olmoe": {"general.architecture": "olmoe", "olmoe.expert_count": 8, "olmoe.feed_forward_length": 64},
    "deepseek2-lite": {"general.architecture": "deepseek2", "deepseek2.attention.q_lora_rank": 0,
                       "deepseek2.attention.kv_lora_rank": 32, "deepseek2.attention.head_count_kv": 1,
                       "deepseek2.attention.key_length": 48, "deepseek2.attention.value_length": 32,
                       "deepseek2.attention.key_length_mla": 48, "deepseek2.attention.value_length_mla": 32,
                       "deepseek2.leading_dense_block_count": 1, "deepseek2.expert_shared_count": 2,
                       "deepseek2.expert_gating_func": 1, "deepseek2.rope.scaling.type": "yarn"},
    "deepseek2-v3": {"general.architecture": "deepseek2", "deepseek2.attention.q_lora_rank": 32,
                     "deepseek2.expert_gating_func": 2, "deepseek2.expert_weights_norm": True,
                     "deepseek2.expert_weights_scale": 2.5, "deepseek2.expert_shared_count": 1},
}
EXPECTED_SHAPES = {
    "qwen3": {"blk.1.attn_q_norm.weight": [32], "blk.1.attn_q.weight": [64, 128]},
    "qwen3moe": {"blk.1.ffn_gate_exps.weight": [256, 256, 8], "blk.1.ffn_down_exps.weight": [256, 256, 8],
                 "blk.1.ffn_gate_inp.weight": [256, 8]},
    "gemma3": {"blk.2.post_attention_norm.weight": [64], "blk.2.post_ffw_norm.weight": [64],
               "blk.2.attn_k_norm.weight": [32]},
    "mixtral": {"blk.1.ffn_up_exps.weight": [64, 128, 4], "blk.1.ffn_down_exps.weight": [128, 64, 4]},
    "qwen2moe": {"blk.0.ffn_gate_inp_shexp.weight": [64], "blk.0.ffn_up_shexp.weight": [64, 64],
                 "blk.0.attn_q.bias": [64]},
    "olmoe": {"blk.0.attn_q_norm.weight": [128], "blk.0.attn_k_norm.weight": [128],
              "blk.0.ffn_gate_exps.weight": [128, 64, 8]},
    "deepseek2-lite": {"blk.0.attn_q.weight": [64, 4 * 48], "blk.0.attn_k_b.weight": [32, 32, 4],
                       "blk.0.attn_v_b.weight": [32, 32, 4], "blk.0.ffn_gate.weight": [64, 128],
                       "blk.1.ffn_gate_shexp.weight": [64, 64], "blk.2.ffn_down_exps.weight": [32, 64, 8]},
    "deepseek2-v3": {"blk.0.attn_q_a.weight": [64, 32], "blk.0.attn_q_b.weight": [32, 4 * 48],
                     "blk.1.exp_probs_b.bias": [8], "blk.2.ffn_gate_shexp.weight": [64, 32]},
}
ABSENT = {
    "qwen3": ["output.weight"],  # tied, as Qwen3-0.6B
    "gemma3": ["output.weight"],
    "deepseek2-lite": ["blk.0.attn_q_a.weight", "blk.0.attn_kv_b.weight", "blk.1.exp_probs_b.bias"],
}


def metadata_value(field):
    value = field.contents()
    return float(value) if isinstance(value, (float, np.floating)) else value


@pytest.fixture(scope="module")
def architecture_files(ridge_bin, tmp_path_factory):
    folder = tmp_path_factory.mktemp("architectures")
    return {name: synth(ridge_bin, folder / f"{name}.gguf", *args, *SMALL, "-t", type_name)
            for name, (args, type_name) in ARCHITECTURES.items()}


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_architecture_metadata_and_shapes(architecture_files, name):
    reader = gguf.GGUFReader(architecture_files[name])
    for key, want in EXPECTED_KEYS[name].items():
        assert key in reader.fields, f"{name}: {key} missing"
        got = metadata_value(reader.fields[key])
        assert got == pytest.approx(want) if isinstance(want, float) else got == want, f"{name}: {key} = {got}"
    shapes = {t.name: [int(d) for d in t.shape] for t in reader.tensors}
    for tensor, shape in EXPECTED_SHAPES[name].items():
        assert shapes.get(tensor) == shape, f"{name}: {tensor} has shape {shapes.get(tensor)}"
    for tensor in ABSENT.get(name, []):
        assert tensor not in shapes, f"{name}: {tensor} should not be written"


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_architecture_runs_in_llama_cpp(architecture_files, name):
    oracle = LlamaOracle(architecture_files[name], n_ctx=64)
    try:
        assert oracle.n_vocab == 512
        logits = oracle.logits(SMALL_TOKENS)
    finally:
        oracle.close()
    assert logits.shape == (len(SMALL_TOKENS), 512)
    assert np.isfinite(logits).all(), f"{name}: non-finite logits"
    # Random weights give varied logits at every position, different from position to position.
    assert (logits.std(axis=1) > 1e-4).all(), f"{name}: flat logits"
    assert np.abs(logits[0] - logits[-1]).max() > 1e-4, f"{name}: the same logits at the first and last position"
