"""Facts that change over sessions: the current version must rank above the old ones.

    python bench/sets/changing.py [--data ../shared/bench] [--seed 0]

prints the counts and three examples.

Per conversation (40: 20 English, 20 Chinese; one person each), 5-10 of the 11 kinds of personal
fact in ``changing_facts.json`` (city, employer, job title, partner, pet, diet, car, code
editor, gym schedule, favourite food, phone), each changing 1-3 times over about four months.
Every version is one user message written from our phrase bank in varying words: the first as
a plain statement ("Living in Leeds means I'm never short of good coffee."), later ones mostly
as a change, often naming the old value ("I switched from Vim to Helix last month and I'm not
going back.", "换工作了，现在在字节。"), sometimes as a plain statement (never for a pet, car,
phone or editor, where a plain "took the Mazda for a drive" would not say the old one is gone); about half the versions
are restated later in other words ("The traffic in Bristol was insane this morning."). The
messages sit among 150-250 filler messages: whole days of MemoryBank chat in that language
(Zhong et al., AAAI 2024; MIT; read at run time from ``../shared/bench/memorybank/``), sessions
3-7 days apart. Filler days where someone states such a fact about themselves (the kind's
clash terms: "my phone", 住在, 健身...) are left out of conversations holding that kind.

Questions: one per changing fact, asking the current value in natural words ("Where do I live
these days?", "我现在在哪家公司上班？"); category = the kind. Gold: the current version and its
restatements; old: every outdated version and its restatements. Metric "current" at k=5 (a
gold id in the top 5, above every old id that is also there). Asked a day after the last
message. Deterministic per seed.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.sets import inspect_main, Memory, Question, SuiteSet  # noqa: E402
from bench.sets.filler import TZ, _clash_matcher, day_blocks  # noqa: E402

FACTS = Path(__file__).resolve().with_name("changing_facts.json")
_FIELDS = ("values", "state", "change", "mention", "questions")


def load_facts(path: Path = FACTS) -> dict[str, dict[str, dict[str, list[str]]]]:
    facts = json.loads(path.read_text(encoding="utf-8"))
    bad = [
        f"{lang}/{kind}"
        for lang, kinds in facts.items()
        for kind, spec in kinds.items()
        if lang not in TZ
        or any(len(spec.get(f, ())) < (4 if f == "values" else 2) for f in _FIELDS)
        or any("{old" in s for s in spec["state"] + spec["mention"])
    ]
    if bad:
        raise ValueError(f"{path}: incomplete or inconsistent fact kinds {bad}")
    return facts


def _fill(frame: str, value: str, old: str | None = None) -> str:
    full, _, short = value.partition("|")
    ofull, _, oshort = (old or "").partition("|")
    return frame.format(v=full, s=short or full, old=ofull, olds=oshort or ofull)


def load(data_dir: Path | None = None, seed: int = 0, conversations: int = 40) -> SuiteSet:
    facts = load_facts()
    blocks = {lang: day_blocks(lang, data_dir) for lang in TZ}
    memories: list[Memory] = []
    questions: list[Question] = []
    asked_at: dict[str, datetime] = {}
    for c in range(conversations):
        lang = "en" if c % 2 == 0 else "zh"
        conv = f"changing-{lang}-{c:02d}"
        rng = random.Random(f"changing/{seed}/{c}")
        kinds = rng.sample(sorted(facts[lang]), rng.randint(5, 10))
        clash = _clash_matcher(lang, [t for kind in kinds for t in facts[lang][kind].get("clash", ())])
        target = rng.randint(150, 250)
        sessions: list[list[list[tuple[str, str, tuple | None]]]] = []
        n = 0
        for b in rng.sample(range(len(blocks[lang])), len(blocks[lang])):
            if n >= target:
                break
            if clash is not None and any(clash.search(q) or clash.search(r) for q, r in blocks[lang][b]):
                continue  # a filler day where someone else states such a fact about themselves
            sessions.append([[("user", q, None), ("assistant", r, None)] for q, r in blocks[lang][b]])
            n += 2 * len(blocks[lang][b])
        if n < target:
            raise ValueError(f"{conv}: only {n} filler messages left after leaving out clashing days (wanted {target})")
        last = len(sessions) - 1
        chains: list[tuple[str, int]] = []  # (kind, versions)
        for kind in kinds:
            spec = facts[lang][kind]
            changes = rng.randint(1, 3)
            values = rng.sample(spec["values"], changes + 1)
            where = [rng.randint(0, last // 4)]
            where += sorted(rng.sample(range(where[0] + 1, last + 1), changes))
            state = rng.sample(spec["state"], len(spec["state"]))
            change = rng.sample(spec["change"], len(spec["change"]))
            mention = rng.sample(spec["mention"], len(spec["mention"]))
            for j, (value, s) in enumerate(zip(values, where)):
                as_state = spec.get("later_as_state", True) and rng.random() < 0.25
                if j == 0 or (as_state and state):
                    text = _fill(state.pop(), value)
                else:
                    text = _fill(change.pop() if change else state.pop(), value, values[j - 1])
                sessions[s].insert(rng.randint(0, len(sessions[s])), [("user", text, (kind, j))])
                end = where[j + 1] if j + 1 < len(where) else last + 1
                if end - s > 1 and mention and rng.random() < 0.5:
                    m = rng.randint(s + 1, end - 1)
                    sessions[m].insert(rng.randint(0, len(sessions[m])), [("user", _fill(mention.pop(), value), (kind, j))])
            chains.append((kind, changes + 1))
        day = datetime(2024, 1, 8, tzinfo=TZ[lang]) + timedelta(days=c)
        ids: dict[tuple[str, int], list[str]] = {}
        i = 0
        for session in sessions:
            day += timedelta(days=rng.randint(3, 7))
            at = day.replace(hour=rng.randint(8, 21), minute=rng.randrange(0, 60, 5))
            for unit in session:
                for role, text, tag in unit:
                    mid = f"{conv}/{i:04d}"
                    memories.append(Memory(mid, conv, text, at, role))
                    if tag is not None:
                        ids.setdefault(tag, []).append(mid)
                    i += 1
                    at += timedelta(minutes=1 if role == "user" else 2)
        asked_at[conv] = at + timedelta(days=1)
        for kind, versions in chains:
            gold = tuple(ids[(kind, versions - 1)])
            old = tuple(x for j in range(versions - 1) for x in ids[(kind, j)])
            questions.append(Question(conv, rng.choice(facts[lang][kind]["questions"]), gold, old, category=kind))
    return SuiteSet(
        name="changing",
        description="personal facts that change 1-3 times over months among MemoryBank filler; "
        "the current version must rank above every outdated one",
        lang="mixed",
        metric="current",
        k=5,
        memories=memories,
        questions=questions,
        asked_at=asked_at,
    )


def describe(s: SuiteSet, examples: int = 3) -> str:
    by_id = {m.id: m for m in s.memories}
    per_conv = Counter(m.conv for m in s.memories)
    langs = Counter(q.conv.split("-")[1] for q in s.questions)
    cats = Counter(q.category for q in s.questions)
    lines = [
        f"{s.name}: {len(s.memories)} memories in {len(per_conv)} conversations "
        f"({min(per_conv.values())}-{max(per_conv.values())} each); {len(s.questions)} questions "
        f"({', '.join(f'{k} {v}' for k, v in sorted(langs.items()))}; {', '.join(f'{k} {v}' for k, v in sorted(cats.items()))}); "
        f"gold ids {sum(len(q.gold) for q in s.questions)}, old ids {sum(len(q.old) for q in s.questions)}; "
        f"metric {s.metric}@{s.k}",
    ]
    step = max(1, len(s.questions) // examples)
    for q in s.questions[::step][:examples]:
        lines.append(f"- [{q.category}] {q.conv}: {q.text}")
        for o in q.old:
            lines.append(f"    old  {o} {by_id[o].at:%Y-%m-%d}: {by_id[o].text[:90]}")
        for g in q.gold:
            lines.append(f"    gold {g} {by_id[g].at:%Y-%m-%d}: {by_id[g].text[:90]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return inspect_main(__doc__, load, describe, argv)


if __name__ == "__main__":
    sys.exit(main())
