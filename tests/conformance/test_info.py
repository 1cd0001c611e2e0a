"""`ridge info`: its report of the default model agrees with the gguf package, and a broken file
gets a one-line error naming the problem and exit status 1 (never a crash)."""
import json
import os
import struct
import subprocess

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")


def run_info(ridge_bin, *args):
    return subprocess.run([ridge_bin, "info", *args], capture_output=True, text=True, timeout=120)


def test_json_matches_gguf_package(ridge_bin, default_model):
    result = run_info(ridge_bin, "--json", default_model)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    reader = gguf.GGUFReader(default_model)
    assert info["architecture"] == "llama"
    assert info["hyperparameters"]["n_layer"] == 30
    assert info["hyperparameters"]["n_embd"] == 576
    assert info["hyperparameters"]["n_head"] == 9 and info["hyperparameters"]["n_head_kv"] == 3
    assert info["hyperparameters"]["n_vocab"] == 49152
    assert len(info["tensors"]) == len(reader.tensors)
    total_params = total_bytes = 0
    for ours, theirs in zip(info["tensors"], reader.tensors):
        assert ours["name"] == theirs.name
        assert ours["type"] == theirs.tensor_type.name
        assert ours["shape"] == [int(x) for x in theirs.shape]
        assert ours["n_bytes"] == int(theirs.n_bytes)
        total_params += int(np.prod(theirs.shape))
        total_bytes += int(theirs.n_bytes)
    assert info["total"] == {"n_tensors": len(reader.tensors), "n_params": total_params, "n_bytes": total_bytes}
    assert sum(t["n_bytes"] for t in info["bytes_by_type"].values()) == total_bytes
    assert set(info["bytes_by_type"]) == {"F32", "Q4_1", "Q8_0"}


def test_text_report(ridge_bin, default_model):
    result = run_info(ridge_bin, default_model)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for needle in ["architecture  llama", "n_layer        30", "token_embd.weight", "[576, 49152]", "bytes by type", "Q4_1",
                   "total         134515008 parameters"]:
        assert needle in out, needle
    assert "tokenizer.ggml.merges" not in out  # the metadata dump is opt-in
    assert "tokenizer.ggml.merges" in run_info(ridge_bin, "--metadata", default_model).stdout


def header(version=3, n_tensors=0, n_kv=0):
    return b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv)


def tensor_entry(name, dims, ggml_type, offset):
    b = struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
    return b + b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ggml_type, offset)


HOSTILE = {
    "empty": (b"", "truncated file"),
    "bad_magic": (b"GGUX" + bytes(20), "bad magic"),
    "version_99": (header(99), "unsupported GGUF version 99"),
    "huge_tensor_count": (header(3, 1 << 60, 0), "tensor count"),
    "huge_string": (header(3, 0, 1) + struct.pack("<Q", 1 << 40) + bytes(8), "metadata key"),
    "unknown_value_type": (header(3, 0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<I", 99) + bytes(8), "unknown value type 99"),
    "unknown_tensor_type": (header(3, 1, 0) + tensor_entry("w", [32], 99, 0) + bytes(64), "unknown type id 99"),
    "offset_past_end": (header(3, 1, 0) + tensor_entry("w", [32], 0, 1 << 20) + bytes(64), "tensor 'w' needs 128 bytes"),
    "misaligned": (header(3, 1, 0) + tensor_entry("w", [8], 0, 3) + bytes(64), "not aligned"),
    "five_dims": (header(3, 1, 0) + tensor_entry("w", [1, 1, 1, 1, 1], 0, 0) + bytes(64), "5 dimensions"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_file_is_a_clear_error(ridge_bin, tmp_path, name):
    data, needle = HOSTILE[name]
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(data)
    result = run_info(ridge_bin, str(path))
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.startswith("error: "), result.stderr
    assert needle in result.stderr and str(path) in result.stderr, result.stderr


def test_truncated_model_is_a_clear_error(ridge_bin, default_model, tmp_path):
    with open(default_model, "rb") as f:
        head = f.read(4 << 20)
    for cut in [100, 50_000, 1_000_000, len(head)]:
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(head[:cut])
        result = run_info(ridge_bin, str(path))
        assert result.returncode == 1 and "truncated" in result.stderr, (cut, result.stderr)


def test_missing_file(ridge_bin, tmp_path):
    result = run_info(ridge_bin, str(tmp_path / "nope.gguf"))
    assert result.returncode == 1 and "nope.gguf" in result.stderr
