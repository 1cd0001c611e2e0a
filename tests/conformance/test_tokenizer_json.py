"""tokenizer.json conformance: `ridge tokenize -m DIR` must give the ids of Hugging Face's `tokenizers`
package (encode(text, add_special_tokens=...).ids) on every corpus text, and decode those ids to the
same text (decode(ids, skip_special_tokens=False)).

Tokenizers: all-MiniLM-L6-v2 (WordPiece) and EmbeddingGemma-300M (Gemma 3's BPE with byte fallback)
as their repositories ship them, and tokenizer.json files that transformers builds from ridge's GGUF
models (tools/gguf_tokenizer_to_hf.py): SmolLM2 (byte-level BPE), Qwen2.5-Coder (Split regex +
ByteLevel, NFC), Gemma 3 270M (Unigram) and DeepSeek-R1-Distill-Qwen (a vocabulary-only GGUF).
The converted files are cached under RIDGE_HOME/hf-tokenizers (transformers takes ~20 s a model).
VARIANTS edit those files into the layouts other real tokenizers use (SmolLM2's Digits + ByteLevel,
Llama 3, RoBERTa, Mistral, Llama 2, DeepSeek V3's and GPT-4o's Split regexes, encoder normalizers), and
test_converted_tokenizer_against_gguf measures how far transformers' conversion strays from the GGUF.
"""
import base64
import json
import os
import pathlib
import subprocess
import sys

import pytest

tokenizers = pytest.importorskip("tokenizers")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import gguf_tokenizer_to_hf  # noqa: E402

HOME = pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge")
MODELS = HOME / "models"

# The shared tokenizer corpus (its invalid-UTF-8 entries left out: `tokenizers` takes str), plus texts
# that exercise tokenizer.json's normalizers, added tokens and decoders.
_CORPUS = [json.loads(line) for line in (HERE / "tokenizer_corpus.jsonl").read_text(encoding="utf-8").splitlines()
           if line.strip()]
EXTRA = [
    "caf\u00e9", "cafe\u0301", "\u00c5ngstr\u00f6m", "A\u030angstro\u0308m",  # NFC / NFD pairs
    "\u1e9b\u0323", "\ufb01nance \u2460 \u00bd \uff21\uff22\uff23", "\u2126 \u212b \u1e69",  # compatibility forms
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645", "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "mixed \u202bRTL\u202c text", "\u0915\u094d\u0937\u093f \u0928\u092e\u0938\u094d\u0924\u0947",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8", "\u1100\u1161\u11a8", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1fa\U0001f1f8 \u270c\U0001f3fd", "\U00013000\U0001d49c\U0001d49c",
    "   leading", "trailing   ", "\t\ttabs\tand\nnewlines\r\n", "a  b   c    d", " ", "\n\n\n", "\u3000\u00a0\u2003x",
    "12345678901234567890", "3.14159 -42 1e10 0x1F", "\u0661\u0662\u0663 \u096a\u096b",
    "def f(x):\n    return x ** 2  # square\n", "for (int i = 0; i < n; ++i) { s += a[i]; }",
    "<bos>Hello<eos>", "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n", "[CLS] a [SEP] b [SEP] [MASK]",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>", "<|endoftext|><|endoftext|>",
    "<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜><think>\n", "x<|im_start|>y", " <|im_end|> ",
    "HELLO World ÀÉÎÕÜ", "don't won't I'm you're they've we'll he'd IT'S",
    "\u2581already\u2581escaped", "<0x41> <unk> [UNK]", "a" * 300, "\u00e9" * 120,
]
TEXTS = [e["text"] for e in _CORPUS if "text" in e] + EXTRA


def test_corpus_size():
    assert len(TEXTS) >= 300
    assert "" in TEXTS


def _from_gguf(name):
    def make():
        gguf = MODELS / f"{name}.gguf"
        if not gguf.exists():
            pytest.skip(f"{gguf} not fetched")
        out = HOME / "hf-tokenizers" / name
        if not (out / "tokenizer.json").exists():
            gguf_tokenizer_to_hf.write_hf_tokenizer(gguf, out)
        return out
    return make


def _shipped(name):
    def get():
        path = MODELS / name
        if not (path / "tokenizer.json").exists():
            pytest.skip(f"{path} not fetched (tools/fetch_model_dirs.py)")
        return path
    return get


DIRS = {
    "minilm": _shipped("all-MiniLM-L6-v2"),
    "embeddinggemma": _shipped("embeddinggemma-300m"),
    "smollm2": _from_gguf("SmolLM2-135M-Instruct.Q4_1"),
    "qwen2.5-coder": _from_gguf("Qwen2.5-Coder-0.5B-Instruct"),
    "gemma3-270m": _from_gguf("gemma-3-270m-Q4_K_M"),
    "deepseek-r1-qwen": _from_gguf("DeepSeek-R1-Distill-Qwen-7B.vocab"),
}
GGUF_OF = {"smollm2": "SmolLM2-135M-Instruct.Q4_1", "qwen2.5-coder": "Qwen2.5-Coder-0.5B-Instruct",
           "gemma3-270m": "gemma-3-270m-Q4_K_M", "deepseek-r1-qwen": "DeepSeek-R1-Distill-Qwen-7B.vocab"}


def ridge_jsonl(ridge_bin, model_dir, lines, tmp_path):
    infile = tmp_path / "in.jsonl"
    infile.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    proc = subprocess.run([ridge_bin, "tokenize", "-m", str(model_dir), "--jsonl-in", str(infile)],
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]


@pytest.mark.parametrize("name", list(DIRS))
def test_ids_and_decode_match_tokenizers(ridge_bin, tmp_path, name):
    model_dir = DIRS[name]()
    ref = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json's padding and truncation are batch settings for encoders; a Tokenizer encodes
    # whole texts (callers cut to their context), so compare without them.
    ref.no_padding()
    ref.no_truncation()
    lines = [{"text": t, "add_special": add} for add in (True, False) for t in TEXTS]
    ours = ridge_jsonl(ridge_bin, model_dir, lines, tmp_path)
    assert len(ours) == len(lines)
    expected = [ref.encode(line["text"], add_special_tokens=line["add_special"]).ids for line in lines]
    mismatches = [f"{line['text'][:40]!r} add_special={line['add_special']}\n  ridge {got['ids'][:20]}\n  tok   {want[:20]}"
                  for line, got, want in zip(lines, ours, expected) if got["ids"] != want]
    assert not mismatches, f"{len(mismatches)}/{len(lines)} differ:\n" + "\n".join(mismatches[:8])

    decoded = ridge_jsonl(ridge_bin, model_dir, [{"ids": ids} for ids in expected], tmp_path)
    bad = []
    for ids, got in zip(expected, decoded):
        want = ref.decode(ids, skip_special_tokens=False)
        text = base64.b64decode(got["decoded_b64"]).decode("utf-8", errors="replace")
        if text != want:
            bad.append(f"{ids[:12]}\n  ridge {text[:60]!r}\n  tok   {want[:60]!r}")
    assert not bad, f"{len(bad)}/{len(expected)} decodes differ:\n" + "\n".join(bad[:8])


LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}")
GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
# DeepSeek V3's pre-tokenizer: three Split regexes ridge has no hand-written splitter for.
DEEPSEEK_V3_SPLITS = [r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
                      r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|"
                      r" ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]
# GPT-4o's (o200k) pattern, as Llama 4 and gpt-oss ship it: letter case classes.
O200K_REGEX = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])
BYTE_LEVEL_NO_REGEX = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}


def _splits(*patterns):
    return {"type": "Sequence", "pretokenizers": [
        *({"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False} for p in patterns),
        BYTE_LEVEL_NO_REGEX]}


METASPACE = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
# Variants of the real files above with the other components real tokenizer.json files use, each
# (base, edits): the edits replace top-level keys, or set model fields ("model.x").
VARIANTS = {
    # SmolLM2 as its repository ships it: each digit alone, then ByteLevel.
    "smollm2-digits": ("smollm2", {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]}}),
    # Llama 3's layout: its Split regex, ignore_merges, a BOS template.
    "qwen-llama3": ("qwen2.5-coder", {"normalizer": None, "model.ignore_merges": True, "pre_tokenizer": {
        "type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "<|im_start|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [], "special_tokens": {"<|im_start|>": {"id": "<|im_start|>", "ids": [151644],
                                                            "tokens": ["<|im_start|>"]}}}}),
    # Patterns through ridge's regex engine rather than its hand-written splitters: DeepSeek V3's, and
    # the Qwen2 / GPT-2 ones in a group (so they are not recognised), checked against Oniguruma.
    "deepseek-v3": ("deepseek-r1-qwen", {"normalizer": None, "pre_tokenizer": _splits(*DEEPSEEK_V3_SPLITS)}),
    "o200k": ("qwen2.5-coder", {"normalizer": None, "pre_tokenizer": _splits(O200K_REGEX)}),
    "qwen-regex-engine": ("qwen2.5-coder", {"pre_tokenizer": _splits(f"(?:{QWEN2_REGEX})")}),
    "gpt2-regex-engine": ("smollm2", {"pre_tokenizer": _splits(f"(?:{GPT2_REGEX})", r"[0-9]|\s{2,}?x")}),
    # RoBERTa's layout: ByteLevel with a prefix space, <s> ... </s>.
    "smollm2-roberta": ("smollm2", {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True,
                                                      "trim_offsets": True, "use_regex": True},
                                    "post_processor": {"type": "RobertaProcessing", "sep": ["<|im_end|>", 2],
                                                       "cls": ["<|im_start|>", 1], "trim_offsets": True,
                                                       "add_prefix_space": True},
                                    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                                "use_regex": True}}),
    # Mistral's layout: no normalizer, Metaspace (prepend "first") before a byte-fallback BPE.
    "gemma-metaspace": ("embeddinggemma", {"normalizer": None, "pre_tokenizer": METASPACE, "decoder": {
        "type": "Sequence", "decoders": [METASPACE, {"type": "ByteFallback"}, {"type": "Fuse"}]}}),
    # Llama 2's layout: Prepend + Replace normalizers, a decoder that strips the first space.
    "gemma-llama2": ("embeddinggemma", {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": None, "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}}),
    # The Whitespace pre-tokenizer on text as it is (its \\w leaves out ² and ½, takes U+200D).
    "minilm-whitespace": ("minilm", {"normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"}}),
    # An encoder with the other text normalizers and pre-tokenizers.
    "minilm-nfkc": ("minilm", {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKC"}, {"type": "Lowercase"}, {"type": "NFKD"}, {"type": "StripAccents"},
        {"type": "Strip", "strip_left": True, "strip_right": True}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Whitespace"}, {"type": "Punctuation", "behavior": "Isolated"},
            {"type": "Digits", "individual_digits": False}]}}),
}


def _variant(name, tmp_root):
    base, edits = VARIANTS[name]
    j = json.loads((DIRS[base]() / "tokenizer.json").read_text(encoding="utf-8"))
    for key, value in edits.items():
        if key.startswith("model."):
            j["model"][key[len("model."):]] = value
        else:
            j[key] = value
    out = tmp_root / name
    out.mkdir()
    (out / "tokenizer.json").write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    return out


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variants_match_tokenizers(ridge_bin, tmp_path, name):
    model_dir = _variant(name, tmp_path)
    ref = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    ref.no_padding()
    ref.no_truncation()
    lines = [{"text": t, "add_special": True} for t in TEXTS]
    ours = ridge_jsonl(ridge_bin, model_dir, lines, tmp_path)
    mismatches = []
    for line, got in zip(lines, ours):
        want = ref.encode(line["text"], add_special_tokens=True).ids
        if got["ids"] != want:
            mismatches.append(f"{line['text'][:40]!r}\n  ridge {got['ids'][:20]}\n  tok   {want[:20]}")
        elif base64.b64decode(got["decoded_b64"]).decode("utf-8", "replace") != ref.decode(want, skip_special_tokens=False):
            mismatches.append(f"decode of {line['text'][:40]!r}")
    assert not mismatches, f"{len(mismatches)}/{len(lines)} differ:\n" + "\n".join(mismatches[:8])


@pytest.mark.parametrize("name", list(GGUF_OF))
def test_converted_tokenizer_against_gguf(name):
    """How faithfully transformers' GGUF conversion keeps the GGUF's tokenization (llama.cpp's view).
    Differences here are the conversion's, not ridge's; the bounds document them."""
    llama_cpp = pytest.importorskip("llama_cpp")
    model_dir = DIRS[name]()
    ref = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    llama = llama_cpp.Llama(model_path=str(MODELS / f"{GGUF_OF[name]}.gguf"), vocab_only=True, verbose=False)
    differ = [t for t in TEXTS
              if ref.encode(t, add_special_tokens=False).ids != llama.tokenize(t.encode(), add_bos=False, special=True)]
    print(f"{name}: {len(differ)}/{len(TEXTS)} texts tokenize differently after conversion", differ[:5])
    assert len(differ) <= KNOWN_CONVERSION_DIFFERENCES[name], differ[:10]


# Texts (of TEXTS) on which the converted tokenizer.json and the GGUF disagree, measured; see the report.
KNOWN_CONVERSION_DIFFERENCES = {
    "smollm2": 6,  # the smollm pre-tokenizer (each digit alone) becomes plain ByteLevel: digit runs merge
    "qwen2.5-coder": 10,  # an NFC normalizer llama.cpp does not apply; only 3 of its added tokens kept
    "gemma3-270m": 168,  # the SentencePiece BPE vocabulary becomes a Unigram model
    "deepseek-r1-qwen": 28,  # added tokens get new ids past the vocabulary
}
