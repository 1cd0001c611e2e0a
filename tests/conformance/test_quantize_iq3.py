"""`ridge quantize --type IQ3_XXS | IQ3_XS | IQ3_S | IQ3_M` against llama.cpp's quantizer on the same input.

Without an importance matrix IQ3_S and IQ3_M files are byte-identical to llama.cpp's llama_model_quantize
(through llama-cpp-python: header, metadata, tensor order, the mix rules' types and every block), and both
refuse IQ3_XXS and IQ3_XS, whose IQ3_XXS (and IQ2_S) tensors llama.cpp will not write without one. With
an imatrix (`ridge imatrix`) all four files are byte-identical to llama_model_quantize given the importance
llama-quantize derives from that file (in_sum2 / counts per column) and the quantize.imatrix.* keys
llama-quantize adds: so the types chosen with an imatrix (attn_v, ffn_down) and the importance-weighted
blocks are llama.cpp's too. ridge then loads each artifact and its next-token logits stay near the source's.

Input: a small synthetic F16 model (rows of 256 and 512, so no tensor falls back; two query heads per KV
head, so attn_v takes the file's own rules; eight layers, so IQ3_XS has middle layers and IQ3_M a first
eighth; an untied output).
"""
import ctypes
import subprocess

import gguf
import llama_cpp as lc
import numpy as np
import pytest

from test_quantize_iq import TEXT, assert_identical, prompt_logits, relative_rms, tensor_types

TYPES = ["IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M"]
FTYPES = {"IQ3_XS": 22, "IQ3_XXS": 23, "IQ3_S": 26, "IQ3_M": 27}  # llama_ftype (llama.h)
NEEDS_IMATRIX = ["IQ3_XXS", "IQ3_XS"]
_quiet_log = lc.llama_log_callback(lambda level, text, user: None)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("quantize_iq3")


@pytest.fixture(scope="module")
def synth_f16(ridge_bin, work):
    path = work / "synth.f16.gguf"
    subprocess.run([ridge_bin, "synth", "--n-embd", "256", "--n-layer", "8", "--n-head", "4", "--n-head-kv", "2",
                    "--n-ff", "512", "--n-vocab", "300", "-t", "F16", "--seed", "7", "-o", str(path), "-f"],
                   check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def synth_imatrix(ridge_bin, synth_f16, work):
    out = work / "synth.imatrix.gguf"
    subprocess.run([ridge_bin, "imatrix", "-m", str(synth_f16), "-f", TEXT, "-o", str(out), "-c", "64", "--chunks", "2",
                    "-t", "2"], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def ridge_quantize(ridge_bin, work):
    """ridge's artifact of (type, imatrix), made once for the module's tests."""
    made = {}

    def quantize(src, type_name, imatrix=None):
        key = (type_name, str(imatrix))
        if key not in made:
            dst = work / f"ridge.{type_name}.{'imatrix' if imatrix else 'plain'}.gguf"
            extra = ["--imatrix", str(imatrix)] if imatrix else []
            subprocess.run([ridge_bin, "quantize", str(src), str(dst), "--type", type_name, "-q", "-t", "2", *extra],
                           check=True, capture_output=True)
            made[key] = dst
        return made[key]
    return quantize


def imatrix_as_llama_quantize_reads_it(path):
    """llama-quantize's view of an imatrix GGUF: per tensor in_sum2 / count (1 where the count is 0), the
    first dataset and the chunk count."""
    r = gguf.GGUFReader(str(path))
    t = {x.name: np.asarray(x.data, dtype=np.float32).reshape(-1) for x in r.tensors}
    entries = {}
    for name in t:
        if name.endswith(".in_sum2"):
            base = name[:-len(".in_sum2")]
            count = np.float32(t[base + ".counts"][0])
            entries[base] = (t[name] / count).astype(np.float32) if count > 0 else np.ones_like(t[name])
    datasets = r.fields["imatrix.datasets"]
    dataset = bytes(datasets.parts[datasets.data[0]]).decode() if datasets.data else None
    chunks = int(r.fields["imatrix.chunk_count"].parts[-1][0])
    return entries, dataset, chunks


def llama_cpp_quantize(src, dst, type_name, imatrix_path=None):
    """llama_model_quantize as llama-quantize calls it (with --imatrix: the importance and its four keys)."""
    lc.llama_log_set(_quiet_log, ctypes.c_void_p(0))
    params = lc.llama_model_quantize_default_params()
    params.ftype = FTYPES[type_name]
    params.nthread = 2
    keep = []  # what the pointers in params refer to
    if imatrix_path is not None:
        entries, dataset, chunks = imatrix_as_llama_quantize_reads_it(imatrix_path)
        data = (lc.llama_model_imatrix_data * (len(entries) + 1))()
        for i, (name, values) in enumerate(entries.items()):
            keep += [name.encode(), values]
            data[i].name = keep[-2]
            data[i].data = values.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            data[i].size = values.size
        overrides = [("quantize.imatrix.file", lc.LLAMA_KV_OVERRIDE_TYPE_STR, str(imatrix_path)),
                     ("quantize.imatrix.dataset", lc.LLAMA_KV_OVERRIDE_TYPE_STR, dataset),
                     ("quantize.imatrix.entries_count", lc.LLAMA_KV_OVERRIDE_TYPE_INT, len(entries)),
                     ("quantize.imatrix.chunks_count", lc.LLAMA_KV_OVERRIDE_TYPE_INT, chunks)]
        overrides = [o for o in overrides if o[2] is not None]
        kvs = (lc.llama_model_kv_override * (len(overrides) + 1))()
        for kv, (key, tag, value) in zip(kvs, overrides):
            kv.key = key.encode()
            kv.tag = tag
            if tag == lc.LLAMA_KV_OVERRIDE_TYPE_STR:
                kv.value.val_str = value.encode()
            else:
                kv.value.val_i64 = value
        keep += [data, kvs]
        params.imatrix = data
        params.kv_overrides = kvs
    return lc.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))


@pytest.mark.parametrize("type_name", ["IQ3_S", "IQ3_M"])
def test_without_imatrix_matches_llama_quantize(ridge_quantize, synth_f16, tmp_path, type_name):
    ours, theirs = ridge_quantize(synth_f16, type_name), tmp_path / "llama.gguf"
    assert llama_cpp_quantize(synth_f16, theirs, type_name) == 0
    assert_identical(ours, theirs)
    types = tensor_types(ours)
    assert "IQ3_S" in types and "Q6_K" in types  # the output
    assert ("Q4_K" in types) == (type_name == "IQ3_M")  # IQ3_M: attn_v, attn_output, the first ffn_down


@pytest.mark.parametrize("type_name", NEEDS_IMATRIX)
def test_without_imatrix_both_refuse(ridge_bin, synth_f16, tmp_path, type_name):
    assert llama_cpp_quantize(synth_f16, tmp_path / "llama.gguf", type_name) != 0
    r = subprocess.run([ridge_bin, "quantize", str(synth_f16), str(tmp_path / "ridge.gguf"), "--type", type_name, "-q"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "importance matrix" in r.stderr, r.stderr
    assert not (tmp_path / "ridge.gguf").exists()


@pytest.mark.parametrize("type_name", TYPES)
def test_with_imatrix_matches_llama_quantize(ridge_quantize, synth_f16, synth_imatrix, tmp_path, type_name):
    ours, theirs = ridge_quantize(synth_f16, type_name, synth_imatrix), tmp_path / "llama.gguf"
    assert llama_cpp_quantize(synth_f16, theirs, type_name, synth_imatrix) == 0
    assert_identical(ours, theirs)
    types = tensor_types(ours)
    if type_name in NEEDS_IMATRIX:
        assert "IQ3_XXS" in types  # IQ3_XS: attn_q/k and middle ffn_gate/up; IQ3_XXS: most of it
    if type_name == "IQ3_XXS":
        assert "IQ2_S" in types and "Q5_K" in types  # attn_q/k; the output


# Loose bounds, about twice what was measured (printed with -s): IQ3_XXS 0.42, IQ3_XS 0.36, IQ3_S 0.34,
# IQ3_M 0.25 (a random model's logits, each weight rounded to ~3 bits; unrelated logits would be ~1.4).
SYNTH_RMS = {"IQ3_XXS": 0.8, "IQ3_XS": 0.7, "IQ3_S": 0.7, "IQ3_M": 0.5}


@pytest.mark.parametrize("type_name", TYPES)
def test_ridge_runs_its_artifact_near_the_f16_source(ridge_bin, ridge_quantize, synth_f16, synth_imatrix, tmp_path,
                                                     type_name):
    out = ridge_quantize(synth_f16, type_name, synth_imatrix)
    ids = [5, 17, 200, 31, 9, 64, 150, 3]
    base, got = prompt_logits(ridge_bin, synth_f16, ids, tmp_path), prompt_logits(ridge_bin, out, ids, tmp_path)
    err = relative_rms(got[-1], base[-1])
    print(f"synthetic {type_name} (imatrix): relative RMS of the next-token logits {err:.4f}")
    assert err < SYNTH_RMS[type_name]
