"""ridge's reference quantizers give the same bytes as the gguf package's (ggml's reference
quantize_row_*_ref in NumPy).

`ridge synth` draws each row's f32 values from (seed, tensor, row) and quantizes them, so the same
seed written as F32 and as a block type gives a quantizer's input and ridge's output: the test
quantizes the F32 file's rows with the gguf package and compares them byte for byte.
"""
import subprocess

import gguf
import numpy as np
import pytest

from test_dequant import nvfp4_quantize

SHAPE = ["--n-embd", "256", "--n-layer", "1", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "512",
         "--n-vocab", "300"]
TYPES = ["F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "MXFP4", "NVFP4"]


def synth(ridge_bin, path, type_name, seed=11):
    subprocess.run([ridge_bin, "synth", *SHAPE, "-t", type_name, "--seed", str(seed), "-o", str(path), "-f"],
                   check=True, capture_output=True)
    return {t.name: t for t in gguf.GGUFReader(str(path)).tensors}


@pytest.fixture(scope="module")
def f32_tensors(ridge_bin, tmp_path_factory):
    return synth(ridge_bin, tmp_path_factory.mktemp("quantize") / "f32.gguf", "F32")


@pytest.mark.parametrize("type_name", TYPES)
def test_layer_matrices_match_the_gguf_package(ridge_bin, f32_tensors, tmp_path, type_name):
    tensors = synth(ridge_bin, tmp_path / f"{type_name}.gguf", type_name)
    qtype = gguf.GGMLQuantizationType[type_name]
    matrices = [n for n in tensors if n.startswith("blk.") and n.endswith(".weight") and "norm" not in n]
    assert len(matrices) == 7
    for name in matrices:
        assert tensors[name].tensor_type == qtype, name
        source = np.asarray(f32_tensors[name].data, dtype=np.float32)
        expected = (nvfp4_quantize(source) if type_name == "NVFP4" else
                    np.asarray(gguf.quants.quantize(source, qtype)).view(np.uint8).reshape(-1))
        actual = np.asarray(tensors[name].data).view(np.uint8).reshape(-1)
        assert actual.shape == expected.shape, name
        mismatched = np.flatnonzero(actual != expected)
        assert mismatched.size == 0, f"{name}: {mismatched.size} bytes differ, first at {mismatched[:5]}"
