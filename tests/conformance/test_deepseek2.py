"""deepseek2 (multi-head latent attention, leading dense layer, routed + shared experts, DeepSeek's
YaRN) on small `ridge synth` files against llama.cpp: next-token distributions (mean KL < 0.01 nats
over >= 500 positions, one prompt past the 256-position attention tile) and greedy continuations,
without a query bottleneck (DeepSeek-V2-Lite: softmax router) and with one (DeepSeek-V3: sigmoid
router with a selection bias, normalised and scaled weights). Older files' unsplit attn_kv_b run
as the split form does, and group-limited routing (DeepSeek-V3's 8 groups) chooses as llama.cpp's.
"""
import json
import subprocess

import gguf
import numpy as np
import pytest

from llama_oracle import LlamaOracle
from test_forward import log_softmax, ridge_logits

# Named shapes scaled down: 3 layers (1 dense), 8 experts (2 used, 1 shared), a 64-wide latent.
SHAPE = ["--n-embd", "128", "--n-layer", "3", "--n-head", "4", "--n-ff", "256", "--n-vocab", "512",
         "--n-expert", "8", "--n-expert-used", "2", "--n-ff-expert", "64", "--n-shared-expert", "1",
         "--n-layer-dense-lead", "1", "--kv-lora-rank", "64", "--qk-rope-head-dim", "16",
         "--qk-nope-head-dim", "32", "--v-head-dim", "32", "--std", "0.1"]
VARIANTS = {
    "v2-lite-f16": ["deepseek-v2-lite", "--q-lora-rank", "0", "-t", "F16"],
    "v3-f16": ["deepseek-v3", "--q-lora-rank", "32", "-t", "F16"],
    "v2-lite-q8_0": ["deepseek-v2-lite", "--q-lora-rank", "0", "-t", "Q8_0"],
}
PROMPT_LENGTHS = [40, 150, 330]


def prompt(seed, length):
    return [int(t) for t in np.random.default_rng(seed).integers(1, 512, size=length)]


@pytest.fixture(scope="module")
def files(ridge_bin, tmp_path_factory):
    folder = tmp_path_factory.mktemp("deepseek2")
    out = {}
    for name, args in VARIANTS.items():
        path = str(folder / f"{name}.gguf")
        subprocess.run([ridge_bin, "synth", *args, *SHAPE, "-o", path, "-f"], check=True, capture_output=True)
        out[name] = path
    return out


def distributions(ridge_bin, path):
    oracle = LlamaOracle(path, n_ctx=1024, flash_attn=False)
    try:
        kls, agree, positions = [], 0, 0
        for seed, length in enumerate(PROMPT_LENGTHS):
            ids = prompt(seed, length)
            ref = log_softmax(oracle.logits(ids))
            got = log_softmax(ridge_logits(ridge_bin, path, ids))
            kls.extend((np.exp(ref) * (ref - got)).sum(axis=1).tolist())
            agree += int((ref.argmax(axis=1) == got.argmax(axis=1)).sum())
            positions += length
        return float(np.mean(kls)), max(kls), agree / positions, positions
    finally:
        oracle.close()


@pytest.mark.parametrize("name", VARIANTS)
def test_next_token_distributions_match_llama_cpp(ridge_bin, files, name):
    mean_kl, max_kl, top1, positions = distributions(ridge_bin, files[name])
    print(f"\n{name}: positions={positions} mean_kl={mean_kl:.2e} max_kl={max_kl:.2e} top1={top1:.4f}")
    assert positions >= 500
    assert mean_kl < 0.01
    # Float weights agree to rounding; 8-bit weights as far as llama.cpp's 8-bit activations allow.
    assert top1 >= (0.99 if "f16" in name else 0.9)


@pytest.mark.parametrize("name", ["v2-lite-f16", "v3-f16"])
@pytest.mark.parametrize("length", [12, 300])
def test_greedy_continuation_matches_llama_cpp(ridge_bin, files, name, length):
    ids = prompt(100 + length, length)
    oracle = LlamaOracle(files[name], n_ctx=1024, flash_attn=False)
    try:
        expected = oracle.greedy(ids, 24)
    finally:
        oracle.close()
    run = subprocess.run([ridge_bin, "run", "-m", files[name], "--tokens", ",".join(map(str, ids)), "-n", "24",
                          "--ignore-eos", "--json"], check=True, capture_output=True, text=True)
    assert json.loads(run.stdout)["tokens"] == expected


def rewrite(src, dst, drop=(), add=(), tensors=None):
    """A copy of the GGUF at src with metadata keys dropped / added and tensors replaced by tensors(reader)."""
    reader = gguf.GGUFReader(src)
    writer = gguf.GGUFWriter(dst, reader.fields["general.architecture"].contents())
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture" or key in drop:
            continue
        sub_type = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), field.types[0], sub_type=sub_type)
    for key, value, vtype in add:
        writer.add_key_value(key, value, vtype)
    items = tensors(reader) if tensors else [(t.name, np.asarray(t.data)) for t in reader.tensors]
    for name, array in items:
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dst


def unsplit_kv_b(reader, n_head=4, nope=32, v=32):
    """attn_k_b (n_head, rank, nope) and attn_v_b (n_head, v, rank) joined into the older attn_kv_b:
    per head, its nope key rows then its value rows, each kv_lora_rank wide."""
    tensors = {t.name: np.asarray(t.data) for t in reader.tensors}
    out = []
    for name, array in tensors.items():
        if name.endswith("attn_v_b.weight"):
            continue
        if name.endswith("attn_k_b.weight"):
            prefix = name[: -len("attn_k_b.weight")]
            k_b, v_b = array, tensors[prefix + "attn_v_b.weight"]
            heads = [np.concatenate([k_b[h].T, v_b[h]]) for h in range(n_head)]
            out.append((prefix + "attn_kv_b.weight", np.ascontiguousarray(np.concatenate(heads))))
            continue
        out.append((name, array))
    return out


def test_older_unsplit_kv_b_files_run_as_the_split_form(ridge_bin, files, tmp_path):
    split = files["v3-f16"]
    u32 = gguf.GGUFValueType.UINT32
    legacy = rewrite(split, str(tmp_path / "legacy.gguf"),
                     drop={"deepseek2.attention.key_length_mla", "deepseek2.attention.value_length_mla",
                           "deepseek2.attention.key_length", "deepseek2.attention.value_length",
                           "deepseek2.attention.head_count_kv"},
                     add=[("deepseek2.attention.key_length", 48, u32), ("deepseek2.attention.value_length", 32, u32),
                          ("deepseek2.attention.head_count_kv", 4, u32)],
                     tensors=unsplit_kv_b)
    assert "blk.0.attn_kv_b.weight" in {t.name for t in gguf.GGUFReader(legacy).tensors}
    ids = prompt(7, 120)
    ours_split = log_softmax(ridge_logits(ridge_bin, split, ids))
    ours_legacy = log_softmax(ridge_logits(ridge_bin, legacy, ids))
    oracle = LlamaOracle(legacy, n_ctx=256, flash_attn=False)  # llama.cpp runs it as plain multi-head attention
    try:
        ref = log_softmax(oracle.logits(ids))
    finally:
        oracle.close()
    kl_llama = float(np.mean((np.exp(ref) * (ref - ours_legacy)).sum(axis=1)))
    kl_split = float(np.mean((np.exp(ours_split) * (ours_split - ours_legacy)).sum(axis=1)))
    print(f"\nunsplit attn_kv_b: mean KL vs llama.cpp {kl_llama:.2e}, vs ridge's split form {kl_split:.2e}")
    assert kl_llama < 0.01
    assert kl_split < 1e-4


def test_group_limited_routing_matches_llama_cpp(ridge_bin, files, tmp_path):
    u32 = gguf.GGUFValueType.UINT32
    grouped = rewrite(files["v3-f16"], str(tmp_path / "grouped.gguf"),  # 4 groups of 2 experts, the best 2 compete
                      add=[("deepseek2.expert_group_count", 4, u32), ("deepseek2.expert_group_used_count", 2, u32)])
    ids = prompt(11, 200)
    oracle = LlamaOracle(grouped, n_ctx=256, flash_attn=False)
    try:
        ref = log_softmax(oracle.logits(ids))
    finally:
        oracle.close()
    got = log_softmax(ridge_logits(ridge_bin, grouped, ids))
    ungrouped = log_softmax(ridge_logits(ridge_bin, files["v3-f16"], ids))
    kl = float(np.mean((np.exp(ref) * (ref - got)).sum(axis=1)))
    changed = float(np.mean((np.exp(ref) * (ref - ungrouped)).sum(axis=1)))
    print(f"\ngroup-limited routing: mean KL {kl:.2e} (without the groups: {changed:.2e})")
    assert kl < 0.01
    assert changed > 10 * kl  # the groups change the choice

    bad = rewrite(files["v3-f16"], str(tmp_path / "bad_groups.gguf"),
                  add=[("deepseek2.expert_group_count", 3, u32), ("deepseek2.expert_group_used_count", 1, u32)])
    run = subprocess.run([ridge_bin, "run", "-m", bad, "--tokens", "1,2", "-n", "1"], capture_output=True, text=True)
    assert run.returncode != 0 and "8 experts in 3 groups" in run.stderr
