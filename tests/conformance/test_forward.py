"""ridge's forward pass against llama.cpp on the default model.

Pass marks, for ridge's own kernels: mean KL(llama.cpp || ridge) of the next-token distributions
below 0.01 nats over at least 500 positions of 5 prompts, top-1 agreement of at least 97%, and greedy
64-token continuations that leave llama.cpp's only at near-ties. With --numerics ggml (llama.cpp's
arithmetic repeated, model/llama_mirror.h): logits equal to the bit at every position, and every
greedy 64-token continuation identical.
"""
import json
import subprocess
import tempfile

import numpy as np
import pytest

from llama_oracle import LlamaOracle

PROMPTS = [
    "The history of the Roman Empire spans more than a thousand years. It began when Augustus became the first "
    "emperor in 27 BC, after a century of civil wars that had torn the Republic apart. Over the following centuries "
    "the empire expanded across the Mediterranean, building roads, aqueducts and cities whose ruins still stand. "
    "Historians often divide its story into the Principate and the Dominate, and they argue about why the western "
    "half fell in 476 while the eastern half survived for another thousand years.",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    a, b = 0, 1\n    for _ in range(n):\n"
    "        a, b = b, a + b\n    return a\n\n\ndef is_prime(n):\n    if n < 2:\n        return False\n"
    "    for d in range(2, int(n ** 0.5) + 1):\n        if n % d == 0:\n            return False\n    return True\n\n\n"
    "if __name__ == \"__main__\":\n    primes = [n for n in range(100) if is_prime(n)]\n    print(primes)\n",
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    "<|im_start|>user\nExplain in simple terms why the sky is blue during the day and red at sunset. Keep the "
    "explanation short, but mention Rayleigh scattering and the path length of sunlight through the atmosphere."
    "<|im_end|>\n<|im_start|>assistant\nThe sky looks blue because sunlight is scattered by the molecules of the air, "
    "and shorter wavelengths scatter much more strongly than longer ones.",
    "Recipe for a simple loaf of bread: 500 g of flour, 350 ml of warm water, 10 g of salt and 7 g of dried yeast. "
    "Mix the flour and the salt in a large bowl, dissolve the yeast in the water, then pour it in and knead the dough "
    "for ten minutes until it is smooth and elastic. Let it rise for an hour, shape it, let it rise again, and bake "
    "it at 220 degrees for about thirty-five minutes, until the crust is golden and the loaf sounds hollow.",
    "Q: A train leaves the station at 3:15 pm and travels 180 kilometres at an average speed of 72 km/h. When does "
    "it arrive?\nA: The journey takes 180 / 72 = 2.5 hours, so the train arrives at 5:45 pm.\n\nQ: A shop sells "
    "pencils in packs of 12. A school needs 1,000 pencils. How many packs must it buy, and how many pencils are left "
    "over?\nA: 1,000 / 12 = 83.33, so the school needs 84 packs, which hold 1,008 pencils, leaving 8 spare.",
]


# llama.cpp's threads for the references here and in the files that import this: one gives the same bits as two
# (measured: every logit of PROMPTS and every greedy continuation of GREEDY_PROMPTS) and never spins at ggml's
# per-operation barriers for a thread that another process holds off the core, as ctest -j 2 always does: beside
# one busy process, measured, PROMPTS' logits took 4.2-4.6 s on one thread and 10-22 s on two, greedy
# continuations five times longer on two.
ORACLE_THREADS = 1


@pytest.fixture(scope="module")
def oracle(default_model):
    o = LlamaOracle(default_model, flash_attn=False, n_threads=ORACLE_THREADS)
    yield o
    o.close()


class Reference:
    """llama.cpp's answers, each computed once for the whole file: token ids, every position's logits, and
    greedy 64-token continuations."""

    def __init__(self, oracle):
        self.oracle = oracle
        self._ids, self._logits, self._greedy = {}, {}, {}

    def ids(self, text):
        if text not in self._ids:
            self._ids[text] = tokenize(self.oracle, text)
        return self._ids[text]

    def logits(self, text):
        if text not in self._logits:
            self._logits[text] = self.oracle.logits(self.ids(text))
        return self._logits[text]

    def greedy(self, text):
        if text not in self._greedy:
            self._greedy[text] = self.oracle.greedy(self.ids(text), 64)
        return self._greedy[text]


@pytest.fixture(scope="module")
def reference(oracle):
    return Reference(oracle)


def tokenize(oracle, text):
    import llama_cpp as lc

    data = text.encode()
    buf = (lc.llama_token * 4096)()
    n = lc.llama_tokenize(oracle.vocab, data, len(data), buf, 4096, True, True)
    assert n > 0
    return list(buf[:n])


def ridge_logits(ridge_bin, model, ids, numerics="native"):
    with tempfile.NamedTemporaryFile(suffix=".bin") as out:
        subprocess.run([ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, ids)), "-o", out.name,
                        "--numerics", numerics], check=True, capture_output=True)
        return np.fromfile(out.name, dtype=np.float32).reshape(len(ids), -1).astype(np.float64)


def ridge_greedy(ridge_bin, model, ids, numerics="native"):
    run = subprocess.run([ridge_bin, "run", "-m", model, "--tokens", ",".join(map(str, ids)), "-n", "64",
                          "--ignore-eos", "--json", "--numerics", numerics], check=True, capture_output=True, text=True)
    return json.loads(run.stdout)["tokens"]


def log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def test_next_token_distributions_match_llama_cpp(ridge_bin, default_model, reference):
    kls, agree, positions = [], 0, 0
    for text in PROMPTS:
        ids = reference.ids(text)
        ref = log_softmax(reference.logits(text))
        got = log_softmax(ridge_logits(ridge_bin, default_model, ids))
        kl = (np.exp(ref) * (ref - got)).sum(axis=1)
        kls.extend(kl.tolist())
        agree += int((ref.argmax(axis=1) == got.argmax(axis=1)).sum())
        positions += len(ids)
    mean_kl, top1 = float(np.mean(kls)), agree / positions
    print(f"\npositions={positions} prompts={len(PROMPTS)} mean_kl={mean_kl:.6f} max_kl={max(kls):.6f} top1={top1:.4f}")
    assert positions >= 500
    assert mean_kl < 0.01
    assert top1 >= 0.97


def test_ggml_numerics_reproduce_llama_cpp_logits_bit_for_bit(ridge_bin, default_model, reference):
    """The prompt pass (llama.cpp's batched path) with llama.cpp's arithmetic: the same f32 logits."""
    rows, equal = 0, 0
    for text in PROMPTS:
        ids = reference.ids(text)
        ref = reference.logits(text).astype(np.float32)
        got = ridge_logits(ridge_bin, default_model, ids, "ggml").astype(np.float32)
        equal += int((ref == got).all(axis=1).sum())
        rows += len(ids)
    print(f"\n--numerics ggml: {equal}/{rows} positions with every logit bit-identical to llama.cpp's")
    assert equal == rows


# Short prompts whose greedy continuations are checked in addition to PROMPTS.
GREEDY_PROMPTS = PROMPTS + [
    "The capital of France is",
    "Once upon a time, in a small village at the edge of a great forest, there lived a young girl named",
    "import numpy as np\n\ndef softmax(x):\n",
    "The three primary colors are",
    "<|im_start|>user\nWhat is the boiling point of water at sea level?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nList three fruits that are red.<|im_end|>\n<|im_start|>assistant\n",
    "Photosynthesis is the process by which plants",
    "The quick brown fox jumps over the lazy dog. The quick brown fox",
    "#include <stdio.h>\n\nint main(void) {\n",
    "Water is made of two elements:",
    "In mathematics, a prime number is",
    "<|im_start|>user\nTranslate 'good morning' into French.<|im_end|>\n<|im_start|>assistant\n",
]


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def tie_gap(oracle, ids, ref, other):
    """llama.cpp's logit margin for its own token over `other`'s at their first difference (None: same)."""
    k = first_difference(ref, other)
    if k is None:
        return None
    last = oracle.logits(ids + ref[:k])[-1]
    return float(last[ref[k]] - last[other[k]])


def test_greedy_continuations_match_llama_cpp(ridge_bin, default_model, oracle, reference):
    """Greedy 64-token continuations against llama.cpp's default path (f16 KV, no flash attention).

    A Q4_1 model with int8 activations has many near-ties (top-2 logits within 0.1), so a continuation
    flips on any rounding difference, and how many of 17 continuations stay identical to the end swings
    with arithmetic that is equally exact (measured 2 to 7 of 17 for ridge's kernel variants; llama.cpp
    reproduces itself with its flash-attention / f32-KV path on only 4). What a real error shows, and a
    rounding difference does not, is a divergence where llama.cpp clearly prefers its token: so every
    continuation must agree with llama.cpp up to a step where llama.cpp's own top-two logits are within
    a near-tie margin, the same kind of step where llama.cpp's alternative path departs from it (that
    path's continuations are decoded beside a failure, to show what rounding alone moves).
    """
    ridge_matches, report, ridge_gaps = 0, [], []
    for text in GREEDY_PROMPTS:
        ids, ref = reference.ids(text), reference.greedy(text)
        got = ridge_greedy(ridge_bin, default_model, ids)
        ridge_matches += got == ref
        report.append(first_difference(ref, got))
        ridge_gaps.append(tie_gap(oracle, ids, ref, got))
    n = len(GREEDY_PROMPTS)
    print(f"\ngreedy 64-token continuations identical to llama.cpp: ridge {ridge_matches}/{n} "
          f"(first five prompts: {sum(r is None for r in report[:5])}/5)")
    print(f"first differing step (None = identical): {report}")
    print("llama.cpp's logit margin where ridge departs: " + format_gaps(ridge_gaps))
    worst = max((abs(g) for g in ridge_gaps if g is not None), default=0.0)
    if worst > NEAR_TIE:
        print(alternative_path(default_model, oracle, reference))
    assert worst <= NEAR_TIE, f"ridge departs from llama.cpp where llama.cpp prefers its token by {worst:.3f}"


def format_gaps(gaps):
    return ", ".join("-" if g is None else f"{g:.3f}" for g in gaps)


def alternative_path(default_model, oracle, reference):
    """llama.cpp's flash-attention / f32-KV path against its default path on GREEDY_PROMPTS, as a report."""
    alternative = LlamaOracle(default_model, flash_attn=True, kv_type=0, n_threads=ORACLE_THREADS)
    firsts, gaps = [], []
    try:
        for text in GREEDY_PROMPTS:
            ids, ref = reference.ids(text), reference.greedy(text)
            alt = alternative.greedy(ids, 64)
            firsts.append(first_difference(ref, alt))
            gaps.append(tie_gap(oracle, ids, ref, alt))
    finally:
        alternative.close()
    return (f"llama.cpp's flash-attention path: {sum(f is None for f in firsts)}/{len(firsts)} continuations "
            f"identical to its default path; first differing steps {firsts}; its margins there: {format_gaps(gaps)}")


# A near-tie, in logits. Measured: llama.cpp's flash-attention path departs from its default path at
# margins up to 0.37, and its batched logits (which the margins are read from) rank the two tokens
# the other way round than its one-token-at-a-time continuation at margins up to 0.24 (negative
# margins above). ridge's kernels departed at up to 0.25.
NEAR_TIE = 0.5


def test_ggml_numerics_reproduce_llama_cpp_greedy_continuations(ridge_bin, default_model, reference):
    """The one-token decode steps (llama.cpp's vector path) too: every 64-token continuation identical."""
    report = []
    for text in GREEDY_PROMPTS:
        ids, ref = reference.ids(text), reference.greedy(text)
        got = ridge_greedy(ridge_bin, default_model, ids, "ggml")
        report.append(first_difference(ref, got))
    same = sum(r is None for r in report)
    print(f"\n--numerics ggml: greedy 64-token continuations identical to llama.cpp: {same}/{len(report)} "
          f"(first five prompts: {sum(r is None for r in report[:5])}/5); first differing steps: {report}")
    assert same == len(report)
