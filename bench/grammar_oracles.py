"""The oracles of bench/grammar_mask_diff.py: xgrammar's and llguidance's matchers behind one small
interface (a walk's masks, token by token, on ridge's vocabulary), and ridge's mask byte format
(FNV-1a hash, bit order) for comparing them. Benchmark-only: ridge never imports these packages."""
import os
import re
import sys

import numpy as np

from grammar_anchors import greedy_tokenizer


def fnv1a_bytes(data):
    """ridge's mask hash: FNV-1a 64 over the mask's ceil(V/8) bytes, token t at bit t%8 of byte t/8."""
    h = 0xcbf29ce484222325
    for b in data.tobytes():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def as_bytes(words, n_vocab):
    """A mask as ceil(V/8) bytes, token t at bit t%8 of byte t/8, bits past V zero."""
    data = np.ascontiguousarray(words, dtype="<i4").view(np.uint8)[: (n_vocab + 7) // 8].copy()
    if n_vocab % 8:
        data[-1] &= (1 << (n_vocab % 8)) - 1
    return data


def ids_of(mask_bytes, n_vocab):
    return np.flatnonzero(np.unpackbits(mask_bytes, bitorder="little")[:n_vocab])


# ---------------------------------------------------------------- oracles

class captured_stderr:
    """Collects what native code writes to file descriptor 2 (a list of lines, filled on exit)."""

    def __enter__(self):
        import tempfile
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile(mode="w+b")
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        self.lines = []
        return self.lines

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.lines += self.file.read().decode("utf-8", "replace").splitlines()
        self.file.close()
        return False


class XGrammar:
    name = "xgrammar"

    warnings = []

    def __init__(self, tokens, stops, args):
        import torch
        import xgrammar
        from importlib.metadata import version
        torch.set_num_threads(1)
        self.xgr, self.n = xgrammar, len(tokens)
        self.version = version("xgrammar")
        # RAW: token strings are the bytes themselves (no byte-level or byte-fallback encoding).
        info = xgrammar.TokenizerInfo(tokens, xgrammar.VocabType.RAW, vocab_size=len(tokens), stop_token_ids=stops)
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.strict = args.xgr_strict
        if args.whitespace == "flexible":
            self.json = {"any_whitespace": True, "max_whitespace_cnt": 20}
        else:
            self.json = {"any_whitespace": False,
                         "separators": (", ", ": ") if args.whitespace == "spaced" else (",", ":")}
        self.mask = xgrammar.allocate_token_bitmask(1, self.n)

    def compile(self, kind, source):
        c = self.compiler
        with captured_stderr() as warnings:  # xgrammar logs what it approximates or ignores to stderr
            if kind == "regex":
                cg = c.compile_regex(source)
            elif kind == "grammar":
                cg = c.compile_grammar(source)
            else:
                cg = c.compile_json_schema(source, strict_mode=self.strict, **self.json)
        self.warnings = sorted({re.sub(r"^\[[0-9:]+\] \S+: ", "", l) for l in warnings if l.strip()})
        return self.xgr.GrammarMatcher(cg)

    def fill(self, m):
        m.fill_next_token_bitmask(self.mask, 0)
        return as_bytes(self.mask[0].numpy(), self.n)

    def accept(self, m, tok):
        return m.accept_token(int(tok))

    def probe(self, m, toks):
        """Which of `toks` the matcher itself takes here (its mask aside)."""
        out = []
        for t in toks:
            ok = m.accept_token(int(t))
            if ok:
                m.rollback(1)
            out.append(ok)
        return out


class LLGuidance:
    name = "llguidance"

    warnings = []

    def __init__(self, tokens, stops, args):
        import llguidance
        import llguidance.numpy as llnp
        self.llg, self.llnp, self.n = llguidance, llnp, len(tokens)
        self.version = llguidance.__version__
        tokenize = greedy_tokenizer(tokens)

        class Vocab:
            # What llguidance.TokenizerWrapper reads: token bytes (special ones marked by a leading
            # 0xFF, as llguidance's llama.cpp adapter does), eos, and a tokenize callable (greedy
            # longest match: the vocabulary file has no merges).
            def __init__(self):
                self.tokens = [t if t else b"\xff<|special_%d|>" % i for i, t in enumerate(tokens)]
                self.eos_token_id = stops[0]
                self.bos_token_id = None
                self.special_token_ids = [i for i, t in enumerate(tokens) if not t]

            def __call__(self, data):
                return tokenize(data)

        self.tok = llguidance.LLTokenizer(llguidance.TokenizerWrapper(Vocab()), n_vocab=len(tokens), eos_token=stops)
        ws = args.whitespace
        self.json = {"whitespace_flexible": ws == "flexible",
                     "item_separator": ", " if ws == "spaced" else ",", "key_separator": ": " if ws == "spaced" else ":"}
        if ws == "flexible":
            self.json["whitespace_pattern"] = r"[\x20\x0A\x0D\x09]{0,20}"
        if args.llg_unicode_escapes or args.all_spellings:  # the closest to ridge's --all-spellings
            self.json["json_allow_general_unicode_escapes"] = True
        self.mask = llnp.allocate_token_bitmask(1, self.n)

    def compile(self, kind, source):
        llg = self.llg
        if kind == "regex":
            g = llg.LLMatcher.grammar_from_regex(source)
        elif kind == "grammar":
            g = llg.grammar_from("gbnf", source)
        else:
            g = llg.LLMatcher.grammar_from_json_schema(source, overrides=self.json)
        m = llg.LLMatcher(self.tok, g, log_level=0)
        if m.is_error():
            raise RuntimeError(m.get_error())
        return m

    def fill(self, m):
        self.llnp.fill_next_token_bitmask(m, self.mask, 0)
        return as_bytes(self.mask[0], self.n)

    def accept(self, m, tok):
        return m.consume_token(int(tok))

    def probe(self, m, toks):
        # The matcher takes tokens its mask leaves out where the grammar forces bytes (the mask keeps
        # only the canonical tokenization of those): probing tells that narrowing from the grammar.
        return [m.validate_tokens([int(t)]) == 1 for t in toks]


ORACLES = {"xgrammar": XGrammar, "llguidance": LLGuidance}
