#!/usr/bin/env python3
"""Writes tokenizer_corpus.jsonl: the texts ridge's tokenizer must encode exactly as llama.cpp does.

One JSON object per line: {"id": name, "text": str} or, for bytes that are not valid UTF-8,
{"id": name, "text_b64": base64 of the raw bytes}. Deterministic; rerun after editing:
    python3 tests/conformance/gen_tokenizer_corpus.py
"""
import base64
import json
import pathlib
import random

OUT = pathlib.Path(__file__).with_name("tokenizer_corpus.jsonl")

PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness.",
    "Call me Ishmael. Some years ago—never mind how long precisely—having little or no money in my purse...",
    "In the beginning God created the heaven and the earth.",
    "To be, or not to be, that is the question: Whether 'tis nobler in the mind to suffer",
    "She sells sea-shells on the sea-shore; the shells she sells are sea-shells, I'm sure.",
    "Dr. Smith arrived at 9:30 a.m. on Jan. 5th, 2021 (see p. 42, fig. 3b).",
    "\"Hello,\" she said. \"How are you?\" — \"Fine, thanks!\"",
    "Wait... what?! Are you serious??? No way!!!",
    "The U.S.A., the U.K., and the E.U. signed the accord (finally).",
    "email me at john.doe+test@example.com or visit https://example.org/path?q=1&r=2#frag",
    "Mr. O'Neil and Ms. D'Angelo weren't at the rock'n'roll concert.",
    "A large language model (LLM) is a type of machine learning model designed for natural language processing tasks.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "HELLO WORLD THIS IS ALL CAPS TEXT WITH SOME NUMBERS 123",
    "camelCaseIdentifier snake_case_identifier kebab-case-identifier SCREAMING_SNAKE",
    "The café served crème brûlée and a naïve piñata-shaped jalapeño soufflé.",
    "Zürich, Köln, São Paulo, Kraków, Reykjavík, Besançon, Ålesund, Łódź.",
    "¿Dónde está la biblioteca? ¡Está allí!",
    "Once upon a time, in a land far, far away, there lived a king who had three daughters.",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.",
    "Note: this is *important* and _emphasised_; see [link](http://x.y) and `code`.",
    "# Heading\n\n## Subheading\n\n- item one\n- item two\n  - nested item\n\n1. first\n2. second\n",
    "| col1 | col2 |\n|------|------|\n| a    | b    |\n",
    "> quoted line\n> another quoted line\n\nNormal paragraph.",
    "Tweet: @user #hashtag $TSLA 100% 😂 lol",
    "Temperatures ranged from -40°C to +45°C (−40°F to 113°F).",
    "The price is $1,299.99 (€1.199,99; £999; ¥150,000; ₹99,999).",
    "Q: What's 2+2? A: It's 4. Q: And 10/3? A: ≈3.333…",
    "I said, \"It's not what you think\" — and he replied, 'Isn't it?'",
]

CODE = [
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "import numpy as np\n\nx = np.arange(10).reshape(2, 5)\nprint(x.T @ x)\n",
    "class Foo:\n    def __init__(self, bar: int = 0) -> None:\n        self._bar = bar\n\n    @property\n    def bar(self):\n        return self._bar\n",
    "#include <iostream>\n\nint main() {\n\tstd::cout << \"Hello, World!\" << std::endl;\n\treturn 0;\n}\n",
    "template <typename T>\nconstexpr T clamp(T v, T lo, T hi) { return v < lo ? lo : (hi < v ? hi : v); }",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "const add = (a, b) => a + b;\nconsole.log(`sum: ${add(1, 2)}`);\n",
    "function debounce(fn, ms) {\n  let t;\n  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };\n}",
    "fn main() {\n    let v: Vec<u32> = (1..=10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}\n",
    "impl<'a> Parser<'a> { fn next(&mut self) -> Option<&'a str> { None } }",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    "SELECT u.id, COUNT(*) AS n FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total > 100 GROUP BY u.id HAVING n > 2;",
    "<!DOCTYPE html>\n<html>\n  <body class=\"main\">\n    <p id='x'>Hi &amp; bye</p>\n  </body>\n</html>",
    "{\"name\": \"ridge\", \"version\": \"0.1.0\", \"deps\": [\"fmt\", \"json\"], \"nested\": {\"a\": null, \"b\": true}}",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do\n  wc -l \"$f\" | awk '{print $1}'\ndone\n",
    "public static void main(String[] args) {\n    System.out.println(String.format(\"%d items\", list.size()));\n}",
    "SELECT * FROM t WHERE name LIKE '%o''brien%';",
    "x = [i**2 for i in range(100) if i % 3 == 0]  # squares of multiples of 3",
    "if (a && b || !c) { return a != b ? a : b; } else if (x >= 0 && y <= 0) { x <<= 2; y >>= 1; }",
    "    \n    def indented():\n        pass\n\n\n\n",
    "// TODO(someone): fix this\n/* block\n * comment\n */\nint x = 0x1F; float y = 1.5e-3f;",
    "diff --git a/x b/x\n@@ -1,3 +1,4 @@\n-old line\n+new line\n+another\n context\n",
    "regex = r'^(?P<user>[\\w.]+)@(?P<host>[\\w-]+\\.[a-z]{2,})$'",
    "matrix = [[1, 2, 3],\n          [4, 5, 6],\n          [7, 8, 9]]",
    "%macro foo 2\n  mov eax, [ebp+8]\n  add eax, %1\n%endmacro",
    "\\begin{equation}\n  E = mc^2 \\quad \\forall x \\in \\mathbb{R}\n\\end{equation}",
    "a=1;b=2;c=a+b;d=c*2;e=d/3;f=e%4;g=f^5;h=g|6;i=h&7;",
    "```python\nprint('hi')\n```",
    "key: value\nlist:\n  - a\n  - b\nnested:\n  deep:\n    deeper: true\n",
    "<?php echo $arr['key'] ?? 'default'; ?>",
]

WHITESPACE = [
    " ", "  ", "   ", "    ", "        ", " " * 33, "\t", "\t\t", "\t\t\t\t", "\n", "\n\n", "\n\n\n\n\n",
    "\r\n", "\r\n\r\n", "\r", " \n", "\n ", " \n ", "\t\n\t\n", "  \t  \n  \t  ",
    "word  word   word    word", "word\tword\t\tword", "word\nword\n\nword", "   leading spaces", "trailing spaces   ",
    "  both  ", "a \n b \n\n c", "x\u00a0y\u00a0\u00a0z", "ideographic\u3000space\u3000\u3000here", "line\u2028sep\u2029para",
    "nbsp at end\u00a0", "\u2003em\u2002en\u2009thin", "\u000b\u000c vertical tab and form feed", "tab\tthen  \n  newline",
    "mixed \t \n \r\n \t\t end", "\n\n\nHello\n\n\n", "x \u0085 next-line",
]

NUMBERS = [
    "0", "7", "42", "123", "1234", "12345", "123456", "1234567", "12345678901234567890",
    "3.14159", "-273.15", "+1", "1e10", "6.022e23", "1,000,000", "1.000.000,50", "0xDEADBEEF", "0b1011",
    "007", "2024-01-15", "12:34:56", "192.168.0.1", "v1.2.3", "a1b2c3", "abc123def456", "1st 2nd 3rd 4th",
    "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "１２３４５", "²³¹ ½ ¾ ⅓", "Ⅻ Ⅷ ⅰⅱⅲ", "①②③", "  123  456  ", "phone: +1 (555) 123-4567",
    "pi=3.14159265358979323846264338327950288419716939937510",
]

CJK = [
    "你好，世界！", "我爱自然语言处理。", "今天天气很好，我们去公园散步吧。", "中华人民共和国成立于1949年。",
    "机器学习是人工智能的一个分支。", "「引号」和『双引号』以及《书名号》。", "繁體中文：電腦、網路、資訊。",
    "こんにちは、世界！", "私は日本語を勉強しています。", "カタカナとひらがなと漢字が混ざった文章です。",
    "東京スカイツリーは634メートルです。", "ｶﾀｶﾅ半角", "ラーメン🍜が大好き！",
    "안녕하세요, 세계!", "저는 한국어를 공부하고 있습니다.", "서울특별시 강남구 테헤란로 123",
    "한글과 漢字 혼용 문장입니다.", "𠀀𠀁𪚥 rare CJK extension B", "\u2ffc\u2ffd\u31ef new in Unicode 15.1", "\U0002ebf0\U0002ebf1 CJK ext I",
]

SCRIPTS = [
    "مرحبا بالعالم", "اللغة العربية جميلة جداً.", "שלום עולם", "नमस्ते दुनिया", "मैं हिंदी सीख रहा हूँ।",
    "Привет, мир!", "Съешь же ещё этих мягких французских булок, да выпей чаю.", "Γειά σου Κόσμε", "Ελληνικά: αβγδεζηθ",
    "สวัสดีชาวโลก", "Xin chào thế giới, tiếng Việt có dấu.", "გამარჯობა სამყაროვ", "Բարեւ աշխարհ", "ሰላም ልዑል",
    "வணக்கம் உலகம்", "ಕನ್ನಡ ಭಾಷೆ", "ᚠᚢᚦᚨᚱᚲ runes", "e\u0301 combining acute, a\u0308 o\u0302", "Z\u0351\u0364a\u0310\u0351l\u0368go",
    "Türkçe: ığüşöç İIıi", "ß ẞ ﬁ ﬂ ŉ", "עִבְרִית עם ניקוד",
]

EMOJI = [
    "🙂", "😀😃😄😁", "👍🏽", "👋🏿👋🏻", "👨‍👩‍👧‍👦", "👩‍💻 coding", "🏳️‍🌈", "🇺🇸🇬🇧🇯🇵🇩🇪", "🇫🇷 France",
    "1️⃣2️⃣#️⃣", "❤️ ♥ ❤", "☺️ vs ☺", "🧑🏾‍🤝‍🧑🏼", "I love 🍕 and 🍣!", "emoji at end 🎉", "🚀🚀🚀🚀🚀🚀🚀🚀",
    "✅ done ❌ failed ⚠️ warning", "🫠🫨🪿 newer emoji", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland", "👁️‍🗨️",
]

MIXED = [
    "Hello 世界 مرحبا Привет 🌍", "GPT-4は2023年にリリースされました。", "The word 'naïve' is 'наивный' in Russian.",
    "混合English和中文text", "x² + y² = z²; ∑ᵢ aᵢ ≤ ∞; ∀ε>0 ∃δ>0", "→ ← ↑ ↓ ⇒ ⇔ ∧ ∨ ¬ ⊕",
    "© 2024 ACME™ Corp® — all rights reserved…", "«guillemets» „Anführungszeichen“ “curly” ‘single’",
    "math: α+β=γ, Δx→0, ∫₀¹ f(x)dx", "한국어 English 日本語 中文 العربية हिन्दी", "snake🐍case_with😀emoji",
    "mañana—después… “¿por qué?”", "A\u200bB zero\u200dwidth\u200cjoiners", "\ufeffBOM at start", "private \ue000\uf8ff use",
    "unassigned \U000e0080 \U0003fffe here", "\u0000NUL\u0001SOH\u007fDEL", "tab\u0009bell\u0007esc\u001b[0m",
]

CONTRACTIONS = [
    "it's", "IT'S", "It'S", "don't", "DON'T", "doN'T", "you're", "YOU'RE", "you'RE", "you'Re", "we've", "WE'VE", "we'vE",
    "I'm", "I'M", "we'll", "WE'LL", "we'Ll", "he'd", "HE'D", "'s 't 're 've 'm 'll 'd", "'S 'T 'RE 'VE 'M 'LL 'D",
    "rock'n'roll 'twas o'clock", "'quoted' ''double'' '''triple'''", "it’s curly apostrophe", "y'all'd've",
    "the cat's toy's color", "'\u212a kelvin after apostrophe", "' s ' t", "'", "''", "'s", "'ll", "a'b'c'd'e",
]

SPECIAL = [
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nYou are helpful.<|im_end|>", "text<|endoftext|>more text", "<|im_start|><|im_end|><|endoftext|>",
    "<|im_start", "im_start|>", "<|im_start|", "< |im_start| >", "<<|im_start|>>", "<|im_start|><|im_start|>",
    "<repo_name>ridge<file_sep>src/main.cc<filename>x", "<jupyter_code>print(1)<jupyter_output>1", " <|im_end|> ",
    "\n<|im_start|>\n", "<s></s><unk>", "<|eot_id|><|begin_of_text|>", "<｜end▁of▁sentence｜>", "[INST] hi [/INST]",
    "<|im_start|>user 你好<|im_end|>🙂", "<tool_call>{\"a\":1}</tool_call>", "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
    "<mask_token> <sep>",
]

# Bytes that are not valid UTF-8 (stored base64). Sequences decoding above U+10FFFF are left out:
# llama.cpp aborts on them instead of tokenizing.
INVALID = [
    b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"abc\x80def", b"\xff\xfe\xfd", b"\xc0\x80",
    b"\xc1\xbf", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf8\x88\x80\x80\x80", b"\xfc\x84\x80\x80\x80\x80",
    b"Hello \xe4\xbd world", b"\xf0\x9f\x98\x80\xf0\x9f", b"caf\xe9", b"\xe9t\xe9", b"\xc3\x28", b"\xe2\x28\xa1",
    b"\xe2\x82\x28", b"\xf0\x28\x8c\xbc", b"\xf0\x90\x28\xbc", b"a\xc2", b"\x80\x80\x80\x80", b" \xa0 \xa0 ",
    b"<|im_start|>\xff<|im_end|>", b"12\xff34", b"it\xff's", b"\xf4\x8f\xbf\xbf max codepoint",
]


def long_text(rng):
    words = ("the of and to in is that for it as with was on be by at this are from or have an they which one "
             "you had not but what all were when we there can more if no man out other so time up two 42 3.5 1000 "
             "über 東京 🙂 naïve don't it's").split()
    parts = []
    for i in range(2500):
        parts.append(rng.choice(words))
        if i % 17 == 16:
            parts.append(rng.choice([".", ",", "!", "?", ";", "\n", "\n\n", "  ", "\t"]))
    return " ".join(parts)


def random_mix(rng, n):
    alphabet = ("abcXYZ019 \t\n\r'.,;:!?-_()[]{}<>|\\/\"@#$%^&*+=~`éüßçñøåæœ中文日本語한국어"
                "αβγδабвгдمرحبाहिन्दी🙂👍🏽🇯🇵\u00a0\u3000\u200b\u0301½²")
    return "".join(rng.choice(alphabet) for _ in range(n))


def main():
    rng = random.Random(1234)
    entries = []

    def add(group, items):
        for i, text in enumerate(items):
            name = f"{group}_{i:03d}"
            if isinstance(text, bytes):
                entries.append({"id": name, "text_b64": base64.b64encode(text).decode()})
            else:
                entries.append({"id": name, "text": text})

    add("prose", PROSE)
    add("code", CODE)
    add("space", WHITESPACE)
    add("number", NUMBERS)
    add("cjk", CJK)
    add("script", SCRIPTS)
    add("emoji", EMOJI)
    add("mixed", MIXED)
    add("contraction", CONTRACTIONS)
    add("special", SPECIAL)
    add("invalid", INVALID)
    add("edge", ["", "a", "A", ".", "\u00e9", "🙂a", "a🙂", "Ġ", "▁", "▁▁hello", " ▁ ", "ĠĠ", "ĊĊ"])
    add("random", [random_mix(rng, rng.randint(5, 120)) for _ in range(20)])
    add("long", [long_text(rng), "a" * 3000, " " * 500 + "x", "🙂" * 300, "1234567890" * 100])
    with OUT.open("w", encoding="utf-8") as f:
        for e in entries:
            f.write(json.dumps(e, ensure_ascii=True) + "\n")
    print(f"wrote {len(entries)} texts to {OUT}")


if __name__ == "__main__":
    main()
