"""How long does the light phase take on a large scope? (issue: dreaming; goal <= 5 s at 100k)

    python bench/dream_light.py [--sizes 10000,100000] [--report docs/benchmarks.md]
    PYTHONPATH=/tmp/base/src python bench/dream_light.py --sizes 100000   # the same data, older code
    python bench/dream_light.py --sizes 1000000 --plan-only               # the first dream's plan alone: time, memory


Each size: a fresh vault whose recall files are written directly (files are the truth) with
N facts, half Chinese and half English: 2% near-duplicates of earlier lines, 3% superseded
lines, 1% recalled three times or more, ages spread over a year. The index is built, then
`Memory.dream(["light"])` is timed end to end (adopt, fold recall counts, plan, apply with
its invariant checks, diary, ledger), and the planning step alone. Baseline in the same run:
reading and parsing every entry file once (the floor of any pass over the memory), and a
second light dream with nothing new (the scheduler's hourly case, skipped by input hash).
Recall files are laid out as the writer does (a file per month, a new part every 1,000
lines). Also timed: `index rebuild` of the built vault, the planner row by row (the code's
reference, where it has one: `plan_light(..., bulk=False)`) and one scope's `doctor` after the
dream; reported: files per month, the index's size on disk and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from remember_latency import cpu_name, write_report  # noqa: E402

from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.doctor import check_vault  # noqa: E402
from memdream.dream.light import plan_light  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.model.entry import Entry  # noqa: E402
from memdream.store.format import parse_document, render_line  # noqa: E402
from memdream.store.vault import RECALL_FILE_MAX_LINES  # noqa: E402

START, END = "<!-- bench:dream-light:start -->", "<!-- bench:dream-light:end -->"
CITIES = ["杭州", "上海", "成都", "北京", "深圳", "Lyon", "Berlin", "Osaka", "Austin", "Porto"]
THINGS = ["绿茶", "咖啡", "钢琴", "跑步", "围棋", "tennis", "sourdough", "Rust", "jazz", "hiking"]


def text_for(i: int, rng: random.Random) -> str:
    c, t = rng.choice(CITIES), rng.choice(THINGS)
    if i % 2:
        return f"第{i}条：朋友{i % 997}住在{c}，喜欢{t}，每周{i % 7 + 1}次"
    return f"Note {i}: friend {i % 997} lives in {c}, likes {t}, {i % 7 + 1} times a week"


def build(root: Path, n: int, now: datetime) -> Memory:
    rng = random.Random(n)
    mem = Memory(load_config(root, "me", "main", env={}), FrozenClock(now))
    mem.vault.init()
    by_month: dict[str, list[tuple[datetime, str]]] = {}
    texts: list[str] = []
    for i in range(n):
        day = now - timedelta(days=rng.randrange(365))
        r = rng.random()
        if r < 0.02 and texts:
            text = rng.choice(texts[-500:]).rstrip("!") + "!"  # a near-duplicate of a recent line
        else:
            text = text_for(i, rng)
        texts.append(text)
        ended = r > 0.97
        e = Entry(
            text=text, id=f"b{i:07d}", type="fact", created_at=day, valid_from=day, source="import",
            valid_to=now - timedelta(days=1) if ended else None, end="superseded" if ended else "",
            hits=3 + i % 5 if 0.02 <= r < 0.03 else 0,
        )  # fmt: skip
        by_month.setdefault(f"{day:%Y-%m}", []).append((day, render_line(e)))
    for month in by_month.values():  # as the writer lays them out: a file per month, parts of 1,000 lines
        for part in range(0, len(month), RECALL_FILE_MAX_LINES):
            path = mem.vault.recall_file_for(mem.scope, month[0][0], part // RECALL_FILE_MAX_LINES + 1)
            path.parent.mkdir(parents=True, exist_ok=True)
            chunk = [line for _, line in month[part : part + RECALL_FILE_MAX_LINES]]
            path.write_text("# Recall\n\n" + "\n".join(chunk) + "\n", encoding="utf-8")
    return mem


def disk_mb(mem: Memory) -> float:
    """The index on disk (database and write-ahead log), in MB."""
    path = str(mem.vault.index_path)
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s)) / 1e6


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def texts_sample(mem: Memory) -> list[str]:
    return [r[0] for r in mem.index.db.execute("SELECT text FROM entries WHERE layer = 'recall' AND vt IS NULL ORDER BY rowid DESC LIMIT 200")]


def stage(n: int, what: str, seconds: float) -> None:
    """A stage's time as soon as it is known (stderr): a long run at 1M leaves partial figures."""
    print(f"[{n:,}] {what}: {seconds:.2f} s (peak RSS {peak_rss_mb():.0f} MB)", file=sys.stderr, flush=True)


def run(n: int, reference: bool = True) -> dict:
    now = datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)
    root = Path(tempfile.mkdtemp(prefix=f"md-light-{n}-"))
    try:
        mem = build(root / "vault", n, now)
        t = time.perf_counter()
        mem.sync()
        index_s = time.perf_counter() - t
        stage(n, "first sync (bulk index of new files)", index_s)
        t = time.perf_counter()
        mem.index.rebuild(mem.vault.scopes())
        rebuild_s = time.perf_counter() - t
        stage(n, "index rebuild", rebuild_s)
        files = list(mem.vault.recall_dir(mem.scope).rglob("*.md"))
        months = {f.name[:7] for f in files}
        t = time.perf_counter()
        parsed = 0
        for f in sorted(mem.vault.recall_dir(mem.scope).glob("*.md")):
            parsed += len(parse_document(f.read_text(encoding="utf-8")).entries())
        parse_s = time.perf_counter() - t
        t = time.perf_counter()
        plan = plan_light(mem, mem.config.dream.resident_budget)
        plan_s = time.perf_counter() - t
        stage(n, f"plan ({len(plan.ops):,} operations)", plan_s)
        each_s = None
        if reference and "bulk" in inspect.signature(plan_light).parameters:  # the row-by-row reference planner
            t = time.perf_counter()
            each = plan_light(mem, mem.config.dream.resident_budget, bulk=False)
            each_s = time.perf_counter() - t
            stage(n, "plan row by row (the same plan)", each_s)
            assert each.ops == plan.ops and each.notes == plan.notes, "the bulk plan differs from the per-entry plan"
        t = time.perf_counter()
        report = mem.dream(["light"], force=False)
        dream_s = time.perf_counter() - t
        light = report.phases[0]
        stage(n, f"first light dream ({light.status}, {light.changes:,} changes)", dream_s)
        t = time.perf_counter()
        problems = check_vault(mem.vault, mem.index, [mem.scope])
        doctor_s = time.perf_counter() - t
        stage(n, f"doctor ({len(problems)} problems)", doctor_s)
        t = time.perf_counter()
        again = mem.dream(["light"], force=False)
        again_s = time.perf_counter() - t
        # The next day: 300 new lines (2% of them repeats) typed into the files, one day older.
        rng = random.Random(7)
        mem.clock.advance(days=1)  # type: ignore[attr-defined]
        recall = sorted(mem.vault.recall_dir(mem.scope).glob("*.md"))[-1]
        news = []
        for i in range(300):
            news.append(f"- {rng.choice(texts_sample(mem))}!" if i % 50 == 0 else f"- {text_for(n + i, rng)}")
        with open(recall, "a", encoding="utf-8") as fh:
            fh.write("\n".join(news) + "\n")
        t = time.perf_counter()
        daily = mem.dream(["light"], force=False)
        daily_s = time.perf_counter() - t
        kinds: dict[str, int] = {}
        for op in plan.ops:
            kinds[op.kind] = kinds.get(op.kind, 0) + 1  # type: ignore[union-attr]
        mem.close()
        return {
            "n": n, "index_s": index_s, "parse_s": parse_s, "plan_s": plan_s, "dream_s": dream_s, "again_s": again_s,
            "status": light.status, "changes": light.changes, "kinds": kinds, "again": again.phases[0].status, "parsed": parsed,
            "failed": light.failed, "daily_s": daily_s, "daily_changes": daily.phases[0].changes,
            "rebuild_s": rebuild_s, "each_s": each_s, "doctor_s": doctor_s, "problems": len(problems),
            "files": len(files), "months": len(months), "index_mb": disk_mb(mem), "rss_mb": peak_rss_mb(),
        }  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


def render(rows: list[dict], cmd: str) -> str:
    out = [
        START,
        "## Light-phase time (issue: dreaming)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {cpu_name()}; run on {datetime.now():%Y-%m-%d}.",
        "",
        "Each row: a fresh scope of N facts written straight into recall files (half Chinese, half English; 2% near-duplicates, "
        "3% superseded, 1% recalled 3+ times, ages over a year), indexed, then one `memdream dream --phase light` timed end "
        "to end (adopt hand lines, fold recall counts, plan from the index, apply through the writer with the invariant checks "
        "and canaries, diary, ledger). Baselines from the same run: parsing every entry file once, and the hourly re-run with "
        "nothing new (skipped by input hash).",
        "",
        "| entries | first light dream (s) | of which planning (s) | planning row by row (s) | changes applied | archived / merged / promoted | next day: 300 new lines (s) | parse all files once (s) | re-run, nothing new (s) |",
        "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        k = r["kinds"]
        each = f"{r['each_s']:.2f}" if r.get("each_s") is not None else "-"
        out.append(
            f"| {r['n']:,} | {r['dream_s']:.2f} | {r['plan_s']:.2f} | {each} | {r['changes']:,} ({r['status']}) | "
            f"{k.get('archive', 0):,} / {k.get('supersede', 0):,} / {k.get('promote', 0):,} | {r['daily_s']:.2f} ({r['daily_changes']} changes) | {r['parse_s']:.2f} | {r['again_s']:.3f} ({r['again']}) |"
        )
    out += [
        "",
        "| entries | recall files (over months) | index rebuild (s, entries/s) | doctor, one scope (s) | index on disk (MB) | peak RSS of the run (MB) |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        out.append(
            f"| {r['n']:,} | {r['files']:,} ({r['months']}) | {r['rebuild_s']:.1f} ({r['n'] / r['rebuild_s']:,.0f}/s) | {r['doctor_s']:.1f} ({r['problems']} problems) "
            f"| {r['index_mb']:,.0f} | {r['rss_mb']:,.0f} |"
        )
    big = max(rows, key=lambda r: r["n"])
    first = "met" if big["dream_s"] <= 5.0 else "**not met**"
    daily = "met" if big["daily_s"] <= 5.0 else "**not met**"
    out += [
        "",
        f"Goal: at most 5 s at 100,000 entries. At {big['n']:,}: the first dream over a year of never-dreamed memories "
        f"(half of them cold, {big['changes']:,} moves) takes {big['dream_s']:.2f} s ({first}); a routine dream the next day "
        f"takes {big['daily_s']:.2f} s ({daily}). Later dreams compare only the lines new since the last one for duplicates "
        "(each with the entries sharing its rarest terms), so their cost follows what changed, not the size of the scope.",
        END,
    ]
    return "\n".join(out)


def plan_only(n: int) -> None:
    """The first light dream's plan over n fresh entries, alone: the part of the dream whose
    memory grows with every current entry of the scope (a candidate per entry)."""
    now = datetime(2026, 11, 30, 3, 0, tzinfo=timezone.utc)
    root = Path(tempfile.mkdtemp(prefix=f"md-plan-{n}-"))
    try:
        mem = build(root / "vault", n, now)
        mem.sync()
        before = peak_rss_mb()
        t = time.perf_counter()
        plan = plan_light(mem, mem.config.dream.resident_budget)
        seconds = time.perf_counter() - t
        print(f"{n:>9,} entries: plan {seconds:.2f} s, {len(plan.ops):,} operations; peak RSS {before:,.0f} MB before it, "
              f"{peak_rss_mb():,.0f} MB after (+{peak_rss_mb() - before:,.0f} MB)", flush=True)  # fmt: skip
        mem.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--quick", action="store_true", help="1,000 and 10,000 entries only")
    ap.add_argument("--report", type=Path, default=None, help="write the section into this Markdown file")
    ap.add_argument("--no-reference", action="store_true", help="skip the row-by-row planner (it doubles the planning time)")
    ap.add_argument("--plan-only", action="store_true",
                    help="build, index and plan the first light dream only: its time and what it adds to the peak RSS (no report)")
    args = ap.parse_args()
    sizes = [1000, 10000] if args.quick else [int(s) for s in args.sizes.split(",")]
    if args.plan_only:
        for n in sizes:
            plan_only(n)
        return
    rows = []
    for n in sizes:
        r = run(n, reference=not args.no_reference)
        each = f"{r['each_s']:.2f} s" if r["each_s"] is not None else "-"
        print(f"{n:>7,} entries: light dream {r['dream_s']:.2f} s (plan {r['plan_s']:.2f} s, row by row {each}), {r['changes']} changes {r['kinds']}, "
              f"{r['status']} {r['failed'] or ''}; next day {r['daily_s']:.2f} s ({r['daily_changes']} changes); parse {r['parse_s']:.2f} s; "
              f"index {r['index_s']:.1f} s; rebuild {r['rebuild_s']:.1f} s ({n / r['rebuild_s']:,.0f}/s); doctor {r['doctor_s']:.1f} s "
              f"({r['problems']} problems); again {r['again_s']:.3f} s; {r['files']} files over {r['months']} months; "
              f"index {r['index_mb']:.0f} MB; peak RSS {r['rss_mb']:.0f} MB", flush=True)  # fmt: skip
        rows.append(r)
    cmd = "python bench/dream_light.py" + (" --quick" if args.quick else f" --sizes {args.sizes}") + (" --no-reference" if args.no_reference else "") + (f" --report {args.report}" if args.report else "")
    text = render(rows, cmd)
    if args.report:
        write_report(args.report, text, START, END)
    else:
        print(text)


if __name__ == "__main__":
    main()
