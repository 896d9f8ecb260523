"""Stated preferences and facts hidden among long filler chat and assistant replies.

    python bench/sets/filler.py [--data ../shared/bench] [--seed 0]

prints the counts and three examples.

Per conversation (40: 20 English, 20 Chinese), a stream of 240-360 filler messages taken from
the MemoryBank histories of that language (Zhong et al., AAAI 2024; MIT; read at run time from
``../shared/bench/memorybank/{en,cn}/``, never copied here): whole days of chat (each user
query and its long AI reply, in order), drawn in a seeded random order from all 15 users, so the
same filler recurs across conversations in other mixes. Into it 3-6 statements from our bank
(``filler_bank.json``: 84 entries, 42 English, 42 Chinese) are planted at random places between
exchanges, as the user saying a preference or a fact inside the chat ("Oh and by the way, I've
been vegetarian for about two years now..."; "我最近开始学吉他了，每天练半小时..."). A conversation
holds at most one statement per topic (and never two that the bank marks as answering each
other's question), so every question has one planted answer.

Questions: for every planted statement, the bank's indirect question, as a user would ask for
help that the statement should shape ("Can you suggest a dinner recipe for me tonight?",
"推荐点适合我的周末活动"; category "indirect"), and, for 62 of the 84, a direct one ("Do I eat
meat?"; category "direct"). Gold: the planted statement's id. Metric hit@5. Sessions are a day
apart, messages two minutes apart; asked a day after the last message. Deterministic per seed.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.sets import inspect_main, SHARED, Memory, Question, SuiteSet  # noqa: E402

BANK = Path(__file__).resolve().with_name("filler_bank.json")
TZ = {"en": timezone.utc, "zh": ZoneInfo("Asia/Shanghai")}
_FILES = {"en": ("en", "memory_bank_en.json"), "zh": ("cn", "memory_bank_cn.json")}

Exchange = tuple[str, str]  # (user query, assistant response)


def _memorybank_file(lang: str, data_dir: Path | None) -> Path:
    sub, name = _FILES[lang]
    base = Path(data_dir) if data_dir is not None else SHARED
    for cand in (base / "memorybank" / sub / name, base / sub / name):
        if cand.is_file():
            return cand
    raise FileNotFoundError(
        f"{name} not found under {base} (expected memorybank/{sub}/ there); pass data_dir pointing at ../shared/bench"
    )


def day_blocks(lang: str, data_dir: Path | None = None) -> list[list[Exchange]]:
    """Every (user, day) of the MemoryBank histories of one language, as lists of exchanges, in file order."""
    histories = json.loads(_memorybank_file(lang, data_dir).read_text(encoding="utf-8"))
    blocks: list[list[Exchange]] = []
    for entry in histories.values():
        for date in sorted(entry["history"]):
            turns = [(t["query"].strip(), t["response"].strip()) for t in entry["history"][date]]
            turns = [t for t in turns if t[0] and t[1]]
            if turns:
                blocks.append(turns)
    return blocks


def load_bank(path: Path = BANK) -> list[dict]:
    bank = json.loads(path.read_text(encoding="utf-8"))
    ids = [e["id"] for e in bank]
    dup = [i for i, n in Counter(ids).items() if n > 1]
    unknown = sorted({a for e in bank for a in e.get("avoid", ()) if a not in ids})
    bad = [e["id"] for e in bank if e["lang"] not in TZ or not e["statement"].strip() or not e["indirect"].strip()]
    if dup or unknown or bad:
        raise ValueError(f"{path}: duplicate ids {dup}, unknown avoid ids {unknown}, incomplete entries {bad}")
    return bank


def _pick(rng: random.Random, entries: list[dict], k: int) -> list[dict]:
    """k entries with distinct topics and no avoided pair (avoid is symmetric), in a seeded order."""
    avoid: dict[str, set[str]] = {}
    for e in entries:
        for a in e.get("avoid", ()):
            avoid.setdefault(e["id"], set()).add(a)
            avoid.setdefault(a, set()).add(e["id"])
    chosen: list[dict] = []
    for e in rng.sample(entries, len(entries)):
        if any(c["topic"] == e["topic"] or c["id"] in avoid.get(e["id"], ()) for c in chosen):
            continue
        chosen.append(e)
        if len(chosen) == k:
            break
    return chosen


def _clash_matcher(lang: str, terms: list[str]) -> re.Pattern[str] | None:
    """A pattern for the clash terms: whole words in English, substrings in Chinese; case-insensitive."""
    if not terms:
        return None
    alts = sorted({re.escape(t) for t in terms}, key=len, reverse=True)
    if lang == "en":
        return re.compile(r"\b(?:" + "|".join(alts) + r")\b", re.IGNORECASE)
    return re.compile("|".join(alts))


def load(data_dir: Path | None = None, seed: int = 0, conversations: int = 40) -> SuiteSet:
    bank = load_bank()
    blocks = {lang: day_blocks(lang, data_dir) for lang in TZ}
    memories: list[Memory] = []
    questions: list[Question] = []
    asked_at: dict[str, datetime] = {}
    for c in range(conversations):
        lang = "en" if c % 2 == 0 else "zh"
        conv = f"filler-{lang}-{c:02d}"
        rng = random.Random(f"filler/{seed}/{c}")
        planted = _pick(rng, [e for e in bank if e["lang"] == lang], rng.randint(3, 6))
        clash = _clash_matcher(lang, [t for e in planted for t in e.get("clash", ())])
        target = rng.randint(240, 360)
        units: list[list[list]] = []  # sessions of units; a unit is [[role, text, entry|None], ...]
        n = 0
        for b in rng.sample(range(len(blocks[lang])), len(blocks[lang])):
            if n >= target:
                break
            if clash is not None and any(clash.search(q) or clash.search(r) for q, r in blocks[lang][b]):
                continue  # a filler day that could answer a planted question as well
            units.append([[["user", q, None], ["assistant", r, None]] for q, r in blocks[lang][b]])
            n += 2 * len(blocks[lang][b])
        if n < target:
            raise ValueError(f"{conv}: only {n} filler messages left after leaving out clashing days (wanted {target})")
        for e in planted:
            s = rng.randrange(len(units))
            units[s].insert(rng.randint(0, len(units[s])), [["user", e["statement"], e]])
        start = datetime(2024, 3, 1, tzinfo=TZ[lang]) + timedelta(days=c)
        day = start
        i = 0
        ids: dict[str, str] = {}
        for session in units:
            day += timedelta(days=rng.randint(1, 3))
            at = day.replace(hour=rng.randint(8, 21), minute=rng.randrange(0, 60, 5))
            for unit in session:
                for role, text, entry in unit:
                    mid = f"{conv}/{i:04d}"
                    memories.append(Memory(mid, conv, text, at, role))
                    if entry is not None:
                        ids[entry["id"]] = mid
                    i += 1
                    at += timedelta(minutes=1 if role == "user" else 2)
        asked_at[conv] = at + timedelta(days=1)
        for e in planted:
            questions.append(Question(conv, e["indirect"], (ids[e["id"]],), category="indirect"))
            if e.get("direct"):
                questions.append(Question(conv, e["direct"], (ids[e["id"]],), category="direct"))
    return SuiteSet(
        name="filler",
        description="stated preferences and facts (our bank) planted among long MemoryBank filler chat "
        "and assistant replies; indirect and direct questions",
        lang="mixed",
        metric="hit",
        k=5,
        memories=memories,
        questions=questions,
        asked_at=asked_at,
    )


def describe(s: SuiteSet, examples: int = 3) -> str:
    by_id = {m.id: m for m in s.memories}
    per_conv = Counter(m.conv for m in s.memories)
    roles = Counter(m.role for m in s.memories)
    cats = Counter((q.conv.split("-")[1], q.category) for q in s.questions)
    lines = [
        f"{s.name}: {len(s.memories)} memories ({', '.join(f'{k} {v}' for k, v in sorted(roles.items()))}) in "
        f"{len(per_conv)} conversations ({min(per_conv.values())}-{max(per_conv.values())} each); "
        f"{len(s.questions)} questions ({', '.join(f'{lang} {cat} {v}' for (lang, cat), v in sorted(cats.items()))}); "
        f"metric {s.metric}@{s.k}",
    ]
    step = max(1, len(s.questions) // examples)
    for q in s.questions[::step][:examples]:
        lines.append(f"- [{q.category}] {q.conv}: {q.text}")
        for g in q.gold:
            pos = sum(1 for m in s.memories if m.conv == q.conv and m.id < g)
            lines.append(f"    gold {g} (message {pos + 1} of {per_conv[q.conv]}): {by_id[g].text[:90]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return inspect_main(__doc__, load, describe, argv)


if __name__ == "__main__":
    sys.exit(main())
