"""LoCoMo as a retrieval benchmark: loader, evidence normalisation and recall metrics.

    python bench/locomo.py [--data ../shared/bench/locomo/locomo10.json]

prints what the loader makes of the file (counts, the evidence ids it repaired or dropped).

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) is read from ``../shared/bench/locomo/``
next to the repository and never copied into it. One memory per turn, retrieval within
one conversation; metrics as in ``../shared/bench/README.md``:

- turn recall@k = |top-k dia_ids ∩ evidence| / |evidence|;
- session recall@k: the same over sessions (the number after ``D``);
- categories 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 (adversarial) and
  questions whose evidence is empty (before or after normalisation) are left out.

Evidence ids are normalised (9 known defects in locomo10.json): ``"D8:6; D9:17"`` and
``"D9:1 D4:4 D4:6"`` are split, ``"D:11:26"`` -> ``D11:26``, ``"D30:05"`` -> ``D30:5``, and
ids that name no turn (``"D10:19"`` in conv-42, ``"D4:36"`` in conv-47, ``"D"``) are dropped.

Pure Python (no numpy), so the tests can import it anywhere.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo" / "locomo10.json"

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SPLIT = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str  # with " [image: caption]" appended when the turn has a blip_caption
    session_date: str

    def memory(self, with_date: bool = False) -> str:
        """The memory text for this turn: "{speaker}: {text}", optionally "[{date}] " first."""
        base = f"{self.speaker}: {self.text}"
        return f"[{self.session_date}] {base}" if with_date and self.session_date else base


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: list[str]  # normalised dia_ids, each naming a turn of the conversation
    answer: str = ""


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    speakers: tuple[str, str] = ("", "")
    #: evidence ids the loader changed: (question, raw id, what it became or None if dropped)
    repairs: list[tuple[str, str, str | None]] = field(default_factory=list)
    #: questions left out: (question, category, reason)
    skipped: list[tuple[str, int, str]] = field(default_factory=list)


def session_of(dia_id: str) -> int:
    """The session number of a normalised dia_id: D12:3 -> 12."""
    m = _ID.match(dia_id)
    if not m:
        raise ValueError(f"not a dia_id: {dia_id!r}")
    return int(m.group(1))


def normalize_id(raw: str) -> str | None:
    """One evidence token -> canonical ``D<session>:<turn>``, or None when it is not an id."""
    m = _ID.match(raw.strip())
    if not m:
        return None
    return f"D{int(m.group(1))}:{int(m.group(2))}"


def normalize_evidence(
    raw: Iterable[str], valid: set[str] | None = None
) -> tuple[list[str], list[tuple[str, str | None]]]:
    """Split, repair and filter raw evidence entries.

    Returns (ids, repairs): ids in first-seen order without repeats; repairs lists
    (raw entry, replacement) for every entry that was not already a valid canonical id,
    the replacement being None when nothing of it survived. With `valid`, ids naming no
    turn are dropped.
    """
    out: list[str] = []
    repairs: list[tuple[str, str | None]] = []
    for entry in raw:
        entry = str(entry)
        parts = [p for p in _SPLIT.split(entry.strip()) if p]
        kept = []
        for part in parts:
            nid = normalize_id(part)
            if nid is None or (valid is not None and nid not in valid):
                continue
            kept.append(nid)
        if len(kept) != 1 or kept[0] != entry:
            repairs.append((entry, " ".join(kept) if kept else None))
        for nid in kept:
            if nid not in out:
                out.append(nid)
    return out, repairs


def _sessions(conv: dict) -> list[int]:
    nums = [int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k))]
    return sorted(nums)


def parse_sample(sample: dict) -> Conversation:
    """One element of locomo10.json -> Conversation."""
    conv = sample["conversation"]
    turns: list[Turn] = []
    for n in _sessions(conv):  # only sessions that exist: some *_date_time keys have none
        date = str(conv.get(f"session_{n}_date_time", "") or "")
        for t in conv[f"session_{n}"]:
            text = str(t.get("text", ""))
            caption = t.get("blip_caption")
            if caption:
                text = f"{text} [image: {caption}]"
            dia_id = normalize_id(str(t["dia_id"])) or str(t["dia_id"])
            turns.append(Turn(dia_id=dia_id, session=n, speaker=str(t.get("speaker", "")), text=text, session_date=date))
    valid = {t.dia_id for t in turns}
    c = Conversation(
        sample_id=str(sample.get("sample_id", "")),
        turns=turns,
        questions=[],
        speakers=(str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))),
    )
    for qa in sample.get("qa", []):
        cat = int(qa.get("category", 0))
        q = str(qa.get("question", ""))
        if cat not in CATEGORIES:
            c.skipped.append((q, cat, f"category {cat}"))
            continue
        ev, repairs = normalize_evidence(qa.get("evidence") or [], valid)
        c.repairs.extend((q, raw, new) for raw, new in repairs)
        if not ev:
            c.skipped.append((q, cat, "empty evidence"))
            continue
        c.questions.append(Question(question=q, category=cat, evidence=ev, answer=str(qa.get("answer", ""))))
    return c


def load(path: str | Path = DEFAULT_DATA) -> list[Conversation]:
    """All conversations of a LoCoMo file, turns in order, questions of categories 1-4."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return [parse_sample(s) for s in data]


# ---- metrics ---------------------------------------------------------------------------


def turn_recall(ranked_dia_ids: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """|top-k ∩ evidence| / |evidence| over turn ids."""
    gold = set(evidence)
    if not gold:
        raise ValueError("empty evidence")
    return len(gold.intersection(ranked_dia_ids[:k])) / len(gold)


def session_recall(ranked_dia_ids: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """The same over sessions: the share of evidence sessions that a top-k turn comes from."""
    gold = {session_of(e) for e in evidence}
    if not gold:
        raise ValueError("empty evidence")
    got = {session_of(d) for d in ranked_dia_ids[:k]}
    return len(gold & got) / len(gold)


METRICS = (("R@5", "turn", 5), ("R@10", "turn", 10), ("S@5", "session", 5))


def score_question(ranked_dia_ids: Sequence[str], evidence: Sequence[str], metrics=METRICS) -> dict[str, float]:
    """All metrics for one ranked list."""
    out = {}
    for name, level, k in metrics:
        fn = turn_recall if level == "turn" else session_recall
        out[name] = fn(ranked_dia_ids, evidence, k)
    return out


def summarize(rows: Iterable[tuple[int, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Rows of (category, {metric: value}) -> {"1".."4", "all": {metric: mean, "n": count}}.

    "all" is the mean over questions (micro average), as published LoCoMo numbers are.
    """
    by: dict[str, list[dict[str, float]]] = {}
    for cat, m in rows:
        by.setdefault(str(cat), []).append(m)
        by.setdefault("all", []).append(m)
    out: dict[str, dict[str, float]] = {}
    for key in sorted(by, key=lambda s: (s == "all", s)):
        ms = by[key]
        names = list(ms[0])
        out[key] = {name: sum(m[name] for m in ms) / len(ms) for name in names}
        out[key]["n"] = float(len(ms))
    return out


def format_summary(summary: dict[str, dict[str, float]], metrics: Sequence[str] = ("R@5", "R@10", "S@5")) -> str:
    """A Markdown table: one row per category and overall."""
    lines = ["| category | n | " + " | ".join(metrics) + " |", "| --- | ---: | " + " | ".join("---:" for _ in metrics) + " |"]
    for key, vals in summary.items():
        label = "all" if key == "all" else f"{key} {CATEGORIES.get(int(key), '')}"
        lines.append(f"| {label} | {int(vals['n'])} | " + " | ".join(f"{vals[m]:.3f}" for m in metrics) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    args = ap.parse_args(argv)
    convs = load(args.data)
    nq = sum(len(c.questions) for c in convs)
    print(f"{len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, "
          f"{len({(c.sample_id, t.session) for c in convs for t in c.turns})} sessions, {nq} questions (categories 1-4)")
    for cat, name in CATEGORIES.items():
        print(f"  category {cat} {name}: {sum(q.category == cat for c in convs for q in c.questions)}")
    print("evidence repairs:")
    for c in convs:
        for q, raw, new in c.repairs:
            print(f"  {c.sample_id}: {raw!r} -> {new!r}   ({q[:60]})")
    print("skipped (besides category 5):")
    for c in convs:
        for q, cat, why in c.skipped:
            if cat != 5:
                print(f"  {c.sample_id}: cat {cat}, {why}: {q[:70]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
