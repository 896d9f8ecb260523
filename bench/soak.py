"""Reliability soak: many processes at once, and kill -9 at random points (issue: reliability).

    .venv/bin/python bench/soak.py [--procs 16] [--ops 500] [--crashes 1000] [--report docs/reliability.md]

1. Concurrency: `--procs` worker processes each run `--ops` mixed operations on one scope
   (remember, forget, pin, unpin, log, recall) while one more process edits the files by hand
   (appends hand-written lines, rewrites a line's text). Then: every acknowledged write is in
   the files, every file parses, and the index agrees with the files after a sync (doctor).
2. Crash injection: `--crashes` trials, each starting a writer and killing it with SIGKILL at a
   random moment during remember, log and forget. After each: every file parses, no temp file
   is read as memory, every acknowledged write survived; at the end the index rebuilds and
   doctor reports nothing but leftover temp files.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from remember_latency import write_report  # noqa: E402

from memdream.config import load_config  # noqa: E402
from memdream.doctor import check_vault  # noqa: E402
from memdream.errors import MemdreamError  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.store.format import parse_document  # noqa: E402

START, END = "<!-- soak:start -->", "<!-- soak:end -->"


def _worker(root: str, w: int, ops: int, out) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(w)
    mem = Memory(load_config(root, "me", "main", env={}))
    remembered, logged, forgotten, errors = [], [], [], []
    for i in range(ops):
        op = rng.random()
        try:
            if op < 0.5 or not remembered:
                remembered.append(mem.write(f"工人{w} 第{i}条 fact {w * 100000 + i} {rng.choice(['咖啡', 'tea', '围棋', 'jazz'])}", type="fact").entry.id)
            elif op < 0.6:
                eid = rng.choice(remembered)
                mem.forget(eid)
                forgotten.append(eid)
            elif op < 0.7:
                mem.pin(rng.choice(remembered), pinned=rng.random() < 0.5)
            elif op < 0.82:
                mem.log(f"worker {w} event {i}", f"body {w}-{i}")
                logged.append(f"worker {w} event {i}")
            elif op < 0.85:
                mem.dream(["light"])  # moves and marks among the other writers and the person
            else:
                mem.recall(rng.choice(["咖啡", "tea", "fact", "围棋"]), k=5)
        except MemdreamError as exc:
            if "no memory with id" not in exc.message:  # forgetting twice is an expected refusal
                errors.append(exc.message)
    mem.close()
    out.put({"remembered": remembered, "logged": logged, "forgotten": forgotten, "errors": errors})


def _person(root: str, seconds: float, out) -> None:  # type: ignore[no-untyped-def]
    """A person editing files by hand while the workers run: appends a line, edits a word.

    Modelled on a careful editor (vim's "file changed since reading" check): it saves with
    an atomic rename, and only if the file did not change since it was read; otherwise it
    reloads and edits again. Without that check an editor's stale buffer overwrites whatever
    was written meanwhile, by memdream or anyone else: no tool can prevent that.
    """
    rng = random.Random(99)
    added = []
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        files = [p for p in Path(root).rglob("recall/*.md")]
        if files:
            p = rng.choice(files)
            for _ in range(20):
                before = p.stat().st_mtime_ns, p.stat().st_ino
                text = p.read_text(encoding="utf-8")
                line = f"- 手写的第{n}条 hand note {n}"
                tmp = p.with_name(f".{p.name}.person.tmp")
                tmp.write_text(text.replace("fact", "Fact", 1) + line + "\n", encoding="utf-8")
                if (p.stat().st_mtime_ns, p.stat().st_ino) != before:
                    tmp.unlink()
                    continue  # changed since read: reload, like vim's warning
                os.replace(tmp, p)
                added.append(f"手写的第{n}条 hand note {n}")
                n += 1
                break
        time.sleep(0.05)
    out.put({"hand": added})


def concurrency(procs: int, ops: int, person_seconds: float = 20.0) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdream-soak-") as tmp:
        root = str(Path(tmp) / "v")
        Memory(load_config(root, "me", "main", env={})).vault.init()
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        t0 = time.perf_counter()
        workers = [ctx.Process(target=_worker, args=(root, w, ops, q)) for w in range(procs)]
        person = ctx.Process(target=_person, args=(root, person_seconds, q))
        for p in [*workers, person]:
            p.start()
        results = [q.get(timeout=3600) for _ in range(procs + 1)]
        for p in [*workers, person]:
            p.join()
        seconds = time.perf_counter() - t0
        ids, texts, problems = set(), [], []
        for path in Path(root).rglob("*.md"):
            doc = parse_document(path.read_text(encoding="utf-8"))
            problems += [f"{path}:{n}" for n, ln in enumerate(doc.lines, 1) if ln.problems]
            ids |= {e.id for e in doc.entries()}
            texts.append(path.read_text(encoding="utf-8"))
        blob = "\n".join(texts)
        acked = [i for r in results for i in r.get("remembered", [])]
        logs = [t for r in results for t in r.get("logged", [])]
        hand = [t for r in results for t in r.get("hand", [])]
        mem = Memory(load_config(root, "me", "main", env={}))
        doctor = [str(p) for p in check_vault(mem.vault, mem.index) if "temp file" not in p.message]
        mem.close()
        return {
            "procs": procs, "ops": ops, "seconds": seconds,
            "acked": len(acked), "acked_missing": len(set(acked) - ids),
            "logs": len(logs), "logs_missing": sum(1 for t in logs if f"— {t}" not in blob),
            "hand": len(hand), "hand_missing": sum(1 for t in hand if t not in blob),
            "parse_problems": len(problems), "doctor": doctor,
            "errors": [e for r in results for e in r.get("errors", [])][:5],
        }  # fmt: skip


CHILD = r"""
import sys, random
from memdream.config import load_config
from memdream.memory import Memory
mem = Memory(load_config(sys.argv[1], "me", "main", env={}))
mem.vault.init()
rng = random.Random(int(sys.argv[2]))
i = int(sys.argv[2]) * 1000
while True:
    r = rng.random()
    if r < 0.6:
        print("R", mem.write(f"crash {i} 编号 {i * 7}", type="fact").entry.id, flush=True)
    elif r < 0.85:
        mem.log(f"crash log {i}")
        print("L", f"crash log {i}", flush=True)
    else:
        got = mem.list()
        if got:
            e = got[rng.randrange(len(got))]
            mem.forget(e.id)
            print("F", e.id, flush=True)
    i += 1
"""


def crashes(trials: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="memdream-crash-") as tmp:
        root = Path(tmp) / "v"
        acked_r, acked_l, forgotten = set(), set(), set()
        bad = 0
        for t in range(trials):
            proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), str(t)], stdout=subprocess.PIPE, text=True)
            deadline = time.monotonic() + rng.uniform(0.3, 1.0)
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    break
                kind, _, val = line.strip().partition(" ")
                {"R": acked_r, "L": acked_l, "F": forgotten}[kind].add(val)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            ids, blob = set(), []
            for p in root.rglob("*.md"):
                text = p.read_text(encoding="utf-8")
                blob.append(text)
                doc = parse_document(text)
                if any(ln.problems for ln in doc.lines):
                    bad += 1
                ids |= {e.id for e in doc.entries()}
            joined = "\n".join(blob)
            if acked_r - ids or any(f"— {t2}" not in joined for t2 in acked_l):
                bad += 1
        mem = Memory(load_config(root, "me", "main", env={}))
        n = mem.index.rebuild(mem.vault.scopes())
        doctor = [str(p) for p in check_vault(mem.vault, mem.index) if "temp file" not in p.message]
        temps = sum(1 for p in root.rglob(".*.tmp"))
        listed = len(mem.list(include_ended=True))
        mem.close()
        return {"trials": trials, "acked_remember": len(acked_r), "acked_log": len(acked_l), "acked_forget": len(forgotten),
                "bad_trials": bad, "rebuilt_entries": n, "listed": listed, "doctor": doctor, "temp_files_left": temps}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=16)
    ap.add_argument("--ops", type=int, default=500)
    ap.add_argument("--crashes", type=int, default=1000)
    ap.add_argument("--report", default="docs/reliability.md")
    args = ap.parse_args()
    print(f"[soak] concurrency: {args.procs} x {args.ops} ...", file=sys.stderr, flush=True)
    c = concurrency(args.procs, args.ops)
    print(f"[soak] {json.dumps(c, ensure_ascii=False)}", file=sys.stderr, flush=True)
    print(f"[soak] crash injection: {args.crashes} trials ...", file=sys.stderr, flush=True)
    k = crashes(args.crashes)
    print(f"[soak] {json.dumps(k, ensure_ascii=False)}", file=sys.stderr, flush=True)
    cmd = f"python bench/soak.py --procs {args.procs} --ops {args.ops} --crashes {args.crashes}"
    lines = [
        START,
        "## Soak (bench/soak.py)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; run on {datetime.now():%Y-%m-%d}.",
        "",
        "| check | figure |",
        "| --- | --- |",
        f"| concurrency: processes x mixed operations (+1 person editing by hand) | {c['procs']} x {c['ops']} in {c['seconds']:.0f} s |",
        f"| acknowledged remembers missing from the files | {c['acked_missing']} of {c['acked']} |",
        f"| acknowledged log blocks missing | {c['logs_missing']} of {c['logs']} |",
        f"| hand-written lines lost | {c['hand_missing']} of {c['hand']} |",
        f"| lines that do not parse | {c['parse_problems']} |",
        f"| doctor problems after sync (temp files aside) | {len(c['doctor'])} |",
        f"| crash injection: kill -9 trials during remember, log, forget | {k['trials']} |",
        f"| trials after which a file did not parse or an acknowledged write was missing | {k['bad_trials']} |",
        f"| acknowledged remembers / log blocks / forgets over all trials | {k['acked_remember']} / {k['acked_log']} / {k['acked_forget']} |",
        f"| index rebuilt after the trials (entries) / doctor problems (temp files aside) | {k['rebuilt_entries']} / {len(k['doctor'])} |",
        f"| temp files left by killed writers (never read as memory) | {k['temp_files_left']} |",
        END,
    ]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.report:
        path = Path(args.report)
        if not path.exists():
            path.write_text("# Reliability\n\nFigures measured by `bench/soak.py` and the suite's tests (tests/test_reliability.py,\ntests/test_concurrency.py, tests/test_fuzz.py, tests/test_isolation.py, tests/test_secrets.py).\n\n", encoding="utf-8")
        write_report(path, section, START, END)


if __name__ == "__main__":
    main()
