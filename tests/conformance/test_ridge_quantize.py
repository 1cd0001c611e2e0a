"""`ridge quantize` against llama.cpp's quantizer (llama_model_quantize, the code behind
llama-quantize) on the same input: every tensor gets the same type, the same bytes, and the
file the same metadata; llama.cpp loads and runs ridge's artifact.

Inputs: the default model (Q4_1, so both tools dequantize to f32 first: requantizing) and a
synthetic F16 model whose rows are multiples of 256 (every K type used without fallbacks).
"""
import ctypes
import filecmp
import json
import os
import subprocess

import gguf
import llama_cpp as lc
import numpy as np
import pytest

FTYPES = {"Q8_0": 7, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "Q2_K": 10, "Q3_K_S": 11, "Q3_K_M": 12,
          "Q3_K_L": 13, "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18, "F16": 1}
_quiet_log = lc.llama_log_callback(lambda level, text, user: None)


def llama_quantize(src, dst, ftype):
    lc.llama_log_set(_quiet_log, ctypes.c_void_p(0))
    params = lc.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    params.allow_requantize = True
    rc = lc.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    assert rc == 0, f"llama_model_quantize failed ({rc})"


def ridge_quantize(ridge_bin, src, dst, type_name):
    out = subprocess.run([ridge_bin, "quantize", str(src), str(dst), "--type", type_name, "--json", "-t", "2"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def assert_same_files(ours, theirs):
    """The same tensors in the same order, of the same types and bytes, and the same metadata keys, file type and
    quantization version. Files equal to the byte pass at once (ridge's and llama.cpp's are, for every case here);
    only others are read with gguf-py (four seconds a file of the default model's vocabulary), which names what
    differs, if anything does."""
    if filecmp.cmp(ours, theirs, shallow=False):
        return
    a, b = gguf.GGUFReader(str(ours)), gguf.GGUFReader(str(theirs))
    assert [t.name for t in a.tensors] == [t.name for t in b.tensors], "tensor order differs"
    for ta, tb in zip(a.tensors, b.tensors):
        assert ta.tensor_type == tb.tensor_type, f"{ta.name}: ridge wrote {ta.tensor_type.name}, llama.cpp {tb.tensor_type.name}"
        da = np.asarray(ta.data).view(np.uint8).reshape(-1)
        db = np.asarray(tb.data).view(np.uint8).reshape(-1)
        assert da.shape == db.shape, ta.name
        differ = np.flatnonzero(da != db)
        assert differ.size == 0, f"{ta.name} ({ta.tensor_type.name}): {differ.size} of {da.size} bytes differ"
    fa = {k: f for k, f in a.fields.items() if not k.startswith("GGUF.")}
    fb = {k: f for k, f in b.fields.items() if not k.startswith("GGUF.")}
    assert list(fa) == list(fb), "metadata keys differ"
    for key in ("general.file_type", "general.quantization_version"):
        assert fa[key].contents() == fb[key].contents(), key


@pytest.fixture(scope="module")
def synth_f16(ridge_bin, tmp_path_factory):
    path = tmp_path_factory.mktemp("rq") / "f16.gguf"
    subprocess.run([ridge_bin, "synth", "--n-embd", "512", "--n-layer", "3", "--n-head", "8", "--n-head-kv", "2",
                    "--n-ff", "768", "--n-vocab", "600", "-t", "F16", "--seed", "5", "-o", str(path), "-f"],
                   check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def default_model_artifact(ridge_bin, default_model, tmp_path_factory):
    """ridge quantize's file of the default model in a type (and its --json report), written once for the module."""
    made, folder = {}, tmp_path_factory.mktemp("rq_default")

    def artifact(type_name):
        if type_name not in made:
            path = folder / f"{type_name}.gguf"
            made[type_name] = path, ridge_quantize(ridge_bin, default_model, path, type_name)
        return made[type_name]
    return artifact


@pytest.mark.parametrize("type_name", ["Q8_0", "Q4_0", "Q5_1", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_S", "Q6_K"])
def test_default_model_matches_llama_quantize(default_model, default_model_artifact, tmp_path, type_name):
    ours, report = default_model_artifact(type_name)
    theirs = tmp_path / "llama.gguf"
    llama_quantize(default_model, theirs, FTYPES[type_name])
    assert_same_files(ours, theirs)
    assert report["bytes_out"] <= os.path.getsize(ours)


@pytest.mark.parametrize("type_name", ["Q4_1", "Q5_0", "Q2_K", "Q3_K_S", "Q3_K_L", "Q4_K_S", "Q5_K_M", "Q6_K", "F16"])
def test_synthetic_f16_matches_llama_quantize(ridge_bin, synth_f16, tmp_path, type_name):
    ours, theirs = tmp_path / "ridge.gguf", tmp_path / "llama.gguf"
    ridge_quantize(ridge_bin, synth_f16, ours, type_name)
    llama_quantize(synth_f16, theirs, FTYPES[type_name])
    assert_same_files(ours, theirs)


def test_llama_cpp_runs_ridges_artifact(ridge_bin, default_model_artifact):
    out, _ = default_model_artifact("Q4_K_M")
    llm = lc.Llama(model_path=str(out), n_ctx=64, n_threads=2, verbose=False)
    text = llm("The capital of France is", max_tokens=8, temperature=0)["choices"][0]["text"]
    assert text.strip()
    ours = subprocess.run([ridge_bin, "run", "-m", str(out), "-p", "The capital of France is", "-n", "8", "--temp", "0"],
                          check=True, capture_output=True, text=True).stdout
    assert text.strip().split()[0] in ours  # the two engines agree on the artifact's first word


def test_hostile_inputs_leave_no_file(ridge_bin, tmp_path):
    bad = tmp_path / "truncated.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x01" * 20)
    out = tmp_path / "out.gguf"
    r = subprocess.run([ridge_bin, "quantize", str(bad), str(out), "--type", "Q4_0"], capture_output=True, text=True)
    assert r.returncode != 0 and "error" in r.stderr.lower()
    assert not out.exists() and not (tmp_path / "out.gguf.part").exists()
    r = subprocess.run([ridge_bin, "quantize", str(bad), str(out), "--type", "Q9_Z"], capture_output=True, text=True)
    assert r.returncode != 0 and "Q4_K_M" in r.stderr  # the error lists the known types


def test_full_disk_leaves_no_file(ridge_bin, synth_f16, tmp_path):
    # /dev/full accepts opening and fails every write: the .part file is never renamed into place.
    out = tmp_path / "full" / "out.gguf"
    out.parent.mkdir()
    os.symlink("/dev/full", str(out) + ".part")
    r = subprocess.run([ridge_bin, "quantize", str(synth_f16), str(out), "--type", "Q4_0", "-q"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "cannot write" in r.stderr
    assert not out.exists()
