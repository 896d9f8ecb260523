"""Paraphrased questions over the synthetic personal-fact corpus (`bench/corpus.py`).

Each fact is parsed back into its template slots; a question asks for one slot of the fact
in other words ("Met Alice in Berlin on a Monday to talk about project 4821" -> "What was the
project number when I saw Alice in Berlin on Monday?"), naming only slots whose combination
no other fact of the same template in the corpus shares, so the answer is exactly one known
fact id. Targets are drawn with a fixed seed: the same sizes give the same questions.

Pure Python: imported by the harness, never by a peer.
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import corpus as C  # noqa: E402

THING_EN = {  # paraphrases of the corpus' things
    "green tea": "tea", "espresso": "strong coffee", "badminton": "shuttlecock games", "chess": "board games",
    "ramen": "noodle soup", "photography": "taking pictures", "trail running": "running in the hills",
    "guitar": "playing a stringed instrument", "sailing": "boats", "pottery": "making ceramics",
}  # fmt: skip
THING_ZH = {
    "乌龙茶": "茶", "手冲咖啡": "咖啡", "羽毛球": "打球", "围棋": "下棋", "火锅": "涮锅", "摄影": "拍照",
    "长跑": "跑步", "吉他": "弹琴", "潜水": "水下运动", "书法": "写毛笔字",
}  # fmt: skip


def _alt(xs: list[str]) -> str:
    return "(?:" + "|".join(re.escape(x) for x in sorted(xs, key=len, reverse=True)) + ")"


SLOTS_EN = {"p": _alt(C.PEOPLE_EN), "place": _alt(C.PLACES_EN), "thing": _alt(C.THINGS_EN), "mon": _alt(C.MONTHS),
            "wd": _alt(C.WEEKDAYS), "d": r"\d+", "n": r"\d+", "k": r"\d+"}  # fmt: skip
SLOTS_ZH = {"p": _alt(C.PEOPLE_ZH), "place": _alt(C.PLACES_ZH), "thing": _alt(C.THINGS_ZH), "m": r"\d+",
            "d": r"\d+", "w": "[一二三四五]", "n": r"\d+", "k": r"\d+"}  # fmt: skip

# template index -> (slots naming the fact, question template). Same order as corpus.TEMPLATES_*.
QUESTIONS_EN = [
    (("mon", "d"), "Which friend of mine was born on {d} {mon}?"),
    (("p", "place", "wd"), "What was the project number when I saw {p} in {place} on {wd}?"),
    (("p", "thing"), "How many times per week does {p} do {thing_p}?"),
    (("n",), "In which city did I sleep in room {n}?"),
    (("p", "thing"), "Which edition of the {thing_p} guide did {p} suggest I read?"),
    (("thing", "mon", "d"), "What is the tracking code of the {thing_p} parcel due {d} {mon}?"),
    (("p", "mon", "d"), "Where am I going with {p} on {d} {mon}, and to eat what?"),
]
QUESTIONS_ZH = [
    (("m", "d"), "哪位朋友在{m}月{d}号过生日？"),
    (("p", "w", "place"), "星期{w}我跟{p}在{place}碰头，聊的是哪个项目？"),
    (("p", "thing"), "{p}一周要{thing_p}几回？"),
    (("n",), "哪次出差我住的是 {n} 号房？"),
    (("p", "thing"), "{p}让我看的那本讲{thing_p}的书是第几版？"),
    (("thing", "m", "d"), "{m}月{d}号到的{thing_p}是哪一单？"),
    (("p", "m", "d"), "{m}月{d}号我要跟{p}去哪里吃东西？"),
]


def _compile(templates: list[str], slots: dict[str, str]) -> list[re.Pattern[str]]:
    out = []
    for t in templates:
        pat = re.escape(t)
        for name, rx in slots.items():
            pat = pat.replace(re.escape("{" + name + "}"), f"(?P<{name}>{rx})")
        out.append(re.compile("^" + pat + "$"))
    return out


_PAT_EN = _compile(C.TEMPLATES_EN, SLOTS_EN)
_PAT_ZH = _compile(C.TEMPLATES_ZH, SLOTS_ZH)


def parse(text: str) -> tuple[str, int, dict[str, str]] | None:
    """(language, template index, slots) of one corpus fact, or None."""
    for lang, pats in (("en", _PAT_EN), ("zh", _PAT_ZH)):
        for i, p in enumerate(pats):
            m = p.match(text)
            if m:
                return lang, i, m.groupdict()
    return None


def make(n: int, n_questions: int, seed: int = 7, q_seed: int = 11) -> tuple[list[str], list[dict]]:
    """The corpus `facts(n, seed)` and `n_questions` questions (half English, half Chinese, the
    templates taken in turn):
    each {"q", "relevant": [fact index], "lang", "template"}."""
    texts = C.facts(n, seed)
    parsed = [parse(t) for t in texts]
    keys: Counter = Counter()
    for p in parsed:
        if p:
            lang, ti, s = p
            qs = (QUESTIONS_EN if lang == "en" else QUESTIONS_ZH)[ti]
            keys[(lang, ti, tuple(s[x] for x in qs[0]))] += 1
    eligible: dict[str, list[int]] = {"en": [], "zh": []}
    for i, p in enumerate(parsed):
        if p:
            lang, ti, s = p
            qs = (QUESTIONS_EN if lang == "en" else QUESTIONS_ZH)[ti]
            if keys[(lang, ti, tuple(s[x] for x in qs[0]))] == 1:
                eligible[lang].append(i)
    rng = random.Random(q_seed)
    out = []
    for lang in ("en", "zh"):
        want = n_questions // 2 if lang == "en" else n_questions - n_questions // 2
        by_t: dict[int, list[int]] = {}
        for i in eligible[lang]:
            by_t.setdefault(parsed[i][1], []).append(i)  # type: ignore[index]
        for xs in by_t.values():
            rng.shuffle(xs)
        picked: list[int] = []  # round-robin over templates, so no one kind of question dominates
        while len(picked) < want and any(by_t.values()):
            for t in sorted(by_t):
                if by_t[t] and len(picked) < want:
                    picked.append(by_t[t].pop())
        for i in picked:
            _, ti, s = parsed[i]  # type: ignore[misc]
            qs = (QUESTIONS_EN if lang == "en" else QUESTIONS_ZH)[ti]
            thing_p = (THING_EN if lang == "en" else THING_ZH).get(s.get("thing", ""), "")
            out.append({"q": qs[1].format(thing_p=thing_p, **s), "relevant": [i], "lang": lang, "template": ti})
    return texts, out


if __name__ == "__main__":
    texts, qs = make(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, 14)
    unparsed = sum(1 for t in texts if parse(t) is None)
    print(f"{len(texts)} facts, {unparsed} unparsed")
    for q in qs:
        print(q["q"], "->", texts[q["relevant"][0]])
