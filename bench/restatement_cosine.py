"""Benchmark: at which cosine does each embedder take two texts for one fact?

    .venv/bin/python bench/restatement_cosine.py [--embedders use,e5,minilm,static] [--thresholds 0.8,0.9]
                                                [--data ../shared/bench/locomo/locomo10.json] [--report docs/benchmarks.md]

The contradiction corpus (bench/fact_pairs.py) cannot choose the threshold: its look-alikes
are told apart by the lexical guards whatever the cosine, so its sweep is flat. This one
replays the writes of the 90-day life (bench/dream_life.py: its seeded stream of 788 LoCoMo
turns, 55 repeats, 30 personal facts and their changes, and 361 restatements in other words,
each with the fact it says) into a fresh vault, once per embedder and threshold, through
`Memory.write` as the life writes them (the embedder passed in through the `embedder=` seam;
the threshold set as `[embedder] restatement_cosine` would set it). Reported:

- restatements written as new entries (of 361): what the threshold fails to fold;
- folds into the wrong entry: a write taken as a duplicate of an entry that holds none of the
  facts it says (a lost memory); the lexical rule alone makes some (short messages folded into
  a longer one of the same speaker), shown as the row without an embedder.

What an embedder ships with (`restatement_cosine`): 0.80, the contradiction corpus' figure,
unless this replay shows it folding by meaning into entries of other facts more than once at
0.80; then 0.90.
Every such fold is listed in the report, to be judged by a reader.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dream_life as dl  # noqa: E402
import locomo  # noqa: E402
from remember_latency import cpu_name, write_report  # noqa: E402

import memdream.core as core_module  # noqa: E402
from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.embed.embedder import load_embedder  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.model.similarity import restatement_cosine  # noqa: E402

START, END = "<!-- bench:restatement-cosine:start -->", "<!-- bench:restatement-cosine:end -->"


def replay(stream: dl.Stream, embedder, threshold: float | None, seed: int) -> dict:  # type: ignore[no-untyped-def]
    core_module._random = random.Random(seed)  # deterministic entry ids (this process only)
    clock = FrozenClock(dl.START)
    with tempfile.TemporaryDirectory(prefix="md-rc-") as tmp:
        root = Path(tmp)
        if threshold is not None:
            (root / "memdream.toml").write_text(f"[embedder]\nrestatement_cosine = {threshold}\n", encoding="utf-8")
        mem = Memory(load_config(root, "me", "main", env={}), clock, embedder=embedder)
        mem.vault.init()
        own: dict[str, set[str]] = defaultdict(set)
        actions: Counter = Counter()
        wrong: list[tuple[str, str]] = []
        t = time.perf_counter()
        for d, day in enumerate(stream.days):
            for ev, out in dl.write_day(mem, clock, d, day):  # as the life writes them
                if out is None:
                    continue
                actions[f"{ev.kind}: {out.action}"] += 1
                if out.action == "duplicate" and ev.key not in own[out.entry.id]:
                    wrong.append((ev.text, out.entry.text))
                own[out.entry.id].add(ev.key)
        seconds = time.perf_counter() - t
        mem.close()
    return {"new": actions["paraphrase: added"] + actions["fact-paraphrase: added"], "wrong": wrong, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedders", default="use,e5,minilm,static")
    ap.add_argument("--thresholds", default="0.8,0.9")
    ap.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--report", default="")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    stream = dl.build_stream(locomo.load(args.data)[:2], 90, 50, args.seed)
    n_rest = stream.n_paraphrases + stream.n_fact_paraphrases
    thresholds = [float(x) for x in args.thresholds.split(",")]
    rows: list[tuple[str, str, dict]] = []
    base = replay(stream, None, None, args.seed)
    print(f"[rc] no embedder: {base['new']} restatements written as new, {len(base['wrong'])} wrong folds", file=sys.stderr, flush=True)
    rows.append(("none (lexical rule only)", "-", base))
    own_figure: dict[str, float] = {}
    for name in args.embedders.split(","):
        emb = load_embedder(name)
        own_figure[name] = restatement_cosine(emb)
        for th in thresholds:
            r = replay(stream, emb, th, args.seed)
            print(f"[rc] {name} >= {th}: {r['new']} restatements written as new, {len(r['wrong'])} wrong folds ({r['seconds']:.0f} s)", file=sys.stderr, flush=True)
            rows.append((name, f"{th:.2f}", r))
    lexical = {t for t in base["wrong"]}
    out = [
        START,
        "## The restatement cosine of each embedder (bench/restatement_cosine.py)",
        "",
        f"Command: `python bench/restatement_cosine.py --embedders {args.embedders} --thresholds {args.thresholds}"
        + (f" --report {args.report}" if args.report else "") + "`  ",
        f"Machine: {cpu_name()}; run on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {time.perf_counter() - t0:.0f} s in all.",
        "",
        f"The writes of the 90-day life (bench/dream_life.py, seed {args.seed}: {stream.n_turns} LoCoMo turns, their repeats, 30 personal facts "
        f"and their changes, {n_rest} restatements in other words), replayed into a fresh vault per row through `Memory.write`, the "
        "threshold set as `[embedder] restatement_cosine`. A wrong fold is a write taken as a duplicate of an entry holding none "
        "of the facts it says; the lexical rule makes some on its own (the first row: short messages folded into a longer one of "
        "the same speaker); \"by meaning\" counts the others. An embedder ships with 0.80, the contradiction corpus' figure "
        "(bench/fact_pairs.py), unless it folds by meaning into entries of other facts more than once here at 0.80 (of about 1,280 writes); then with 0.90. Each such "
        "fold is listed below.",
        "",
        "| embedder | cosine >= | restatements written as new (of %d) | wrong folds | of them by meaning | ships with |" % n_rest,
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, th, r in rows:
        by_meaning = [w for w in r["wrong"] if w not in lexical]
        ships = f"{own_figure[name]:.2f}" if name in own_figure else "-"
        out.append(f"| {name} | {th} | {r['new']} | {len(r['wrong'])} | {len(by_meaning) if name in own_figure else '-'} | {ships} |")
    examples = [(name, th, w) for name, th, r in rows if name in own_figure for w in r["wrong"] if w not in lexical]
    if examples:
        out += ["", "Every fold by meaning into an entry of another fact:", ""]
        out += [f"- {name} at {th}: {a[:90]!r} taken for {b[:90]!r}" for name, th, (a, b) in examples]
    out.append(END)
    section = "\n".join(out) + "\n"
    if args.report:
        write_report(Path(args.report), section, START, END)
    print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
