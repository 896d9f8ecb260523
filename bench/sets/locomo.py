"""LoCoMo in the suite's shape: one memory per turn ("Speaker: text [image: caption]"), each
conversation its own scope, written at its session's date (5 s a turn), asked 10 minutes after
the last turn; turn-level evidence recall@10 over categories 1-4 (bench/locomo.py's loader and
evidence repairs).

    python bench/sets/locomo.py     # counts and examples
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import locomo  # noqa: E402  (bench/locomo.py)
from bench.sets import SHARED, Memory, Question, SuiteSet  # noqa: E402

SECONDS_PER_TURN = 5
QUERY_AFTER = timedelta(minutes=10)
_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def _when(s: str) -> datetime:
    return datetime.strptime(s.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def load(data_dir: Path | None = None, seed: int = 0) -> SuiteSet:
    path = (data_dir or SHARED / "locomo") / "locomo10.json"
    memories: list[Memory] = []
    questions: list[Question] = []
    asked: dict[str, datetime] = {}
    for conv in locomo.load(path):
        last_session, i, last = None, 0, None
        for t in conv.turns:
            if t.session != last_session:
                last_session, i = t.session, 0
            at = _when(t.session_date) + timedelta(seconds=SECONDS_PER_TURN * i)
            i += 1
            text = _BREAKS.sub(" ", t.memory()).strip()
            memories.append(Memory(f"{conv.sample_id}/{t.dia_id}", conv.sample_id, text, at))
            last = at if last is None or at > last else last
        asked[conv.sample_id] = (last or datetime.now(timezone.utc)) + QUERY_AFTER
        for q in conv.questions:
            gold = tuple(f"{conv.sample_id}/{d}" for d in q.evidence)
            questions.append(Question(conv.sample_id, q.question, gold, category=locomo.CATEGORIES[q.category]))
    return SuiteSet(
        "locomo",
        "LoCoMo (10 long two-person conversations, 5,882 turns): turn evidence recall@10, categories 1-4",
        "en",
        "recall",
        10,
        memories,
        questions,
        asked,
    )


if __name__ == "__main__":
    s = load()
    print(f"{s.name}: {len(s.memories)} memories, {len(s.questions)} questions, {len(s.asked_at)} conversations")
    for q in s.questions[:3]:
        print(" ", q.text, "->", q.gold)
