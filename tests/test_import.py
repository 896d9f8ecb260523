"""Importing memdream has no side effects and loads nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys


def test_import_is_light_and_silent(tmp_path) -> None:
    code = (
        "import sys, json, memdream; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('rjieba', 'detect_secrets', 'Stemmer', 'sqlite3', 'filelock', 'click', 'memdream'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    loaded = json.loads(r.stdout)
    assert not any(m.split(".")[0] in ("rjieba", "detect_secrets", "Stemmer", "sqlite3", "filelock", "click") for m in loaded), loaded
    assert r.stderr == ""
    assert list(tmp_path.iterdir()) == []  # nothing created, not even ~/.memdream
