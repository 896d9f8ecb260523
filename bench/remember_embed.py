"""Benchmark: what an embedder costs `remember` (restatements are looked for by cosine at write).

    OMP_NUM_THREADS=1 .venv/bin/python bench/remember_embed.py [--embedder use] [--sizes 1000,10000] [--writes 100]

As bench/remember_latency.py (the same corpus, layout and writes), once without and once with
the embedder, in the same run; with it, every existing entry is embedded first (not timed),
then each write embeds its text and compares it with its nearest entries. Prints a table (the
figures in docs/benchmarks.md, remember block, were pasted from it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import facts  # noqa: E402
from remember_latency import pct, populate  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.embed.embedder import load_embedder  # noqa: E402
from memdream.memory import Memory  # noqa: E402


def run(size: int, writes: int, embedder) -> dict:  # type: ignore[no-untyped-def]
    corpus = facts(size + writes, seed=11)
    existing, new = corpus[:size], corpus[size:]
    with tempfile.TemporaryDirectory(prefix="memdream-bench-") as tmp:
        mem = Memory(load_config(Path(tmp) / "vault", "me", "main", env={}), embedder=embedder)
        mem.vault.init()
        populate(mem, existing)
        mem.index.rebuild(mem.vault.scopes())
        if embedder is not None:
            mem.embed_pending()
        lat, actions = [], {}
        for text in new:
            t1 = time.perf_counter()
            out = mem.write(text, type="fact")
            lat.append((time.perf_counter() - t1) * 1000)
            actions[out.action] = actions.get(out.action, 0) + 1
        mem.close()
    return {"p50": statistics.median(lat), "p99": pct(lat, 99), "actions": actions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="use")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--writes", type=int, default=100)
    args = ap.parse_args()
    emb = load_embedder(args.embedder)
    print(f"| entries | without: p50 / p99 (ms) | with `{args.embedder}`: p50 / p99 (ms) |")
    print("| ---: | ---: | ---: |")
    for size in [int(s) for s in args.sizes.split(",")]:
        a, b = run(size, args.writes, None), run(size, args.writes, emb)
        print(f"| {size:,} | {a['p50']:.2f} / {a['p99']:.2f} | {b['p50']:.2f} / {b['p99']:.2f} |", flush=True)
        print(f"  actions without {a['actions']}, with {b['actions']}", file=sys.stderr)


if __name__ == "__main__":
    main()
