"""MemoryBank English histories as a recall set with gold answers by hand.

    python bench/sets/memorybank_en.py [--data ../shared/bench]

prints the counts and three examples.

The data (Zhong et al., AAAI 2024; MIT) is read at run time from
``../shared/bench/memorybank/en/`` and never copied into this repository. It is a translation of
the Chinese histories (memorybank_zh): the same 15 users in the same order (张曼婷 is "Emily",
王峰 "Frank", ...; the stray spaces of " Jason ", " Linda", " Ivy ", " Roland " are stripped for
ids), the same ten days (2023-04-27 .. 2023-05-06), every day a list of {query, response}.

- Memories, timestamps and ids as in memorybank_zh (its loader, run on the English files):
  ``{user}/{date}/{turn}/q`` for the user's message, ``.../r`` for the AI reply; that day at
  20:00 Asia/Shanghai plus 2 minutes per turn, the reply a minute later; asked two days after the
  user's last day, at 10:00. Metric: recall@5.
- Questions (``memorybank_en_questions.json``, ours): the dataset's English probing questions
  (``probing_questions_en.jsonl``, translations of the Chinese ones in the same order; the file
  stores only their index and our gold ids) and questions we wrote in English as a user would ask
  about themselves (119, 7-8 per user), each pointing at the message(s) that answer it:
  "lexical" (reuses words of the memory; 44), "paraphrase" (says it in other words; 45) and
  "short" (one or two words: "tea", "scuba diving"; 30).
- Probe gold: each Chinese probe's gold ids carried to the English message at the same (user,
  date, turn, part), then every one checked by reading the English message against the English
  question. Four users' turn counts differ from the Chinese on one day (Lucy 2023-05-06 keeps
  only the first turn, Sunny 2023-05-06 lost its first query so each query sits with the reply
  to the one before, John Zhang 2023-05-05 is empty, Roland 2023-04-30 holds the same four
  turns twice, translated twice). Fixed by hand: Roland's probes 0-2 (games, films, what we
  talked about on April 30th) also take the repeated turns (04-30/5 and 04-30/6), which answer
  them as well. Left out: John Zhang's probe 4 ("What dish did I make on May 5th?"): that day
  is empty in English and no other English message says it, so 99 of the 100 probes are asked.

Every gold id is checked against the loaded memories; a missing one fails loudly.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.sets import inspect_main, SuiteSet  # noqa: E402
from bench.sets.memorybank_zh import build, describe  # noqa: E402

QUESTIONS = Path(__file__).resolve().with_name("memorybank_en_questions.json")
FILES = {"folder": "en", "histories": "memory_bank_en.json", "probing": "probing_questions_en.jsonl"}


def load(data_dir: Path | None = None, seed: int = 0, questions_file: Path | None = None) -> SuiteSet:
    """The set; ``seed`` is accepted for the common signature (nothing here is random)."""
    return build("memorybank_en", "en", "English", Path(questions_file) if questions_file is not None else QUESTIONS, data_dir, **FILES)


def main(argv: list[str] | None = None) -> int:
    return inspect_main(__doc__, load, describe, argv)


if __name__ == "__main__":
    sys.exit(main())
