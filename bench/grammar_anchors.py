#!/usr/bin/env python3
"""Anchor figures for ridge's grammar engine: runs the external structured-output engines llguidance
and xgrammar over the same corpus (bench/grammar_corpus: JSON Schemas, regexes, GBNF grammars) and
vocabulary, and reports per engine compile time and per-token mask time (p50/p99/max) on one core.

    pip install llguidance xgrammar jsonschema      # benchmark-only; ridge never imports them
    python3 bench/grammar_anchors.py --vocab VOCAB.json [--json out.json] [--dump-walks walks.jsonl]

VOCAB.json is {"tokens": [hex of each token's bytes, "" for special tokens], "eos": id}, as written by
`ridge bench grammar --dump-vocab FILE -m MODEL` (its "stop" list: the first is taken as eos), or by bench/grammar_synthetic_vocab.py for development.

For each grammar it times the compile (grammar text to a matcher ready for its first mask), then
walks it: at each step it computes the mask (timed on its own), picks one allowed token at random,
advances, and stops after --steps steps, at end of sequence, when the matcher stops, or when no token
is allowed. The random choice is allowed_ids_ascending[rng.randrange(count)] with rng seeded by
"<seed>:<kind>:<name>", the same for both engines, so two engines that agree on every mask make the
same walk.

--dump-walks writes one JSON line per engine and grammar: the walk's token ids and, per step, the
count of allowed tokens and the mask's hash. The hash is the first 16 hex digits of SHA-256 over the
mask packed as ceil(V/8) bytes, token i at bit (i % 8) of byte (i / 8), bits past V zero; ridge's
masks can be hashed the same way and compared step by step by replaying the token ids.

Schemas, regexes or grammars that an engine refuses are counted and listed, not fatal.
"""
import os

# One core: these must be set before the engines (and torch, which xgrammar imports) load.
for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse
import glob
import hashlib
import json
import random
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "grammar_corpus")
ENDS = ("max_steps", "eos", "dead", "rejected", "error")


# ---------------------------------------------------------------- inputs

def load_vocab(path):
    with open(path) as f:
        v = json.load(f)
    tokens = [bytes.fromhex(h) for h in v["tokens"]]
    eos = int(v["eos"]) if "eos" in v else int(v["stop"][0])  # ridge bench grammar --dump-vocab writes "stop"
    special = [i for i, t in enumerate(tokens) if not t]
    if eos not in special:
        sys.exit(f"{path}: eos {eos} should be a special token (empty bytes)")
    return tokens, eos, special


def load_corpus(kinds, name_filter, limit):
    items = []
    if "json" in kinds:
        for p in sorted(glob.glob(os.path.join(CORPUS, "schemas", "*.json"))):
            with open(p) as f:
                items.append(("json", os.path.basename(p)[:-5], f.read()))
    if "regex" in kinds:
        with open(os.path.join(CORPUS, "regex.txt")) as f:
            lines = [l.rstrip("\n") for l in f if l.strip()]  # one regex a line, no comments ('#' starts some)
        items += [("regex", f"regex_{i:02d}", rx) for i, rx in enumerate(lines)]
    if "gbnf" in kinds:
        for p in sorted(glob.glob(os.path.join(CORPUS, "gbnf", "*.gbnf"))):
            with open(p) as f:
                items.append(("gbnf", os.path.basename(p)[:-5], f.read()))
    if name_filter:
        items = [it for it in items if name_filter in it[1]]
    return items[:limit] if limit else items


def greedy_tokenizer(tokens):
    """Longest-match tokenization over the vocabulary: llguidance asks its Python tokenizer to
    tokenize forced text; the vocab file carries no merges, so greedy is what we can do."""
    by_bytes = {t: i for i, t in enumerate(tokens) if t}
    longest = max(len(t) for t in by_bytes)

    def tokenize(data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        out, i = [], 0
        while i < len(data):
            for n in range(min(longest, len(data) - i), 0, -1):
                tid = by_bytes.get(data[i:i + n])
                if tid is not None:
                    out.append(tid)
                    i += n
                    break
            else:
                raise ValueError(f"byte {data[i]} has no token")
        return out

    return tokenize


def mask_hash(words, vocab_size):
    packed = np.ascontiguousarray(words, dtype="<i4").view(np.uint8)[: (vocab_size + 7) // 8].copy()
    if vocab_size % 8:
        packed[-1] &= (1 << (vocab_size % 8)) - 1
    return hashlib.sha256(packed.tobytes()).hexdigest()[:16]


def allowed_ids(words, vocab_size):
    bits = np.unpackbits(np.ascontiguousarray(words, dtype="<i4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:vocab_size])


# ---------------------------------------------------------------- engines
# Each engine: setup(tokens, eos, special) once, then compile(kind, text) -> matcher, and on the
# matcher fill(mask) -> words, advance(token) -> bool, forced() -> how many bytes the grammar forces
# next (None for an engine whose masks do not narrow there).

class LLGuidance:
    name = "llguidance"

    def __init__(self, tokens, eos, special, args):
        import llguidance
        import llguidance.numpy as llnp
        self.llg, self.llnp = llguidance, llnp
        self.version = llguidance.__version__
        self.vocab_size = len(tokens)

        class Vocab:
            # The shape llguidance.TokenizerWrapper reads: tokens as bytes (special ones marked by a
            # leading 0xFF, as llguidance's own llama.cpp adapter does), eos, and a tokenize callable.
            def __init__(self):
                self.tokens = [t if t else b"\xff<|special_%d|>" % i for i, t in enumerate(tokens)]
                self.eos_token_id = eos
                self.bos_token_id = None
                self.special_token_ids = special
                self._tokenize = greedy_tokenizer(tokens)

            def __call__(self, data):
                return self._tokenize(data)

        self.tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(Vocab()), n_vocab=len(tokens), eos_token=eos)
        # Compact JSON: no free whitespace, separators "," and ":" (ridge's JSON Schema output).
        self.json_options = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"}

    def compile(self, kind, text):
        llg = self.llg
        if kind == "json":
            grammar = llg.LLMatcher.grammar_from_json_schema(text, overrides=self.json_options)
        elif kind == "regex":
            grammar = llg.LLMatcher.grammar_from_regex(text)
        else:
            grammar = llg.grammar_from("gbnf", text)
        m = llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if m.is_error():
            raise RuntimeError(m.get_error())
        return m

    def new_mask(self):
        return self.llnp.allocate_token_bitmask(1, self.vocab_size)

    def fill(self, m, mask):
        self.llnp.fill_next_token_bitmask(m, mask, 0)
        return mask[0]

    def advance(self, m, tok):
        return m.consume_token(int(tok))

    def forced(self, m):
        # Bytes the grammar forces next. llguidance then allows only the canonical tokenization of
        # them (a token that runs past them too), so its mask is narrower than the grammar's there.
        return len(m.compute_ff_bytes())

    def error(self, m):
        return m.get_error() if m.is_error() else ""


class XGrammar:
    name = "xgrammar"

    def __init__(self, tokens, eos, special, args):
        import xgrammar
        import torch
        torch.set_num_threads(1)
        self.xgr = xgrammar
        from importlib.metadata import version
        self.version = version("xgrammar")
        self.vocab_size = len(tokens)
        # RAW: token strings are the bytes themselves (no byte-level or byte-fallback encoding).
        self.info = xgrammar.TokenizerInfo(tokens, xgrammar.VocabType.RAW, vocab_size=len(tokens), stop_token_ids=[eos])
        # One thread, and no cache, so each compile is timed in full.
        self.compiler = xgrammar.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.strict = args.xgr_strict

    def compile(self, kind, text):
        c = self.compiler
        if kind == "json":
            # strict_mode=False keeps JSON Schema's meaning (additionalProperties defaults to true),
            # as llguidance does; any_whitespace=False with separators gives compact JSON.
            cg = c.compile_json_schema(text, any_whitespace=False, separators=(",", ":"), strict_mode=self.strict)
        elif kind == "regex":
            cg = c.compile_regex(text)
        else:
            cg = c.compile_grammar(text)
        return self.xgr.GrammarMatcher(cg)

    def new_mask(self):
        return self.xgr.allocate_token_bitmask(1, self.vocab_size)

    def fill(self, m, mask):
        m.fill_next_token_bitmask(mask, 0)
        return mask[0].numpy()

    def advance(self, m, tok):
        return m.accept_token(int(tok))

    def forced(self, m):
        return None  # xgrammar's masks allow every token consistent with the grammar

    def error(self, m):
        return ""


ENGINES = {"llguidance": LLGuidance, "xgrammar": XGrammar}


# ---------------------------------------------------------------- run

def walk(engine, m, kind, name, args, eos, special_set):
    rng = random.Random(f"{args.seed}:{kind}:{name}")
    mask = engine.new_mask()
    masks_ns, toks, hashes, counts, forced = [], [], [], [], []
    end, specials_allowed = "max_steps", 0
    for _ in range(args.steps):
        t0 = time.perf_counter_ns()
        words = engine.fill(m, mask)
        masks_ns.append(time.perf_counter_ns() - t0)
        ids = allowed_ids(words, engine.vocab_size)
        hashes.append(mask_hash(words, engine.vocab_size))
        counts.append(int(len(ids)))
        forced.append(engine.forced(m))  # after the timed mask, for the same state
        # special tokens other than eos have no bytes and should never be allowed
        specials_allowed += sum(1 for i in special_set if i != eos and (int(words[i >> 5]) >> (i & 31)) & 1)
        if len(ids) == 0:
            end = "dead"
            break
        tok = int(ids[rng.randrange(len(ids))])
        toks.append(tok)
        if tok == eos:
            engine.advance(m, tok)
            end = "eos"
            break
        if not engine.advance(m, tok):
            end = "rejected"  # the engine refused a token its own mask allowed
            break
        # A matcher that stopped (nothing but eos can follow) goes on to one more mask, which
        # should allow eos alone: both engines then end their walks the same way, at eos.
    return {"mask_ns": masks_ns, "tokens": toks, "hashes": hashes, "counts": counts, "forced": forced, "end": end,
            "specials_allowed": specials_allowed}


def stats(values, scale):
    if not values:
        return None
    a = np.asarray(values, dtype=np.float64) / scale
    return {"n": int(a.size), "p50": float(np.percentile(a, 50)), "p99": float(np.percentile(a, 99)),
            "max": float(a.max()), "mean": float(a.mean())}


def run_engine(cls, tokens, eos, special, items, args, dump):
    t0 = time.perf_counter_ns()
    engine = cls(tokens, eos, special, args)
    init_ms = (time.perf_counter_ns() - t0) / 1e6
    special_set = set(special)
    per_kind = {}
    per_item = []
    walks = {}
    for n, (kind, name, text) in enumerate(items):
        k = per_kind.setdefault(kind, {"items": 0, "refused": [], "compile_ns": [], "mask_ns": [], "first_mask_ns": [],
                                       "ends": {e: 0 for e in ENDS}, "specials_allowed": 0})
        k["items"] += 1
        t0 = time.perf_counter_ns()
        try:
            m = engine.compile(kind, text)
        except Exception as e:  # an engine refusing a grammar is a result, not a failure
            k["refused"].append({"name": name, "error": str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__})
            continue
        compile_ns = time.perf_counter_ns() - t0
        k["compile_ns"].append(compile_ns)
        try:
            w = walk(engine, m, kind, name, args, eos, special_set)
        except Exception as e:
            w = {"mask_ns": [], "tokens": [], "hashes": [], "counts": [], "forced": [], "end": "error", "specials_allowed": 0,
                 "error": str(e)[:300]}
        if w["end"] == "rejected":
            w["error"] = engine.error(m)
        k["mask_ns"] += w["mask_ns"]
        k["first_mask_ns"] += w["mask_ns"][:1]
        k["ends"][w["end"]] += 1
        k["specials_allowed"] += w["specials_allowed"]
        walks[(kind, name)] = w
        per_item.append({"kind": kind, "name": name, "compile_ms": compile_ns / 1e6, "steps": len(w["mask_ns"]),
                         "mask_us_p50": float(np.median(w["mask_ns"]) / 1e3) if w["mask_ns"] else None, "end": w["end"]})
        if dump:
            dump.write(json.dumps({"engine": engine.name, "kind": kind, "name": name, "tokens": w["tokens"],
                                   "allowed": w["counts"], "mask_hashes": w["hashes"], "forced_bytes": w["forced"],
                                   "end": w["end"]}) + "\n")
        if args.progress and (n + 1) % 50 == 0:
            print(f"  {engine.name}: {n + 1}/{len(items)}", file=sys.stderr)
    summary = {"version": engine.version, "tokenizer_init_ms": init_ms, "kinds": {}}
    everything = {"items": 0, "refused": 0, "compile_ns": [], "mask_ns": [], "first_mask_ns": [], "ends": {e: 0 for e in ENDS}}
    for kind, k in per_kind.items():
        summary["kinds"][kind] = {
            "items": k["items"], "refused_count": len(k["refused"]), "refused": k["refused"],
            "compile_ms": stats(k["compile_ns"], 1e6), "mask_us": stats(k["mask_ns"], 1e3), "first_mask_us": stats(k["first_mask_ns"], 1e3),
            "steps": len(k["mask_ns"]), "ends": k["ends"], "special_tokens_allowed": k["specials_allowed"]}
        everything["items"] += k["items"]
        everything["refused"] += len(k["refused"])
        for f in ("compile_ns", "mask_ns", "first_mask_ns"):
            everything[f] += k[f]
        for e in ENDS:
            everything["ends"][e] += k["ends"][e]
    summary["all"] = {"items": everything["items"], "refused_count": everything["refused"],
                      "compile_ms": stats(everything["compile_ns"], 1e6), "mask_us": stats(everything["mask_ns"], 1e3),
                      "first_mask_us": stats(everything["first_mask_ns"], 1e3), "steps": len(everything["mask_ns"]), "ends": everything["ends"]}
    summary["per_item"] = per_item
    return summary, walks


def agreement(llg, xgr):
    """Per grammar both engines walked: the step of the first differing mask, and whether llguidance
    had forced bytes there (its canonical-tokenization narrowing, by design) or not (a difference in
    what the grammar allows, worth a look)."""
    same, at_forced, at_free = 0, {}, {}
    for key in sorted(set(llg) & set(xgr)):
        ha, hb = llg[key]["hashes"], xgr[key]["hashes"]
        d = next((i for i, (x, y) in enumerate(zip(ha, hb)) if x != y), None)
        if d is None:
            if len(ha) == len(hb):
                same += 1
                continue
            d = min(len(ha), len(hb))  # one walk ended (eos/stop) where the other went on
        forced = llg[key]["forced"]
        (at_forced if d < len(forced) and forced[d] else at_free)[f"{key[0]}/{key[1]}"] = d
    return {"compared": same + len(at_forced) + len(at_free), "identical_walks": same,
            "first_difference_where_llguidance_forced": at_forced, "first_difference_elsewhere": at_free}


def fmt(s, unit):
    if not s:
        return "-"
    return f"{s['p50']:.3g}/{s['p99']:.3g}/{s['max']:.3g} {unit}"


def print_table(results, agree):
    print()
    head = f"{'engine':<11} {'kind':<5} {'items':>5} {'refused':>7} {'compile p50/p99/max':>24} {'mask p50/p99/max':>24} {'first mask p50/p99/max':>26} {'steps':>6}  walk ends"
    print(head)
    print("-" * len(head))
    for name, r in results.items():
        rows = list(r["kinds"].items()) + [("all", r["all"])]
        for kind, k in rows:
            ends = ", ".join(f"{e} {c}" for e, c in k["ends"].items() if c)
            print(f"{name:<11} {kind:<5} {k['items']:>5} {k['refused_count']:>7} {fmt(k['compile_ms'], 'ms'):>24} "
                  f"{fmt(k['mask_us'], 'us'):>24} {fmt(k['first_mask_us'], 'us'):>26} {k['steps']:>6}  {ends}")
        print(f"{'':<11} tokenizer set-up {r['tokenizer_init_ms']:.0f} ms, version {r['version']}")
    for name, r in results.items():
        for kind, k in r["kinds"].items():
            for ref in k["refused"]:
                print(f"refused by {name}: {kind}/{ref['name']}: {ref['error'][:160]}")
            if k.get("special_tokens_allowed"):
                print(f"warning: {name} allowed special tokens other than eos {k['special_tokens_allowed']} times in {kind}")
    if agree:
        free = agree["first_difference_elsewhere"]
        print(f"\nmask agreement llguidance vs xgrammar: {agree['compared']} walks compared, {agree['identical_walks']} identical at every step, "
              f"{len(agree['first_difference_where_llguidance_forced'])} first differ where llguidance forces bytes, {len(free)} first differ elsewhere"
              + (": " + ", ".join(f"{k}@{v}" for k, v in list(free.items())[:12]) + (" ..." if len(free) > 12 else "") if free else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True, help="vocabulary file (see above)")
    ap.add_argument("--engines", default="llguidance,xgrammar")
    ap.add_argument("--kinds", default="json,regex,gbnf", help="corpus parts to run")
    ap.add_argument("--steps", type=int, default=64, help="most steps per walk")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--filter", default="", help="only grammars whose name contains this")
    ap.add_argument("--limit", type=int, default=0, help="only the first N grammars")
    ap.add_argument("--xgr-strict", action="store_true", help="xgrammar strict_mode (closes objects and arrays the schema leaves open)")
    ap.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    ap.add_argument("--dump-walks", metavar="FILE", help="write each walk's tokens and mask hashes as JSON lines")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args()

    tokens, eos, special = load_vocab(args.vocab)
    kinds = args.kinds.split(",")
    items = load_corpus(kinds, args.filter, args.limit)
    print(f"vocabulary {args.vocab}: {len(tokens)} tokens, eos {eos}, {len(special)} special; "
          f"{len(items)} grammars ({', '.join(f'{k} {sum(1 for i in items if i[0] == k)}' for k in kinds)}); "
          f"walks of at most {args.steps} steps, seed {args.seed}")
    dump = open(args.dump_walks, "w") if args.dump_walks else None
    results, walks = {}, {}
    for name in args.engines.split(","):
        if name not in ENGINES:
            sys.exit(f"unknown engine {name}; known: {', '.join(ENGINES)}")
        try:
            results[name], walks[name] = run_engine(ENGINES[name], tokens, eos, special, items, args, dump)
        except ImportError as e:
            print(f"{name}: not installed ({e}); pip install {name}", file=sys.stderr)
    if dump:
        dump.close()
    agree = agreement(walks["llguidance"], walks["xgrammar"]) if len(walks) == 2 else None
    print_table(results, agree)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"vocab": {"file": args.vocab, "size": len(tokens), "eos": eos, "special": len(special)},
                       "settings": {"steps": args.steps, "seed": args.seed, "kinds": kinds, "filter": args.filter,
                                    "limit": args.limit, "xgr_strict": args.xgr_strict, "threads": 1},
                       "engines": results, "agreement": agree}, f, indent=1)


if __name__ == "__main__":
    main()
