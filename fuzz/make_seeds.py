"""Writes the seed inputs of fuzz/corpus/gguf_fuzz: small valid GGUF files (every metadata value type, every
tensor type ridge decodes) written by the gguf package. libFuzzer mutates from these.
Usage: python3 fuzz/make_seeds.py fuzz/corpus/gguf_fuzz"""
import os
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES


def write(path, build):
    w = gguf.GGUFWriter(path, "llama")
    build(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def metadata(w):
    w.add_uint8("t.u8", 7)
    w.add_int8("t.i8", -7)
    w.add_uint16("t.u16", 700)
    w.add_int16("t.i16", -700)
    w.add_uint32("t.u32", 70000)
    w.add_int32("t.i32", -70000)
    w.add_float32("t.f32", 0.5)
    w.add_bool("t.bool", True)
    w.add_string("t.string", "seed")
    w.add_array("t.array", [1, 2, 3])
    w.add_array("t.strings", ["a", "b"])
    w.add_uint64("t.u64", 1 << 40)
    w.add_int64("t.i64", -(1 << 40))
    w.add_float64("t.f64", 0.25)
    w.add_block_count(1)
    w.add_context_length(64)


def tensors(types):
    def build(w):
        rng = np.random.default_rng(0)
        for qtype in types:
            block, size = GGML_QUANT_SIZES[qtype]
            raw = rng.integers(0, 256, size=(2, size), dtype=np.uint8)
            if qtype == T.F32:
                w.add_tensor(qtype.name, np.arange(8, dtype=np.float32).reshape(2, 4))
            elif qtype == T.F16:
                w.add_tensor(qtype.name, np.arange(8, dtype=np.float16).reshape(2, 4))
            else:
                raw[:, :2] = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)
                w.add_tensor(qtype.name, raw, raw_dtype=qtype)
    return build


def main(out):
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "seed_metadata.gguf"), metadata)
    write(os.path.join(out, "seed_plain.gguf"), tensors([T.F32, T.F16, T.BF16]))
    write(os.path.join(out, "seed_legacy.gguf"), tensors([T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]))
    for qtype in [T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_K]:
        write(os.path.join(out, f"seed_{qtype.name.lower()}.gguf"), tensors([qtype]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "gguf_fuzz"))
