"""Benchmark: dedup on the contradiction corpus (tests/data/fact_pairs.py), with and without an embedder.

    .venv/bin/python bench/fact_pairs.py [--embedder use] [--report docs/benchmarks.md]

Each pair is (earlier, later). Folded means the later text would be taken as the earlier one
said again:

- lexical (no embedder): `memdream.model.similarity.is_duplicate(later, earlier)`, the write
  path's rule;
- with an embedder: lexical, or the rule of the write path and the light phase: cosine of the
  two texts at least the embedder's `restatement_cosine` and `may_fold_by_meaning` (no contradiction signal
  either way, not one frame with a short part replaced as in "My editor is Vim" / "... Emacs",
  and most of the shorter text's words in the other); or the write path's second rule: the later
  text says again one sentence of the earlier message (cosine with that sentence, three quarters
  of its words there, each clause drawn from it: `memdream.index.slots.restated_sentence`).

Reported: contradictions folded (the goal is 0), restatements folded (the goal: >= 50% without
an embedder, >= 90% with one), per kind, and how the share moves with the cosine threshold
(the figure each embedder's `restatement_cosine` is checked against).

Then the write path itself, without an embedder: each pair written into a fresh vault, the
earlier text five minutes before the later one, and what became of the later one (added,
duplicate, superseded, or added with a conflict opened). And the other side of that rule:
the conflicts opened while whole conversations of the recall suite's sets are written
(`--chat-sets`, bench/sets/; small talk that only looks alike must open none).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from remember_latency import cpu_name, write_report  # noqa: E402

from memdream.embed.embedder import load_embedder  # noqa: E402
from memdream.model.similarity import contradiction, is_duplicate, may_fold_by_meaning, message_sentences, restated_among, restatement_cosine, value_swap  # noqa: E402

REPORT_START = "<!-- bench:fact-pairs:start -->"
REPORT_END = "<!-- bench:fact-pairs:end -->"
THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def load_corpus():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("fact_pairs_corpus", HERE.parent / "tests" / "data" / "fact_pairs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CONTRADICTIONS, module.RESTATEMENTS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="use")
    ap.add_argument("--report", default="docs/benchmarks.md")
    ap.add_argument("--chat-sets", default="memorybank_zh,memorybank_en,locomo,filler,changing", help="recall-suite sets whose conversations are written to count the conflicts they open ('' for none)")
    ap.add_argument("--data", type=Path, default=None, help="where the public sets are (default ../shared/bench)")
    args = ap.parse_args()
    contra, restate = load_corpus()
    emb = load_embedder(args.embedder)
    import numpy as np

    def cosines(pairs: list[tuple[str, str, str]]) -> list[float]:
        a = emb.embed([x for _, x, _ in pairs])
        b = emb.embed([y for _, _, y in pairs])
        return [float(v) for v in np.sum(np.asarray(a) * np.asarray(b), axis=1)]

    cc, rc = cosines(contra), cosines(restate)
    lex_c = [is_duplicate(b, a) or is_duplicate(a, b) for _, a, b in contra]
    lex_r = [is_duplicate(b, a) for _, a, b in restate]
    sig_c = [bool(contradiction(a, b) or contradiction(b, a)) for _, a, b in contra]
    sig_r = [bool(contradiction(a, b) or contradiction(b, a)) for _, a, b in restate]
    swap_c = [value_swap(a, b) for _, a, b in contra]
    swap_r = [value_swap(a, b) for _, a, b in restate]

    may_c = [may_fold_by_meaning(a, b) for _, a, b in contra]
    may_r = [may_fold_by_meaning(a, b) for _, a, b in restate]

    # The write path's second rule: the new text says again one sentence of a longer message
    # (index/slots.py `restated_sentence`): the best cosine with a sentence it may fold into.
    def sentence_cos(new: str, old: str) -> float:
        said = message_sentences(old)
        if not said:
            return -1.0
        v = np.asarray(emb.embed([new] + said))
        cos = (v[1:] @ v[0]).tolist()
        i = restated_among(new, said, cos, -1.0)
        return -1.0 if i is None else cos[i]

    sent_c = [max(sentence_cos(a, b), sentence_cos(b, a)) for _, a, b in contra]
    sent_r = [sentence_cos(b, a) for _, a, b in restate]

    def with_emb(lex: list[bool], sig: list[bool], swap: list[bool], cos: list[float], t: float) -> list[bool]:
        may, sent = (may_c, sent_c) if lex is lex_c else (may_r, sent_r)
        return [lx or (c >= t and m) or sc >= t for lx, m, c, sc in zip(lex, may, cos, sent)]

    threshold = restatement_cosine(emb)
    emb_c = with_emb(lex_c, sig_c, swap_c, cc, threshold)
    emb_r = with_emb(lex_r, sig_r, swap_r, rc, threshold)
    kinds_c = Counter(k for k, _, _ in contra)
    kinds_r = Counter(k for k, _, _ in restate)

    def per_kind(pairs, flags, kinds) -> str:  # type: ignore[no-untyped-def]
        got = Counter(k for (k, _, _), f in zip(pairs, flags) if f)
        return ", ".join(f"{k} {got[k]}/{n}" for k, n in sorted(kinds.items()))

    lines = [
        "## Dedup on the contradiction corpus (bench/fact_pairs.py)",
        "",
        f"Command: `python bench/fact_pairs.py --embedder {args.embedder} --report docs/benchmarks.md`  ",
        f"Machine: {cpu_name()}, Python {platform.python_version()}; embedder `{emb.model_id}`; run on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.",
        "",
        f"Corpus: `tests/data/fact_pairs.py`, written by hand: {len(contra)} look-alike pairs that mean different things "
        f"({', '.join(f'{k} {n}' for k, n in sorted(kinds_c.items()))}) and {len(restate)} true restatements "
        f"({', '.join(f'{k} {n}' for k, n in sorted(kinds_r.items()))}), about half Chinese.",
        "",
        "| rule | contradictions folded | restatements folded |",
        "| --- | ---: | ---: |",
        f"| lexical (write path, no embedder) | {sum(lex_c)} / {len(contra)} | {sum(lex_r)} / {len(restate)} ({sum(lex_r) / len(restate):.1%}) |",
        f"| with `{args.embedder}`: lexical, or cosine >= {threshold} (its `restatement_cosine`) and `may_fold_by_meaning`, or one sentence of a longer message restated (write path; the light phase compares whole texts) "
        f"| {sum(emb_c)} / {len(contra)} | {sum(emb_r)} / {len(restate)} ({sum(emb_r) / len(restate):.1%}) |",
        "",
        f"Lexical, restatements folded by kind: {per_kind(restate, lex_r, kinds_r)}.  ",
        f"With the embedder: {per_kind(restate, emb_r, kinds_r)}; contradictions folded by kind: {per_kind(contra, emb_c, kinds_c) or 'none'}.  ",
        f"Contradiction signals: {sum(sig_c)} of {len(contra)} contradictions carry one, and {sum(w and not s for w, s in zip(swap_c, sig_c))} more are value swaps "
        f"(what is left differs by a content word, which the lexical rule sees); {sum(sig_r)} of {len(restate)} restatements carry a signal wrongly "
        f"and {sum(w and not s for w, s in zip(swap_r, sig_r))} look like a value swap; {sum(not m for m in may_r)} restatements in all may not be folded by meaning.",
        "",
        "Cosine threshold sweep (with the embedder, lexical folds included):",
        "",
        "| cosine >= | contradictions folded | restatements folded |",
        "| ---: | ---: | ---: |",
    ]
    for t in THRESHOLDS:
        c, r = with_emb(lex_c, sig_c, swap_c, cc, t), with_emb(lex_r, sig_r, swap_r, rc, t)
        lines.append(f"| {t} | {sum(c)} | {sum(r)} ({sum(r) / len(restate):.1%}) |")
    lines += write_path_section(contra, kinds_c)
    if args.chat_sets:
        lines += chat_section([x for x in args.chat_sets.split(",") if x], args.data)
    body = "\n".join(lines)
    print(body)
    if args.report:
        write_report(Path(args.report), REPORT_START + "\n" + body + "\n" + REPORT_END, REPORT_START, REPORT_END)


def write_path_section(contra: list[tuple[str, str, str]], kinds: Counter) -> list[str]:
    import tempfile
    from datetime import timedelta

    from memdream.clock import FrozenClock
    from memdream.config import load_config
    from memdream.memory import Memory

    t0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
    got: dict[str, Counter] = {k: Counter() for k in kinds}
    with tempfile.TemporaryDirectory() as d:
        for i, (kind, a, b) in enumerate(contra):
            clock = FrozenClock(t0)
            mem = Memory(load_config(Path(d) / f"v{i}", "u", "a", env={}), clock)
            mem.vault.init()
            mem.write(a)
            clock.set(t0 + timedelta(minutes=5))
            out = mem.write(b)
            got[kind]["conflict" if out.action == "added" and out.contradicts is not None else out.action] += 1
    cols = ("superseded", "conflict", "added", "duplicate")
    lines = [
        "",
        "The write path on the same pairs (no embedder; the later text written five minutes after the earlier one, each pair in a fresh vault). "
        "A change of a fact supersedes it when the two share a subject and opens a conflict otherwise; speaker and asking pairs are other acts, "
        "and a value swapped without a signal (\"I am learning Spanish\" / \"... Japanese\") two facts, both added, unless a slot with one answer holds it "
        "(\"I mostly write Python\" / \"... Go\": the main language, superseded):",
        "",
        "| kind | " + " | ".join(cols) + " |",
        "| --- | " + " | ".join("---:" for _ in cols) + " |",
    ]
    for k in sorted(kinds):
        lines.append(f"| {k} | " + " | ".join(str(got[k][c]) for c in cols) + " |")
    return lines


def chat_section(names: list[str], data: Path | None) -> list[str]:
    """Conflicts opened while whole conversations are written (bench/recall_suite.py's ingest)."""
    import tempfile

    from recall_suite import ingest, load_set  # it puts the repository on sys.path for bench.sets
    lines = ["", "Conflicts opened while the recall suite's conversations are written message by message (each a scope; small talk that only looks alike should open none):", "", "| set | messages | conflicts opened | per 1,000 messages |", "| --- | ---: | ---: | ---: |"]
    for name in names:
        s = load_set(name, data, 0)
        convs: dict[str, list] = {}
        for m in s.memories:
            convs.setdefault(m.conv, []).append(m)
        n = opened = 0
        with tempfile.TemporaryDirectory() as d:
            for i, (conv, ms) in enumerate(sorted(convs.items())):
                c = ingest(Path(d) / f"c{i}", conv, sorted(ms, key=lambda m: m.at))
                opened += sum(1 for x in c.mem.conflicts() if x.kind == "entry")
                n += len(ms)
        print(f"{name}: {opened} conflicts over {n} messages", file=sys.stderr)
        lines.append(f"| {name} | {n:,} | {opened} | {1000 * opened / n:.1f} |")
    return lines


if __name__ == "__main__":
    main()
