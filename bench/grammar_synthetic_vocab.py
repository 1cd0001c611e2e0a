#!/usr/bin/env python3
"""A synthetic ~50k-token byte-level BPE vocabulary in the --vocab format of bench/grammar_anchors.py,
for developing the anchors without a model file:

    {"tokens": ["<hex of token 0's bytes>", ..., "" for special tokens], "eos": <id>}

ridge writes the same format from a real model with `ridge grammar --dump-vocab -m MODEL`.

It trains a byte-level BPE with the `tokenizers` package (a benchmark-only dependency) on text found
on this machine: the Python standard library's sources and docs (code and English prose) plus JSON
instances of the schema corpus (so that tokens like '{"', '":"' and '"},{"' exist, as they do in
real model vocabularies). Nothing is downloaded. The result is deterministic for a given Python
installation and corpus.

    pip install tokenizers
    python3 bench/grammar_synthetic_vocab.py -o synth_vocab.json
"""
import argparse
import glob
import json
import os
import random
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "grammar_corpus")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]


def training_text(max_bytes):
    """Python stdlib sources (sorted, so runs agree), then the corpus instances, capped at max_bytes."""
    chunks, total = [], 0
    stdlib = sysconfig.get_paths()["stdlib"]
    files = sorted(f for f in glob.glob(os.path.join(stdlib, "**", "*.py"), recursive=True)
                   if "site-packages" not in f and "dist-packages" not in f)
    budget = max_bytes * 3 // 4  # leave a quarter for JSON
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                t = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        chunks.append(t)
        total += len(t)
        if total >= budget:
            break
    sys.path.insert(0, CORPUS)
    from check_corpus import generate  # instance generator of the corpus checker
    rng = random.Random(7)
    schemas = sorted(glob.glob(os.path.join(CORPUS, "schemas", "*.json")))
    while total < max_bytes and schemas:
        for path in schemas:
            with open(path) as fh:
                doc = json.load(fh)
            try:
                inst = generate(doc, rng)
            except (ValueError, RecursionError):
                continue
            # compact and pretty forms both occur in model output
            t = json.dumps(inst, separators=(",", ":")) + "\n" + json.dumps(inst, indent=2) + "\n"
            chunks.append(t)
            total += len(t)
            if total >= max_bytes:
                break
    return chunks


def byte_decoder():
    # Inverse of GPT-2's bytes_to_unicode, which byte-level BPE uses to spell bytes as characters.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--vocab-size", type=int, default=50000)
    ap.add_argument("--text-mb", type=float, default=30.0, help="training text size")
    args = ap.parse_args()

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=args.vocab_size - len(SPECIALS), min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    text = training_text(int(args.text_mb * 1e6))
    tok.train_from_iterator(text, trainer=trainer)

    dec = byte_decoder()
    vocab = tok.get_vocab()  # piece -> id, ids 0..n-1
    pieces = sorted(vocab, key=vocab.get)
    tokens = [bytes(dec[c] for c in p).hex() for p in pieces]
    eos = len(tokens)
    tokens += [""] * len(SPECIALS)  # special tokens have no bytes; the first is end of sequence
    assert len(set(tokens[:eos])) == eos, "duplicate token bytes"
    with open(args.output, "w") as f:
        json.dump({"tokens": tokens, "eos": eos, "source": "synthetic byte-level BPE (bench/grammar_synthetic_vocab.py)",
                   "special": {str(eos + i): s for i, s in enumerate(SPECIALS)}}, f)
    lens = [len(t) // 2 for t in tokens[:eos]]
    print(f"{len(tokens)} tokens ({eos} byte tokens, {len(SPECIALS)} special, eos {eos}); "
          f"mean {sum(lens) / len(lens):.1f} bytes, longest {max(lens)}; trained on {sum(map(len, text)) / 1e6:.1f} MB -> {args.output}")


if __name__ == "__main__":
    main()
