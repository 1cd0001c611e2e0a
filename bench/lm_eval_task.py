"""lm-evaluation-harness against an OpenAI-compatible /v1/completions server on a task defined on a
local file (no hub), and the same task's log-likelihoods from llama.cpp (llama-cpp-python, logits of
every position) on the same GGUF and the same tokens. Shared by bench/lm_eval_side_by_side.py and
tests/conformance/test_completions_scoring.py.

The task: tests/conformance/data/capitals.jsonl, 50 four-way multiple-choice questions ("What is the
capital of X?"), scored by the log-likelihood of each choice after the question (lm_eval's acc)."""
import json
import os
import pathlib
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "conformance" / "data" / "capitals.jsonl"
TASK = "ridge_capitals"
TEXT = "Question: What is the capital of {{country}}?\nAnswer:"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def hf_tokenizer_dir(gguf_path, into):
    """A Hugging Face tokenizer directory made from the GGUF's own vocabulary (what lm_eval loads)."""
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(pathlib.Path(gguf_path).parent), gguf_file=pathlib.Path(gguf_path).name)
    tok.save_pretrained(into)
    return into


def task_dir(into):
    (pathlib.Path(into) / f"{TASK}.yaml").write_text(f"""task: {TASK}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {DATA}
test_split: test
output_type: multiple_choice
doc_to_text: "{TEXT.replace(chr(10), chr(92) + 'n')}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: acc
""")
    return into


def run_lm_eval(base_url, model, tokenizer_dir, limit=None, batch_size=1):
    """lm_eval's local-completions model against the server: (acc, [per-item log-likelihoods], seconds, n_requests)."""
    import lm_eval
    from lm_eval.tasks import TaskManager
    with tempfile.TemporaryDirectory(prefix="ridge-lm-eval-") as tmp:
        manager = TaskManager(include_path=task_dir(tmp))
        t0 = time.perf_counter()
        out = lm_eval.simple_evaluate(
            model="local-completions",
            model_args=dict(model=model, base_url=f"{base_url}/v1/completions", tokenizer_backend="huggingface",
                            tokenizer=tokenizer_dir, tokenized_requests=True, num_concurrent=1, max_retries=1,
                            batch_size=batch_size),
            tasks=[TASK], task_manager=manager, limit=limit, log_samples=True, verbosity="ERROR")
        seconds = time.perf_counter() - t0
    samples = out["samples"][TASK]
    logliks = [[float(r[0][0]) for r in s["resps"]] for s in sorted(samples, key=lambda s: s["doc_id"])]
    docs = [(s["doc"], s["arguments"]) for s in sorted(samples, key=lambda s: s["doc_id"])]
    acc = out["results"][TASK]["acc,none"]
    return acc, logliks, seconds, sum(len(x) for x in logliks), docs


def encode_pair(tokenizer, context, continuation):
    """lm_eval's split: trailing spaces of the context go to the continuation; the continuation's tokens
    are those of context + continuation after the context's."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        continuation = context[-spaces:] + continuation
        context = context[:-spaces]
    whole = tokenizer(context + continuation, add_special_tokens=False)["input_ids"]
    head = tokenizer(context, add_special_tokens=False)["input_ids"]
    return head, whole[len(head):]


def llama_cpp_logliks(gguf_path, tokenizer_dir, docs, threads=2):
    """Each (context, continuation)'s log-likelihood under llama.cpp: (per-item lists, accuracy, seconds)."""
    import numpy as np
    from llama_cpp import Llama
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    llm = Llama(model_path=str(gguf_path), logits_all=True, n_ctx=512, n_threads=threads, n_batch=512, verbose=False)
    out, correct = [], 0
    t0 = time.perf_counter()
    for doc, arguments in docs:
        scores = []
        for context, continuation in [tuple(a) for a in arguments]:
            head, tail = encode_pair(tokenizer, context, continuation)
            tokens = head + tail
            llm.reset()
            llm.eval(tokens)
            logits = np.array(llm.scores[:len(tokens)], dtype=np.float64)
            total = 0.0
            for i in range(len(head), len(tokens)):
                row = logits[i - 1]
                top = row.max()
                total += row[tokens[i]] - (top + np.log(np.exp(row - top).sum()))
            scores.append(float(total))
        correct += int(int(np.argmax(scores)) == int(doc["answer"]))
        out.append(scores)
    return out, correct / len(docs), time.perf_counter() - t0
