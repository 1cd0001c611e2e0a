#!/usr/bin/env python3
"""A deterministic corpus for the embedding fidelity tests (ridge against sentence-transformers).

    from embedding_corpus import texts, retrieval_set
    corpus = texts()            # 600 texts: 1 word .. ~600 words (some past 512 tokens), many scripts
    rs = retrieval_set()        # 8 queries, 40 passages (8 topics x 5), rs["relevant"][q] = best passage

    python3 tests/conformance/embedding_corpus.py [--n 600] [--seed 0] > texts.jsonl   # JSON strings
    python3 tests/conformance/embedding_corpus.py --stats                              # what it holds

Everything is built from the fragments below (no downloads) by a seeded random composition, so the
same (n, seed) always gives the same texts, on any machine and Python 3.
"""
import argparse
import json
import random
import sys

EN = [
    "The quick brown fox jumps over the lazy dog.",
    "A large language model predicts the next token from the ones before it.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
    "The meeting was moved to Thursday afternoon because the projector was broken.",
    "She planted tomatoes, basil and a row of marigolds along the fence.",
    "Interest rates rose for the third time this year, and mortgage applications fell.",
    "The museum's new wing holds sculptures from the second century.",
    "Please restart the router and wait two minutes before trying again.",
    "Our train left the station late, so we missed the connecting ferry.",
    "Vaccines train the immune system to recognise a pathogen without causing the disease.",
    "He wrote the letter by hand, sealed it with wax, and never sent it.",
    "The glacier has retreated almost a kilometre since the first survey in 1950.",
    "Bread rises because yeast ferments sugars and releases carbon dioxide.",
    "The committee approved the budget after a long and sometimes heated debate.",
    "Owls can turn their heads about two hundred and seventy degrees.",
    "Remember to back up your files before upgrading the operating system.",
    "The orchestra tuned to a single A before the conductor walked on stage.",
    "Heavy rain is expected overnight, with strong winds along the coast.",
    "Compilers translate source code into machine instructions.",
    "The children built a sandcastle and watched the tide wash it away.",
    "A good night's sleep improves memory, mood and concentration.",
    "The spacecraft entered orbit around Mars after a seven-month journey.",
    "Coffee prices climbed after a frost damaged crops in Brazil.",
    "The novel follows three generations of a family of lighthouse keepers.",
    "Wash the lentils, then simmer them with cumin, garlic and a bay leaf.",
    "The referee stopped the match when the floodlights failed.",
    "Most of the Earth's fresh water is locked in ice caps and glaciers.",
    "Encryption keeps data private even when it travels over untrusted networks.",
    "The old bridge was closed for repairs, so traffic was diverted through the village.",
    "Mount Everest grows a few millimetres every year as the plates collide.",
]
DE = [
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Die Straßenbahn fährt heute wegen Bauarbeiten nur bis zum Hauptbahnhof.",
    "Im Frühling blühen die Äpfel, und die Bienen sind überall unterwegs.",
    "Können Sie mir bitte sagen, wo die nächste Apotheke ist?",
    "Die Größe der Wohnung überraschte uns: fünf Zimmer und ein großer Balkon.",
    "Übermorgen beginnt das Oktoberfest, und alle Hotels sind ausgebucht.",
    "Der Bäcker öffnet um sechs Uhr, sonntags erst um acht.",
    "Maschinelles Lernen verändert die Art, wie wir Software schreiben.",
    "Die Donau fließt durch zehn Länder, bevor sie ins Schwarze Meer mündet.",
    "Wir müssen die Heizungskostenabrechnung bis Ende März einreichen.",
    "Grüße aus Köln! Das Wetter ist schön, aber ziemlich kühl.",
    "Ein Eichhörnchen versteckt im Herbst Hunderte von Nüssen.",
]
FR = [
    "Le renard brun rapide saute par-dessus le chien paresseux.",
    "Où se trouve la gare ? Je dois prendre le train de 18 h 45.",
    "L'été dernier, nous avons passé deux semaines en Provence, près d'Aix.",
    "La crème brûlée est un dessert à base de crème, d'œufs et de sucre caramélisé.",
    "Les élèves ont étudié la Révolution française et ses conséquences en Europe.",
    "Il a neigé toute la nuit ; les routes de montagne sont fermées.",
    "Ça m'étonnerait qu'il arrive à l'heure, il est toujours en retard.",
    "Le cœur de la ville médiévale est entouré de remparts du XIIe siècle.",
    "Noël approche : les vitrines des magasins sont déjà décorées.",
    "L'apprentissage automatique permet de reconnaître des images et des voix.",
    "Après la pluie vient le beau temps, dit le proverbe.",
    "Le boulanger prépare des croissants et des pains au chocolat dès l'aube.",
]
ES = [
    "El rápido zorro marrón salta sobre el perro perezoso.",
    "¿Dónde está la biblioteca? ¡Está allí, al lado del café!",
    "Mañana iremos a la montaña si no llueve demasiado.",
    "El niño comió una piña entera y después pidió más jalapeños.",
    "La economía española creció un 2,5 % el año pasado, según el informe.",
    "Los murciélagos se orientan en la oscuridad gracias a la ecolocalización.",
    "Él prefirió el té al café porque no quería dormir mal.",
    "La canción habla de un corazón roto y de una ciudad junto al mar.",
    "El acueducto de Segovia fue construido por los romanos sin argamasa.",
    "Aprendí a cocinar paella con mi abuela en Valencia.",
    "¡Qué día tan bonito! Vamos a pasear por el parque del Retiro.",
    "La pequeña ñandú corría detrás de su madre por la pampa.",
]
RU = [
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Москва — столица России и крупнейший город страны.",
    "Зимой в Сибири температура опускается ниже сорока градусов.",
    "Я читаю книгу о истории космических полётов.",
    "Поезд прибывает на вокзал в семь часов утра.",
    "Машинное обучение помогает находить закономерности в данных.",
    "Бабушка испекла пирожки с капустой и яблоками.",
    "Байкал — самое глубокое озеро на планете.",
    "Пожалуйста, закройте окно: на улице очень холодно.",
    "Новый мост соединит два берега реки к концу года.",
]
EL = [
    "Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο.",
    "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "Το καλοκαίρι πηγαίνουμε στα νησιά του Αιγαίου.",
    "Ο Παρθενώνας χτίστηκε τον πέμπτο αιώνα π.Χ.",
    "Μου αρέσει πολύ ο ελληνικός καφές με λίγη ζάχαρη.",
    "Η φιλοσοφία γεννήθηκε στην αρχαία Ελλάδα.",
    "Το πλοίο για την Κρήτη φεύγει στις εννέα το βράδυ.",
    "Οι ελιές μαζεύονται τον Νοέμβριο και τον Δεκέμβριο.",
]
ZH = [
    "敏捷的棕色狐狸跳过了懒狗。",
    "北京是中华人民共和国的首都。",
    "今天天气很好，我们去公园散步吧。",
    "机器学习是人工智能的一个重要分支。",
    "长城全长超过两万公里，是世界上最长的建筑。",
    "我每天早上喝一杯绿茶，然后去上班。",
    "春节是中国最重要的传统节日。",
    "这家餐厅的饺子非常好吃，价格也不贵。",
    "黄河是中国第二长的河流，被称为母亲河。",
    "请把这份文件翻译成英文，明天之前交给我。",
]
JA = [
    "素早い茶色の狐がのろまな犬を飛び越える。",
    "東京は日本の首都で、世界有数の大都市です。",
    "桜の季節になると、多くの人が花見に出かけます。",
    "このラーメン屋はいつも行列ができている。",
    "新幹線で大阪まで約二時間半かかります。",
    "機械学習を使って、画像の中の物体を認識します。",
    "富士山は日本で一番高い山です。",
    "すみません、駅はどこですか？",
    "カタカナとひらがなと漢字を組み合わせて書きます。",
    "明日は雨が降るかもしれないので、傘を持って行きましょう。",
]
KO = [
    "빠른 갈색 여우가 게으른 개를 뛰어넘는다.",
    "서울은 대한민국의 수도입니다.",
    "김치는 한국의 대표적인 전통 음식이에요.",
    "내일 아침 아홉 시에 회의가 있습니다.",
    "한글은 세종대왕이 만든 문자입니다.",
    "기계 학습은 데이터에서 패턴을 찾는 방법입니다.",
    "가을에는 단풍이 아주 아름답습니다.",
    "지하철을 타면 삼십 분 정도 걸려요.",
]
AR = [
    "الثعلب البني السريع يقفز فوق الكلب الكسول.",
    "القاهرة هي عاصمة جمهورية مصر العربية.",
    "أحب أن أشرب القهوة العربية مع التمر في الصباح.",
    "تعلم الآلة فرع من فروع الذكاء الاصطناعي.",
    "يمتد نهر النيل أكثر من ستة آلاف كيلومتر.",
    "مرحبا، كيف حالك اليوم؟",
    "المكتبة مفتوحة من الساعة التاسعة صباحا حتى الخامسة مساء.",
    "سافرنا إلى دبي في عطلة الصيف.",
]
CODE = [
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "SELECT name, COUNT(*) AS n FROM orders WHERE total > 100 GROUP BY name ORDER BY n DESC;",
    "const add = (a, b) => a + b;\nconsole.log(add(2, 3));",
    "git commit -m \"fix: handle empty input\" && git push origin main",
    "{\"id\": 42, \"tags\": [\"alpha\", \"beta\"], \"active\": true, \"score\": 3.14}",
    "#include <vector>\nstd::vector<float> v(1024, 0.0f);",
    "import numpy as np\nx = np.linspace(0, 1, 100)\nprint(x.mean())",
    "fn main() { let v: Vec<u32> = (1..=10).collect(); println!(\"{:?}\", v); }",
    "<div class=\"card\"><h2>Title</h2><p>Body &amp; more</p></div>",
    "curl -s -X POST localhost:8080/v1/embeddings -d '{\"input\": \"hi\"}'",
    "if err != nil {\n\treturn fmt.Errorf(\"open %s: %w\", path, err)\n}",
]
NUMBERS = [
    "3.14159 2.71828 1.41421 1.61803",
    "Order #58213 shipped on 2024-03-17 at 14:05 UTC, total $1,299.99.",
    "Call +1 (555) 010-2368 or +49 30 1234567 between 9:00 and 17:30.",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
    "The population grew from 7,900,000 to 8,450,000 (+6.96%).",
    "E = mc^2, a^2 + b^2 = c^2, and 1e-6 < x <= 2.5e3.",
    "Version 0.19.0 fixed CVE-2023-12345; upgrade from 0.18.4.",
    "0xDEADBEEF 0b101101 0o755 1_000_000",
    "Room 101, floor 7, building B-12, postcode 75008.",
]
EMOJI = [
    "😀😃😄😁😆",
    "I love pizza 🍕 and sushi 🍣!",
    "Great job team 👏👏👏 🎉🎉",
    "Weather today: ☀️ then 🌧️, later ⛈️",
    "👨‍👩‍👧‍👦 family photo at the beach 🏖️",
    "🇫🇷 🇩🇪 🇯🇵 🇧🇷 flags of four countries",
    "❤️🔥 that's fire 💯",
    "Loading... ⏳ done ✅ failed ❌",
]
PUNCT = [
    "!!! ??? ... ;;; :::",
    "Wait... what?! Are you serious??? No way!!!",
    "(((nested (parentheses) [brackets] {braces})))",
    "\"Quoted,\" she said — 'single' quotes — «guillemets» — „Anführung“.",
    "--- *** ___ === +++ ~~~ ^^^",
    "a/b\\c|d<e>f@g#h$i%j^k&l*m",
    "email: first.last+tag@example.com; url: https://example.org/a?b=1&c=2#frag",
    "¡¿Qué?! ¿¡Cómo!? ... …",
]
LANGS = {"en": EN, "de": DE, "fr": FR, "es": ES, "ru": RU, "el": EL, "zh": ZH, "ja": JA, "ko": KO, "ar": AR}
KINDS = dict(LANGS, code=CODE, numbers=NUMBERS, emoji=EMOJI, punct=PUNCT)
NO_SPACES = {"zh", "ja"}  # scripts written without spaces between words (or sentences)

# Texts always present, at the start: the edges.
FIXED = [
    " ", "a", "A", ".", "Hello", "hello", "HELLO", "Hund", "café", "niño", "слово", "λέξη", "字", "言葉",
    "단어", "كلمة", "42", "😀", "?", "x" * 3, "  leading and trailing spaces  ", "\ttabs\tand\nnewlines\n",
    "MiXeD CaSe TeXt FoR tHe UnCaSeD mOdEl", "ALL CAPS SENTENCE ABOUT THE WEATHER IN PARIS.",
    "line one\nline two\n\nline four after a blank line",
]


def _join(kind, sentences):
    sep = "" if kind in NO_SPACES else ("\n" if kind == "code" else " ")
    return sep.join(sentences)


def _words(text):
    """Words for length targets; a CJK character counts as one."""
    return sum(len(w) if any("\u3040" <= c <= "\u9fff" for c in w) else 1 for w in text.split())


def _case(rng, text):
    mode = rng.random()
    if mode < 0.05:
        return text.upper()
    if mode < 0.10:
        return text.lower()
    if mode < 0.13:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
    return text


def _compose(rng, kind, target_words):
    """Sentences of `kind` (several kinds when it is a list) until about `target_words` words."""
    kinds = kind if isinstance(kind, list) else [kind]
    parts = []
    while True:
        k = rng.choice(kinds)
        parts.append((k, rng.choice(KINDS[k])))
        if sum(_words(s) for _, s in parts) >= target_words:
            break
    if len(kinds) == 1:
        text = _join(kinds[0], [s for _, s in parts])
    else:
        text = " ".join(s for _, s in parts)
    if rng.random() < 0.15 and len(parts) > 3:  # paragraphs, between two sentences
        cut = rng.randrange(1, len(parts))
        text = text.replace(parts[cut][1], "\n\n" + parts[cut][1], 1).replace(" \n\n", "\n\n")
    return text


def _one(rng):
    size = rng.random()
    if size < 0.10:
        target = 1
    elif size < 0.40:
        target = rng.randint(5, 20)
    elif size < 0.70:
        target = rng.randint(20, 80)
    elif size < 0.88:
        target = rng.randint(80, 300)
    else:
        target = rng.randint(400, 620)  # past 512 tokens for both tokenizers
    mix = rng.random()
    if target == 1:
        k = rng.choice(list(LANGS))
        words = rng.choice(KINDS[k]).split()
        word = words[0] if k in NO_SPACES else rng.choice(words)
        return _case(rng, word.strip(".,;:!?¿¡。、！？"))
    if mix < 0.55:
        kind = rng.choice(list(LANGS))
    elif mix < 0.70:
        kind = rng.choice(["code", "numbers", "emoji", "punct"])
    else:
        kind = rng.sample(list(KINDS), rng.randint(2, 4))
    return _case(rng, _compose(rng, kind, target))


def texts(n=600, seed=0):
    """`n` texts (default 600), the same for the same (n, seed): FIXED first, then random compositions."""
    rng = random.Random(seed)
    out, seen = [], set()
    for t in FIXED:
        out.append(t)
        seen.add(t)
    while len(out) < n:
        t = _one(rng)
        if t.strip() and t not in seen:
            seen.add(t)
            out.append(t)
    return out[:n]


# The retrieval set: per topic, the passage that answers the topic's query comes first, then four
# passages on the same subject that do not answer it.
_TOPICS = [
    ("How long does it take for light from the Sun to reach the Earth?", [
        "Sunlight takes about eight minutes and twenty seconds to travel the 150 million kilometres to Earth.",
        "The Sun is a yellow dwarf star made mostly of hydrogen and helium.",
        "Solar flares are sudden bursts of radiation from the Sun's surface.",
        "The Sun's core reaches temperatures of about fifteen million degrees Celsius.",
        "Sunspots are cooler, darker regions on the Sun caused by magnetic activity.",
    ]),
    ("What temperature should I bake sourdough bread at?", [
        "Bake the sourdough loaf at 230 °C (450 °F) for about 40 minutes, lid on for the first 20.",
        "A sourdough starter is a mix of flour and water colonised by wild yeast and bacteria.",
        "Feed your starter twice a day to keep it active and bubbly.",
        "Sourdough has a tangy flavour because of the lactic acid its bacteria produce.",
        "Stretch and fold the dough every half hour during the bulk fermentation.",
    ]),
    ("How do I undo the last git commit but keep my changes?", [
        "Run git reset --soft HEAD~1 to remove the last commit while keeping its changes staged.",
        "git log shows the history of commits on the current branch.",
        "A branch in git is a movable pointer to a commit.",
        "git stash saves uncommitted changes so you can switch branches.",
        "Use git rebase -i to squash several commits into one before merging.",
    ]),
    ("Which vitamin does the skin make from sunlight?", [
        "The skin produces vitamin D when exposed to ultraviolet B rays from the sun.",
        "Vitamin C is found in citrus fruits and helps the body absorb iron.",
        "Vitamin B12 deficiency can cause tiredness and anaemia.",
        "Too much vitamin A can be toxic because it is stored in the liver.",
        "Leafy green vegetables are a good source of vitamin K.",
    ]),
    ("When did the Berlin Wall fall?", [
        "The Berlin Wall fell on 9 November 1989, when East Germany opened its border crossings.",
        "East Germany began building the wall around West Berlin in August 1961 to stop people fleeing.",
        "Checkpoint Charlie was the best-known crossing point between East and West Berlin.",
        "Germany was formally reunified on 3 October 1990.",
        "Berlin was divided into four sectors after the Second World War.",
    ]),
    ("How many legs does a spider have?", [
        "Spiders have eight legs, which sets them apart from insects, which have six.",
        "Spiders spin silk from glands called spinnerets at the tip of the abdomen.",
        "Most spiders are venomous, but only a few are dangerous to humans.",
        "Some jumping spiders can leap many times their own body length.",
        "Orb-weaver spiders rebuild their webs almost every night.",
    ]),
    ("What is the capital of Australia?", [
        "Canberra is the capital of Australia; it was chosen as a compromise between Sydney and Melbourne.",
        "Sydney is the largest city in Australia and home to its famous opera house.",
        "Australia is both a country and a continent, surrounded by the Indian and Pacific Oceans.",
        "The Great Barrier Reef lies off the coast of Queensland in north-eastern Australia.",
        "Melbourne is known for its coffee culture and its laneways.",
    ]),
    ("Why is the sky blue?", [
        "The sky looks blue because air molecules scatter short blue wavelengths of sunlight more than red ones.",
        "Sunsets are red and orange because light passes through more atmosphere near the horizon.",
        "Clouds are white because their water droplets scatter all visible colours about equally.",
        "On Mars the daytime sky looks butterscotch because of fine dust in the air.",
        "The atmosphere is mostly nitrogen and oxygen, with traces of argon and carbon dioxide.",
    ]),
]


def retrieval_set():
    """{"queries": [8], "passages": [40], "relevant": [index into passages per query],
    "topic": [topic index per passage]}: each query has one best passage and four related ones (its topic)."""
    queries, passages, relevant, topic = [], [], [], []
    for t, (query, group) in enumerate(_TOPICS):
        queries.append(query)
        relevant.append(len(passages))
        passages.extend(group)
        topic.extend([t] * len(group))
    # Interleave the topics so that a passage's position tells nothing about its topic.
    order = sorted(range(len(passages)), key=lambda i: (i % 5, i // 5))
    where = {old: new for new, old in enumerate(order)}
    return {"queries": queries, "passages": [passages[i] for i in order],
            "relevant": [where[r] for r in relevant], "topic": [topic[i] for i in order]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stats", action="store_true", help="describe the corpus instead of writing it")
    args = ap.parse_args(argv)
    corpus = texts(args.n, args.seed)
    if args.stats:
        words = sorted(_words(t) for t in corpus)
        print(f"{len(corpus)} texts; words min {words[0]} median {words[len(words) // 2]} max {words[-1]}; "
              f"{sum(w >= 400 for w in words)} with >= 400 words")
        return 0
    for t in corpus:
        sys.stdout.write(json.dumps(t, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
