#!/usr/bin/env python3
"""Writes a Hugging Face tokenizer directory (tokenizer.json, tokenizer_config.json,
special_tokens_map.json) from a GGUF's tokenizer metadata, through transformers' own GGUF
conversion, so tests can compare ridge's tokenizer.json reader against the `tokenizers` package on
real vocabularies.

    python3 tools/gguf_tokenizer_to_hf.py MODEL.gguf OUT_DIR

Library use: write_hf_tokenizer(gguf_path, out_dir) -> out_dir.
"""
import argparse
import os
import pathlib
import sys


def write_hf_tokenizer(gguf_path, out_dir):
    """Builds transformers' fast tokenizer from the GGUF and saves it under out_dir; returns out_dir."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers import AutoTokenizer  # imported here: slow, and only this function needs it

    gguf_path = pathlib.Path(gguf_path).resolve()
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    tok.save_pretrained(str(out_dir))
    return out_dir


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", help="GGUF file (a vocab-only one is enough)")
    parser.add_argument("out_dir", help="directory to write tokenizer.json and friends into")
    args = parser.parse_args(argv)
    print(write_hf_tokenizer(args.gguf, args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
