#!/usr/bin/env python3
"""Writes LoRA adapters for a GGUF base model: PEFT directories, and their GGUF conversions by llama.cpp's own
convert_lora_to_gguf.py (issue 47: no LoRA for the test models ships anywhere, so the tests make their own).

For a base such as ~/.cache/ridge/models/SmolLM2-135M-Instruct.Q4_1.gguf it writes, under --out:

  base/config.json            a Hugging Face config.json derived from the GGUF metadata (what the converter's
                              --base needs: it reads only config.json, never weights or tokenizer files)
  <name>/adapter_config.json  PEFT's config: r, lora_alpha, target_modules, use_rslora, base_model_name_or_path,
                              peft_type LORA, task_type CAUSAL_LM
  <name>/adapter_model.safetensors
                              PEFT's key names: base_model.model.model.layers.{i}.self_attn.q_proj.lora_A.weight
                              (r x in) and ...lora_B.weight (out x r), f32, in Hugging Face's layout (for a llama
                              model, q/k rows in HF's rotary order, not GGUF's)
  <name>.gguf                 the same adapter converted with `convert_lora_to_gguf.py --base base --outtype f32`
  manifest.json               {name: {"peft": dir, "gguf": file, "rank", "alpha", "targets", "use_rslora", ...}}

Values: A ~ N(0, 1/in), B ~ N(0, sigma) with sigma chosen so that the merged delta scale*B@A of each matrix has an
RMS of --strength (times ARCH_GAIN of the architecture) times the RMS of that base matrix (dequantized from the
GGUF): big enough that greedy answers differ from the base, small enough that the text stays text. Seeded: the same arguments write the same bytes.

Note on rsLoRA: llama.cpp's converter writes `adapter.lora.alpha` as given and llama.cpp scales by alpha/r; it
ignores `use_rslora`. For an rsLoRA adapter this tool therefore writes, beside the converter's faithful
<name>.gguf, <name>.rs-equivalent.gguf whose adapter.lora.alpha is alpha*sqrt(r) (so alpha'/r = alpha/sqrt(r), the
scale PEFT applies): the file that reproduces the PEFT adapter in llama.cpp.

Usage:
  python3 tools/make_lora_adapters.py --base MODEL.gguf --out DIR                 # the standard set (below)
  python3 tools/make_lora_adapters.py --base MODEL.gguf --out DIR --distinct 8 --rank 16 --no-gguf
                                                                                 # 8 distinct rank-16 adapters
  python3 tools/make_lora_adapters.py ... --adapter NAME:RANK:TARGETS[:ALPHA[:rslora]]   # custom; TARGETS: attn,
                                                                                 # all, or q_proj+v_proj+...
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

HOME = pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge")
LLAMA_CPP_SRC = pathlib.Path(os.environ.get("LLAMA_CPP_SRC") or HOME / "llama.cpp" / "src")

ATTN = ["q_proj", "k_proj", "v_proj", "o_proj"]
MLP = ["gate_proj", "up_proj", "down_proj"]
ALL = ATTN + MLP
GGUF_NAME = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
             "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down"}
HF_ARCH = {"llama": ("LlamaForCausalLM", "llama"), "qwen2": ("Qwen2ForCausalLM", "qwen2")}

# name: (rank, targets, alpha, use_rslora, strength or None for --strength). Attention-only adapters get a
# larger relative delta than all-seven ones, whose MLP deltas compound: measured with llama.cpp on the default
# model, mean KL(base || adapted) over a prose prompt is about 0.5-1.5 nats for these, and the greedy answers
# differ from the base's but stay sentences; on Qwen2.5-Coder-0.5B about 0.15-0.4.
STANDARD = {
    "r8_attn": (8, ATTN, 16.0, False, 0.2),
    "r8_all": (8, ALL, 16.0, False, None),
    "r16_all": (16, ALL, 32.0, False, None),
    "r16_rs": (16, ALL, 8.0, True, None),
    "r64_all": (64, ALL, 32.0, False, None),
    "r64_attn": (64, ATTN, 128.0, False, 0.25),
}
DEFAULT_STRENGTH = 0.1
# Qwen2.5-Coder-0.5B shrugs off a relative delta that visibly moves SmolLM2-135M: its strengths are multiplied by
# this (measured: r8_all 0.15 / r64_attn 0.4 nats of mean KL(base || adapted) on a prose prompt at 1.0, about
# 0.45 / 1.2 at 1.6).
ARCH_GAIN = {"llama": 1.0, "qwen2": 1.6}


def peft_key(layer, module, ab):
    part = "self_attn" if module in ATTN else "mlp"
    return f"base_model.model.model.layers.{layer}.{part}.{module}.lora_{ab}.weight"


class BaseInfo:
    """Shapes and hyper-parameters of a GGUF base, and the RMS of each target matrix."""

    def __init__(self, path):
        import gguf
        from gguf import quants

        self.path = str(path)
        r = gguf.GGUFReader(self.path)
        fields = {k: v.contents() for k, v in r.fields.items() if not k.startswith("tokenizer.ggml.")}
        self.arch = fields["general.architecture"]
        if self.arch not in HF_ARCH:
            raise SystemExit(f"{path}: architecture {self.arch} is not one this tool writes configs for")
        a = self.arch
        self.n_layer = int(fields[f"{a}.block_count"])
        self.n_embd = int(fields[f"{a}.embedding_length"])
        self.n_ff = int(fields[f"{a}.feed_forward_length"])
        self.n_head = int(fields[f"{a}.attention.head_count"])
        self.n_head_kv = int(fields.get(f"{a}.attention.head_count_kv", self.n_head))
        self.eps = float(fields[f"{a}.attention.layer_norm_rms_epsilon"])
        self.rope_theta = float(fields.get(f"{a}.rope.freq_base", 10000.0))
        self.n_ctx = int(fields.get(f"{a}.context_length", 2048))
        self.name = str(fields.get("general.name", pathlib.Path(path).stem))
        tensors = {t.name: t for t in r.tensors}
        emb = tensors["token_embd.weight"]
        self.vocab = int(fields.get(f"{a}.vocab_size", int(emb.shape[1])))
        self.tied = "output.weight" not in tensors
        self.head_dim = int(fields.get(f"{a}.rope.dimension_count", self.n_embd // self.n_head))
        self.shapes = {}  # (layer, module) -> (out, in)
        self.rms = {}
        for layer in range(self.n_layer):
            for module in ALL:
                t = tensors[f"blk.{layer}.{GGUF_NAME[module]}.weight"]
                n_in, n_out = int(t.shape[0]), int(t.shape[1])
                self.shapes[(layer, module)] = (n_out, n_in)
        self._tensors = tensors
        self._quants = quants

    def matrix_rms(self, layer, module):
        key = (layer, module)
        if key not in self.rms:
            t = self._tensors[f"blk.{layer}.{GGUF_NAME[module]}.weight"]
            w = self._quants.dequantize(t.data, t.tensor_type).astype(np.float64)
            self.rms[key] = float(np.sqrt((w * w).mean()))
        return self.rms[key]

    def hf_config(self):
        arch, model_type = HF_ARCH[self.arch]
        cfg = {
            "architectures": [arch],
            "model_type": model_type,
            "hidden_size": self.n_embd,
            "intermediate_size": self.n_ff,
            "num_hidden_layers": self.n_layer,
            "num_attention_heads": self.n_head,
            "num_key_value_heads": self.n_head_kv,
            "head_dim": self.head_dim,
            "rms_norm_eps": self.eps,
            "rope_theta": self.rope_theta,
            "max_position_embeddings": self.n_ctx,
            "vocab_size": self.vocab,
            "tie_word_embeddings": self.tied,
            "hidden_act": "silu",
            "torch_dtype": "float32",
            "_name_or_path": self.name,
        }
        if self.arch == "qwen2":
            cfg.update({"use_sliding_window": False, "sliding_window": self.n_ctx, "max_window_layers": self.n_layer})
        return cfg


def parse_targets(text):
    if text == "attn":
        return list(ATTN)
    if text == "all":
        return list(ALL)
    if text == "mlp":
        return list(MLP)
    targets = text.split("+")
    for t in targets:
        if t not in ALL:
            raise SystemExit(f"unknown target module {t!r} (one of {', '.join(ALL)}, or attn/mlp/all)")
    return targets


def scale_of(rank, alpha, use_rslora):
    return alpha / math.sqrt(rank) if use_rslora else alpha / rank


def make_tensors(base, rank, targets, alpha, use_rslora, seed, strength):
    """{peft key: f32 array} for one adapter."""
    rng = np.random.default_rng(seed)
    scale = scale_of(rank, alpha, use_rslora)
    out = {}
    for layer in range(base.n_layer):
        for module in ALL:  # fixed order, so the values do not depend on which modules are targeted
            if module not in targets:
                continue
            n_out, n_in = base.shapes[(layer, module)]
            sigma_a = 1.0 / math.sqrt(n_in)
            # rms(scale * B @ A) = scale * sqrt(rank) * sigma_a * sigma_b
            sigma_b = strength * base.matrix_rms(layer, module) / (scale * math.sqrt(rank) * sigma_a)
            a = rng.standard_normal((rank, n_in)) * sigma_a
            b = rng.standard_normal((n_out, rank)) * sigma_b
            out[peft_key(layer, module, "A")] = np.ascontiguousarray(a, dtype=np.float32)
            out[peft_key(layer, module, "B")] = np.ascontiguousarray(b, dtype=np.float32)
    return out


def write_peft(directory, tensors, config):
    """A PEFT adapter directory from {key: array} and adapter_config.json fields (also used by the tests to
    write hostile adapters)."""
    from safetensors.numpy import save_file

    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    full = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "lora_dropout": 0.0,
        "modules_to_save": None,
        "init_lora_weights": True,
        "layers_to_transform": None,
        "layers_pattern": None,
        "rank_pattern": {},
        "alpha_pattern": {},
    }
    full.update(config)
    with open(directory / "adapter_config.json", "w") as f:
        json.dump(full, f, indent=2)
    save_file(tensors, str(directory / "adapter_model.safetensors"), metadata={"format": "pt"})
    return directory


def peft_config(base, rank, targets, alpha, use_rslora):
    return {"r": rank, "lora_alpha": alpha, "target_modules": list(targets), "use_rslora": bool(use_rslora),
            "base_model_name_or_path": base.name}


def write_base_config(base, out):
    d = pathlib.Path(out) / "base"
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "config.json", "w") as f:
        json.dump(base.hf_config(), f, indent=2)
    return d


# Runs llama.cpp's converter once per adapter inside one Python process (torch and transformers imported once).
_CONVERT_DRIVER = r"""
import os, runpy, sys, json
script, jobs = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, os.path.dirname(script))
for job in jobs:
    sys.argv = [script] + job
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
"""


def convert_to_gguf(base_dir, peft_dirs, outfiles):
    script = LLAMA_CPP_SRC / "convert_lora_to_gguf.py"
    if not script.exists():
        raise SystemExit(f"{script} not found: run tools/fetch_llama_cpp_src.sh (or set LLAMA_CPP_SRC)")
    jobs = [["--base", str(base_dir), "--outtype", "f32", "--outfile", str(o), str(p)]
            for p, o in zip(peft_dirs, outfiles)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    run = subprocess.run([sys.executable, "-c", _CONVERT_DRIVER, str(script), json.dumps(jobs)],
                         env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"convert_lora_to_gguf.py failed ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-6000:]}")
    for o in outfiles:
        if not pathlib.Path(o).exists():
            raise SystemExit(f"convert_lora_to_gguf.py wrote no {o}:\n{run.stderr[-4000:]}")


def rewrite_gguf_alpha(src, dst, alpha):
    """A copy of a GGUF LoRA file with adapter.lora.alpha replaced (the rsLoRA-equivalent file)."""
    import gguf

    r = gguf.GGUFReader(str(src))
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(str(dst), arch)
    for key, field in r.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        if key == gguf.Keys.Adapter.LORA_ALPHA:  # "adapter.lora.alpha"
            w.add_float32(key, float(alpha))
            continue
        vtype = field.types[0]
        value = field.contents()
        if vtype == gguf.GGUFValueType.ARRAY:
            w.add_key_value(key, value, vtype, sub_type=field.types[-1])
        else:
            w.add_key_value(key, value, vtype)
    for t in r.tensors:
        data = np.array(t.data)
        w.add_tensor(t.name, data, raw_dtype=t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_adapters(base_path, out, specs, strength=DEFAULT_STRENGTH, seed=0, gguf_files=True, log=print):
    """specs: {name: (rank, targets, alpha, use_rslora[, strength])}. Returns the manifest (also written to out/manifest.json;
    merged with what an earlier call wrote there)."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    base = BaseInfo(base_path)
    base_dir = write_base_config(base, out)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    peft_dirs, outfiles = [], []
    for name, spec in specs.items():
        rank, targets, alpha, rs = spec[:4]
        own = (spec[4] if len(spec) > 4 and spec[4] is not None else strength) * ARCH_GAIN.get(base.arch, 1.0)
        # The seed depends on the name, so adding an adapter to a set leaves the others' bytes unchanged.
        name_seed = seed * 1_000_003 + sum((j + 1) * ord(c) for j, c in enumerate(name))
        tensors = make_tensors(base, rank, targets, alpha, rs, name_seed, own)
        d = write_peft(out / name, tensors, peft_config(base, rank, targets, alpha, rs))
        entry = {"peft": str(d), "rank": rank, "alpha": alpha, "targets": list(targets), "use_rslora": rs,
                 "scale": scale_of(rank, alpha, rs), "strength": own, "base": str(base_path),
                 "arch": base.arch, "bytes": (d / "adapter_model.safetensors").stat().st_size}
        manifest[name] = entry
        if gguf_files:
            peft_dirs.append(d)
            outfiles.append(out / f"{name}.gguf")
    if peft_dirs:
        convert_to_gguf(base_dir, peft_dirs, outfiles)
        for d, o in zip(peft_dirs, outfiles):
            name = d.name
            manifest[name]["gguf"] = str(o)
            if manifest[name]["use_rslora"]:
                rank, alpha = manifest[name]["rank"], manifest[name]["alpha"]
                eq = out / f"{name}.rs-equivalent.gguf"
                rewrite_gguf_alpha(o, eq, alpha * math.sqrt(rank))
                manifest[name]["gguf_llama_cpp_equivalent"] = str(eq)
    manifest_path.write_text(json.dumps(manifest, indent=2))
    log(f"wrote {len(specs)} adapters for {base_path} ({base.arch}) under {out} in {time.monotonic() - t0:.1f} s")
    return manifest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="GGUF base model")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--adapter", action="append", default=[],
                    help="NAME:RANK:TARGETS[:ALPHA[:rslora]] (TARGETS: attn, mlp, all or q_proj+v_proj...); "
                         "default: the standard set " + ", ".join(STANDARD))
    ap.add_argument("--only", help="comma-separated names of the standard set to write")
    ap.add_argument("--distinct", type=int, default=0,
                    help="instead: N distinct adapters d0..d{N-1} of --rank over --targets")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--targets", default="all")
    ap.add_argument("--alpha", type=float, default=None, help="default 2*rank")
    ap.add_argument("--strength", type=float, default=DEFAULT_STRENGTH,
                    help="RMS of each merged delta relative to its base matrix's RMS (default %(default)s; the standard "
                         "attention-only adapters use their own)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-gguf", action="store_true", help="PEFT directories only (no llama.cpp conversion)")
    args = ap.parse_args()

    specs = {}
    if args.distinct:
        alpha = args.alpha if args.alpha is not None else 2.0 * args.rank
        for i in range(args.distinct):
            specs[f"d{i}"] = (args.rank, parse_targets(args.targets), alpha, False)
    for text in args.adapter:
        parts = text.split(":")
        if len(parts) < 3:
            raise SystemExit(f"--adapter {text}: NAME:RANK:TARGETS[:ALPHA[:rslora]]")
        rank = int(parts[1])
        alpha = float(parts[3]) if len(parts) > 3 else 2.0 * rank
        specs[parts[0]] = (rank, parse_targets(parts[2]), alpha, len(parts) > 4 and parts[4] == "rslora")
    if not specs:
        names = args.only.split(",") if args.only else list(STANDARD)
        specs = {n: STANDARD[n] for n in names}
    manifest = make_adapters(args.base, args.out, specs, args.strength, args.seed, not args.no_gguf)
    print(json.dumps({k: {f: v[f] for f in ("peft", "gguf", "rank", "alpha", "use_rslora") if f in v}
                      for k, v in manifest.items() if k in specs}, indent=1))


if __name__ == "__main__":
    main()
