"""Coverage-guided fuzzing (atheris) of every parser that reads what others wrote (issue:
reliability). The suite has hypothesis property tests for the same targets; this runs longer.

    pip install atheris                       # a wheel for CPython 3.11 on x86_64 Linux
    python bench/fuzz.py [--seconds 60] [--targets line,frontmatter,config,importers,validator] [--report docs/reliability.md]

Each target runs in its own process for the given time: a crash (any exception other than
the documented refusals) or a hang stops it with a reproducer file under bench/out/fuzz/.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
START, END = "<!-- fuzz:start -->", "<!-- fuzz:end -->"

TARGETS = {
    "line": "the line parser and document renderer (store/format.py)",
    "frontmatter": "knowledge files: frontmatter, paragraphs, markers (knowledge/notes.py)",
    "config": "memdream.toml (config.py)",
    "importers": "the jsonl, chatgpt and markdown importers and the memory-folder reader",
    "validator": "the dream cage: operations, ids, grounding (dream/validate.py)",
}

CHILD = r'''
import sys, json, tempfile, os
from pathlib import Path
import atheris

with atheris.instrument_imports():
    from memdream.errors import MemdreamError
    from memdream.store.format import parse_document
    from memdream.knowledge.notes import parse_note, paragraphs
    from memdream.config import load_config
    from memdream.importers import read
    from memdream.importers.folders import list_items
    from memdream.dream.validate import Ids, Invalid, check_text, operations

TARGET = sys.argv.pop(1)
TMP = Path(tempfile.mkdtemp(prefix="md-fuzz-"))


def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    if TARGET == "line":
        text = fdp.ConsumeUnicodeNoSurrogates(4096)
        doc = parse_document(text)
        assert doc.render() == text  # byte for byte: what a person typed is kept
        for ln in doc.lines:
            _ = ln.entry, ln.problems
    elif TARGET == "frontmatter":
        text = fdp.ConsumeUnicodeNoSurrogates(4096)
        try:
            note = parse_note(text)
            paragraphs(note.body)
        except MemdreamError:
            pass
    elif TARGET == "config":
        (TMP / "memdream.toml").write_bytes(fdp.ConsumeBytes(2048))
        try:
            load_config(TMP, env={})
        except MemdreamError:
            pass
    elif TARGET == "importers":
        fmt = ["jsonl", "chatgpt", "markdown"][fdp.ConsumeIntInRange(0, 2)]
        p = TMP / "in.txt"
        raw = fdp.ConsumeBytes(4096)
        p.write_bytes(raw)
        try:
            list(read(fmt, p))
        except MemdreamError:
            pass
        list(list_items(raw.decode("utf-8", "replace"), "x", paragraphs=True))
    elif TARGET == "validator":
        # Replies built from the fuzzer's bytes: lists of operations with odd kinds, ids and texts.
        def value(depth=0):
            kind = fdp.ConsumeIntInRange(0, 6 if depth < 2 else 4)
            if kind == 0:
                return fdp.ConsumeIntInRange(-3, 12)
            if kind == 1:
                return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 120))
            if kind == 2:
                return None
            if kind == 3:
                return fdp.ConsumeBool()
            if kind == 4:
                return fdp.ConsumeFloat()
            if kind == 5:
                return [value(depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 4))]
            keys = ["op", "ids", "id", "text", "why", "type", "operations"]
            return {keys[fdp.ConsumeIntInRange(0, 6)]: value(depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 4))}

        reply = {"operations": [
            {"op": ["merge", "keep", "add", "delete", fdp.ConsumeUnicodeNoSurrogates(8)][fdp.ConsumeIntInRange(0, 4)],
             "ids": value(), "text": fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 200)) if fdp.ConsumeBool() else value()}
            for _ in range(fdp.ConsumeIntInRange(0, 5))
        ]} if fdp.ConsumeBool() else value()
        sources = ["Lin drinks coffee every morning", "我每周三去游泳 2 次"]
        ids = Ids({1: sources[0], 2: sources[1], 3: "fixed rule"}, frozenset({3}))
        try:
            ops = operations(reply)
        except Invalid:
            return
        for op in ops:
            if isinstance(op, dict):
                try:
                    chosen = ids.take(op.get("ids"), at_least=1)
                    assert set(chosen) <= {1, 2}  # never an unshown or fixed id
                    text = check_text(op.get("text"), [sources[i - 1] for i in chosen], 2000, keep_numbers_of=[sources[i - 1] for i in chosen])
                    assert text.strip()
                    ids.commit(chosen)
                except Invalid:
                    pass


atheris.Setup(sys.argv, one)
atheris.Fuzz()
'''


def run(target: str, seconds: int, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, target, f"-max_total_time={seconds}", "-timeout=10", f"-artifact_prefix={out}/{target}-", "-print_final_stats=1"],
        capture_output=True,
        text=True,
    )
    stats = {k: v for line in proc.stderr.splitlines() if line.startswith("stat::") for k, _, v in [line[6:].partition(":")]}
    return {
        "target": target,
        "ok": proc.returncode == 0,
        "seconds": time.monotonic() - t0,
        "runs": int(stats.get("number_of_executed_units", "0").strip() or 0),
        "tail": "" if proc.returncode == 0 else proc.stderr[-1500:],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--report", type=Path, default=None)
    args = ap.parse_args()
    try:
        import atheris  # noqa: F401
    except ImportError:
        sys.exit("bench/fuzz.py needs atheris: pip install atheris")
    rows = []
    for t in args.targets.split(","):
        r = run(t, args.seconds, HERE / "out" / "fuzz")
        print(f"{t:12} {'ok' if r['ok'] else 'CRASH'}  {r['runs']:,} inputs in {r['seconds']:.0f} s", flush=True)
        if not r["ok"]:
            print(r["tail"])
        rows.append(r)
    if args.report:
        sys.path.insert(0, str(HERE))
        from remember_latency import cpu_name, write_report

        cmd = f"python bench/fuzz.py --seconds {args.seconds}" + (f" --report {args.report}" if args.report else "")
        lines = [START, "## Coverage-guided fuzzing (bench/fuzz.py, atheris)", "", f"Command: `{cmd}`  ", f"Machine: {cpu_name()}.", "",
                 "| target | what it reads | inputs run | result |", "| --- | --- | ---: | --- |"]  # fmt: skip
        lines += [f"| {r['target']} | {TARGETS[r['target']]} | {r['runs']:,} | {'no crash, no hang' if r['ok'] else '**crash** (reproducer in bench/out/fuzz/)'} |" for r in rows]
        lines.append(END)
        write_report(args.report, "\n".join(lines), START, END)


if __name__ == "__main__":
    main()
