#!/usr/bin/env python3
"""sentence-transformers as the reference for ridge's embeddings: the model's whole pipeline as its
own files describe it (modules.json: Transformer, Pooling, Dense..., Normalize), on the CPU, offline.

    python3 tests/conformance/st_reference.py --model DIR --input texts.jsonl --output vectors.jsonl \\
        [--prompt-name query] [--batch-size 32] [--threads 2]

DIR is a model directory (python3 tools/fetch_model.py all-minilm-l6-v2 | embeddinggemma-300m prints
it). Each input line is a JSON string or an object {"text": ...}; each output line is
{"index": i, "embedding": [...]} (float32 values, written exactly). As a module:

    from st_reference import encode
    vectors = encode(model_dir, ["a text", ...], prompt_name="query")   # numpy float32, [n, dim]

Task prompts. all-MiniLM-L6-v2 has none of its own (sentence-transformers 5 gives it empty "query"
and "document" prompts; max_seq_length 256: longer texts are truncated, as ridge must do, although its
tokenizer.json says 128). EmbeddingGemma-300M (config_sentence_transformers.json, default_prompt_name
null, so no prompt unless one is named; max_seq_length 2048) has these, prepended to the text:
    query, Retrieval, Retrieval-query, Reranking, BitextMining   "task: search result | query: "
    document, Retrieval-document                                 "title: none | text: "
    Clustering                                                   "task: clustering | query: "
    Classification, MultilabelClassification                     "task: classification | query: "
    InstructionRetrieval                                         "task: code retrieval | query: "
    PairClassification, STS                                      "task: sentence similarity | query: "
    Summarization                                                "task: summarization | query: "
With include_prompt true in its 1_Pooling config, the prompt's tokens are part of the mean.
"""
import argparse
import json
import os
import sys

# Never reach for a hub: everything is in the model directory.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_MODELS = {}


def load(model_dir, threads=None):
    """The SentenceTransformer of `model_dir` (cached per directory), on the CPU."""
    import torch
    if threads:
        torch.set_num_threads(threads)
    from sentence_transformers import SentenceTransformer
    key = os.path.realpath(model_dir)
    if not os.path.isfile(os.path.join(key, "modules.json")):
        raise FileNotFoundError(f"{model_dir} is not a sentence-transformers model directory (no modules.json)")
    if key not in _MODELS:
        _MODELS[key] = SentenceTransformer(key, device="cpu", local_files_only=True)
    return _MODELS[key]


def prompts(model_dir):
    """The model's task prompts: {name: text} (empty for a model without any)."""
    return dict(load(model_dir).prompts or {})


def encode(model_dir, texts, prompt_name=None, batch_size=32, threads=None, prompt=None):
    """The reference embeddings of `texts` as a float32 numpy array [len(texts), dim]."""
    import numpy as np
    import torch
    model = load(model_dir, threads)
    kwargs = {}
    if prompt_name is not None:
        if prompt_name not in (model.prompts or {}):
            raise ValueError(f"{model_dir} has no prompt {prompt_name!r}; it has {sorted(model.prompts or {})}")
        kwargs["prompt_name"] = prompt_name
    if prompt is not None:
        kwargs["prompt"] = prompt
    with torch.inference_mode():
        out = model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                           show_progress_bar=False, **kwargs)
    return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)


def read_texts(path):
    texts = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip("\r\n"):
                continue
            item = json.loads(line)
            if isinstance(item, dict):
                item = item.get("text")
            if not isinstance(item, str):
                sys.exit(f"error: {path}:{n}: expected a JSON string or an object with a \"text\" string")
            texts.append(item)
    return texts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a model directory with modules.json")
    ap.add_argument("--input", required=True, help="JSON lines: strings or {\"text\": ...}")
    ap.add_argument("--output", required=True, help="JSON lines {\"index\": i, \"embedding\": [...]} ('-': stdout)")
    ap.add_argument("--prompt-name", help="one of the model's task prompts (EmbeddingGemma: query, document, STS, ...)")
    ap.add_argument("--prompt", help="a literal prompt prepended to every text instead")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    args = ap.parse_args(argv)
    texts = read_texts(args.input)
    vectors = encode(args.model, texts, prompt_name=args.prompt_name, batch_size=args.batch_size,
                     threads=args.threads, prompt=args.prompt)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        for i, row in enumerate(vectors):
            # float() of a float32 is exact, and json writes the shortest text that reads back to it.
            out.write(json.dumps({"index": i, "embedding": [float(x) for x in row]}) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
