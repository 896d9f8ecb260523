"""MemoryBank Chinese histories as a recall set with gold answers by construction.

    python bench/sets/memorybank_zh.py [--data ../shared/bench]

prints the counts and three examples.

The data (Zhong et al., AAAI 2024; MIT) is read at run time from
``../shared/bench/memorybank/cn/`` and never copied into this repository: 15 users, 10 days
each (2023-04-27 .. 2023-05-06), every day a list of {query, response}.

- Memories: every user message (``query``) is one memory with role "user", every AI reply
  (``response``) one with role "assistant"; ids ``{user}/{date}/{turn}/q`` and ``.../r``;
  ``at`` is that day at 20:00 Asia/Shanghai plus 2 minutes per turn (the reply one minute after
  its message); the conversation is the user (each user's own memory).
- Questions (``memorybank_zh_questions.json``, ours): the dataset's own 100 probing questions
  (``probing_questions_cn.jsonl``, written by its authors; the file stores only their index and
  our gold ids, the text is read from the data), and questions we wrote in natural Chinese as a
  user would ask about themselves, each pointing at the message(s) that answer it, in three
  kinds: "lexical" (reuses words of the memory), "paraphrase" (says it in other words) and
  "short" (one or two words: 茶, 攀岩装备).
- Asked two days after the user's last day, at 10:00. Metric: recall@5.

Every gold id is checked against the loaded memories; a missing one fails loudly.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.sets import inspect_main, SHARED, Memory, Question, SuiteSet  # noqa: E402

TZ = ZoneInfo("Asia/Shanghai")
QUESTIONS = Path(__file__).resolve().with_name("memorybank_zh_questions.json")
CATEGORIES = ("probe", "lexical", "paraphrase", "short")


def memory_id(user: str, date: str, turn: int, part: str) -> str:
    return f"{user}/{date}/{turn}/{part}"


def _lang_dir(data_dir: Path | None, folder: str, histories: str) -> Path:
    base = Path(data_dir) if data_dir is not None else SHARED
    for cand in (base / "memorybank" / folder, base / folder, base):
        if (cand / histories).is_file():
            return cand
    raise FileNotFoundError(
        f"{histories} not found under {base} (expected memorybank/{folder}/ there); "
        "pass data_dir pointing at ../shared/bench"
    )


def load_memories(
    data_dir: Path | None = None,
    folder: str = "cn",
    histories: str = "memory_bank_cn.json",
    probing: str = "probing_questions_cn.jsonl",
) -> tuple[list[Memory], dict[str, datetime], dict]:
    """Every message of every user, in order; asked_at per user; the raw probing questions.

    ``folder``/``histories``/``probing`` name one language's files (memorybank_en passes the English
    ones). User names are stripped of stray spaces (the English file has " Jason "); the Chinese
    names have none, so their ids are as they always were.
    """
    base = _lang_dir(data_dir, folder, histories)
    data = json.loads((base / histories).read_text(encoding="utf-8"))
    probes: dict[str, list[str]] = {}
    with (base / probing).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                probes.update({k.strip(): v for k, v in json.loads(line).items()})
    memories: list[Memory] = []
    asked_at: dict[str, datetime] = {}
    for raw_user, entry in data.items():
        user = raw_user.strip()
        days = sorted(entry["history"])
        for date in days:
            day = datetime.fromisoformat(date).replace(hour=20, tzinfo=TZ)
            for i, turn in enumerate(entry["history"][date]):
                at = day + timedelta(minutes=2 * i)
                memories.append(Memory(memory_id(user, date, i, "q"), user, turn["query"], at, "user"))
                memories.append(
                    Memory(memory_id(user, date, i, "r"), user, turn["response"], at + timedelta(minutes=1), "assistant")
                )
        last = datetime.fromisoformat(days[-1]).replace(hour=10, tzinfo=TZ)
        asked_at[user] = last + timedelta(days=2)
    return memories, asked_at, probes


def load_questions(qfile: Path, memories: list[Memory], probes: dict[str, list[str]]) -> list[Question]:
    """The questions of a spec file (probes by index into ``probes``); fails loudly on any bad gold id."""
    by_id = {m.id: m for m in memories}
    spec = json.loads(Path(qfile).read_text(encoding="utf-8"))
    questions: list[Question] = []
    problems: list[str] = []
    for n, q in enumerate(spec):
        user = q["user"]
        if q["category"] == "probe":
            try:
                text = probes[user][q["probe"]]
            except (KeyError, IndexError):
                problems.append(f"#{n}: no probing question {user}[{q.get('probe')}] in the data")
                continue
        else:
            text = q["question"]
        if q["category"] not in CATEGORIES:
            problems.append(f"#{n}: unknown category {q['category']!r}")
        missing = [g for g in q["gold"] if g not in by_id]
        wrong_conv = [g for g in q["gold"] if g in by_id and by_id[g].conv != user]
        if missing or wrong_conv or not q["gold"]:
            problems.append(f"#{n} {text!r}: gold ids missing {missing} / in another user {wrong_conv}")
        questions.append(Question(conv=user, text=text, gold=tuple(q["gold"]), category=q["category"]))
    if problems:
        raise ValueError(f"{qfile}: {len(problems)} bad question(s):\n  " + "\n  ".join(problems))
    return questions


def build(name: str, lang: str, language: str, questions: Path, data_dir: Path | None = None, **files: str) -> SuiteSet:
    """One language's MemoryBank set (this one, memorybank_en): its histories (`files`, the
    arguments of `load_memories`) and its question file, recall@5."""
    memories, asked_at, probes = load_memories(data_dir, **files)
    return SuiteSet(
        name=name,
        description=f"MemoryBank {language} histories (15 users x 10 days), every message a memory; "
        "the dataset's probing questions plus our own, gold message ids by hand",
        lang=lang,
        metric="recall",
        k=5,
        memories=memories,
        questions=load_questions(questions, memories, probes),
        asked_at=asked_at,
    )


def load(data_dir: Path | None = None, seed: int = 0, questions_file: Path | None = None) -> SuiteSet:
    """The set; ``seed`` is accepted for the common signature (nothing here is random)."""
    return build("memorybank_zh", "zh", "Chinese", Path(questions_file) if questions_file is not None else QUESTIONS, data_dir)


def describe(s: SuiteSet, examples: int = 3) -> str:
    by_id = {m.id: m for m in s.memories}
    roles = Counter(m.role for m in s.memories)
    cats = Counter(q.category for q in s.questions)
    lines = [
        f"{s.name}: {len(s.memories)} memories ({', '.join(f'{k} {v}' for k, v in sorted(roles.items()))}) "
        f"in {len(s.asked_at)} conversations; {len(s.questions)} questions "
        f"({', '.join(f'{k} {v}' for k, v in sorted(cats.items()))}); metric {s.metric}@{s.k}",
    ]
    step = max(1, len(s.questions) // examples)
    for q in s.questions[::step][:examples]:
        lines.append(f"- [{q.category}] {q.conv}: {q.text}")
        for g in q.gold:
            lines.append(f"    gold {g}: {by_id[g].text[:80]}")
        for o in q.old:
            lines.append(f"    old  {o}: {by_id[o].text[:80]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return inspect_main(__doc__, load, describe, argv)


if __name__ == "__main__":
    sys.exit(main())
