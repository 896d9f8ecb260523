"""The team server's round trip at size: `memdream push` of a generated N-entry folder vault
into a throwaway PostgreSQL, then `memdream export --store`, compared byte for byte (issue 20's
acceptance point: 10,000 entries). Prints the times and whether the vaults are identical.

    python bench/team_push.py [--entries 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000)
    args = ap.parse_args()
    from test_team import _generated_vault  # the suite's generator: zh/en lines over months

    from memdream.clock import FrozenClock
    from memdream.store.vault import Scope
    from memdream.team import scope_files_of, throwaway_cluster

    pg, why = throwaway_cluster()
    if pg is None:
        sys.exit(f"needs PostgreSQL: {why}")
    try:
        url = pg.new_database("bench_push")
        tmp = Path(tempfile.mkdtemp(prefix="memdream-bench-push-"))
        clock = FrozenClock(datetime(2026, 6, 1, 9, 0, tzinfo=timezone(timedelta(hours=8))))
        _generated_vault(tmp / "vault", clock, args.entries)
        env = dict(os.environ, MEMDREAM_VAULT=str(tmp / "settings"))

        def md(*a: str) -> tuple[float, str]:
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "memdream.cli.main", *a], env=env, capture_output=True, text=True, check=True)
            return time.perf_counter() - t, out.stdout

        t_push, out = md("push", str(tmp / "vault"), "--store", url, "--json")
        moved = json.loads(out)
        t_again, out = md("push", str(tmp / "vault"), "--store", url, "--json")
        again = json.loads(out)
        t_export, _ = md("export", "--store", url, "--to", str(tmp / "back"))
        me = Scope("me", "main")
        same = scope_files_of(tmp / "vault", me) == scope_files_of(tmp / "back", me)
        print(f"entries {args.entries:,}: push {t_push:.1f} s ({moved['files']} files, {moved['bytes']:,} bytes), "
              f"push again {t_again:.1f} s ({again['written']} written), export {t_export:.1f} s; byte-identical: {same}")
        sys.exit(0 if same and again["written"] == 0 else 1)
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
