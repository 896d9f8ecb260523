"""Keyword recall on the team server at size, in process (no MCP, no HTTP): a folder vault of
N entries (bench/corpus.py's facts, as bench/team_bench.py builds it) is pushed into a
throwaway PostgreSQL, then each query runs `StoreMemory.recall` (recall/search.py's scoring,
the hit counts appended), p50/p95, two ways in the same run: the database's own path (its
postings and statistics, in SQL) and a process holding the in-process copy of the scope's
postings (team/postings.py: what a server uses for a scope of 50k lines and more once the
copy is built; its build time is reported). Then the top hit of the first `--forgets` queries
is forgotten, one `forget` at a time, p50/p95, and one more recall of the copy's process
times following those changes.

    python bench/team_recall.py [--entries 100000] [--queries 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--forgets", type=int, default=30, help="entries forgotten one by one after the recalls, timed")
    args = ap.parse_args()
    from corpus import facts
    from recall_latency import make_queries
    from remember_latency import pct, populate

    from memdream.config import load_config
    from memdream.memory import Memory
    from memdream.store.vault import Scope
    from memdream.team import open_store, push_vault, scope_handle, throwaway_cluster

    pg, why = throwaway_cluster()
    if pg is None:
        sys.exit(f"needs PostgreSQL: {why}")
    try:
        tmp = Path(tempfile.mkdtemp(prefix="memdream-bench-recall-"))
        texts = facts(args.entries, seed=11)
        queries = make_queries(texts, args.queries)
        m = Memory(load_config(tmp / "vault", "big", "main", env={}))
        m.vault.init()
        populate(m, texts)
        m.close()
        # the database's own path: this process never copies the postings
        store = open_store(pg.new_database("bench_recall"), load_config(tmp / "settings", env={}), cache_dir=tmp, postings_min_entries=10**12)
        t = time.perf_counter()
        push_vault(store, tmp / "vault")
        push_s = time.perf_counter() - t
        with store.pool.connection() as conn:  # what autovacuum does in a while: the planner's statistics
            conn.autocommit = True
            conn.execute("VACUUM ANALYZE")
            conn.autocommit = False
        mem = scope_handle(store, "big", "main")
        ms, found = [], 0
        for q in queries:
            t = time.perf_counter()
            hits = mem.recall(q, k=10)
            ms.append((time.perf_counter() - t) * 1000)
            found += bool(hits)
        # Another process of the same server, holding the copy of the scope's postings.
        copying = open_store(store.url, load_config(tmp / "settings2", env={}), cache_dir=tmp, postings_min_entries=1)
        t = time.perf_counter()
        built = copying.postings_ready(Scope("big", "main"), timeout=3600)
        build_s = time.perf_counter() - t
        cmem = scope_handle(copying, "big", "main")
        cms = []
        for q in queries:
            t = time.perf_counter()
            cmem.recall(q, k=10)
            cms.append((time.perf_counter() - t) * 1000)
        served = copying.postings_status().get(Scope("big", "main").key, {}).get("served", 0)
        # A line rewritten in place (forget marks it ended): its file's changed rows and their
        # postings are replaced in the write's transaction.
        ids = list(dict.fromkeys(h.entry.id for q in queries[: args.forgets] for h in mem.recall(q, k=1)))
        fms = []
        for eid in ids:
            t = time.perf_counter()
            mem.forget(eid)
            fms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        cmem.recall(queries[0], k=10)  # the copy follows the forgets' rewritten files first
        follow_ms = (time.perf_counter() - t) * 1000
        print(
            f"entries {args.entries:,}: push {push_s:.1f} s; recall on the database's path p50 {pct(ms, 50):.1f} ms, p95 {pct(ms, 95):.1f} ms "
            f"over {len(ms)} queries ({found} with hits); with the postings copy (built in {build_s:.1f} s{'' if built else ', NOT built'}; "
            f"{served} of {len(cms)} answered from it) p50 {pct(cms, 50):.1f} ms, p95 {pct(cms, 95):.1f} ms; "
            f"forget p50 {pct(fms, 50):.1f} ms, p95 {pct(fms, 95):.1f} ms over {len(fms)}; the copy's next recall after them {follow_ms:.1f} ms"
        )
        copying.close()
        store.close()
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
