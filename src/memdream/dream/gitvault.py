"""Dreams in a git vault: one commit per dream, and `git revert` for `memdream undo`.

Only a vault whose root holds `.git` counts (a vault inside a larger repository is left to
its owner). Changes made before a dream are committed first, on their own, so the dream's
commit holds exactly what the dream did and reverting it touches nothing else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

IDENTITY = ("memdream", "memdream@localhost")  # used only when git has no user configured


def is_git_vault(root: Path) -> bool:
    return (root / ".git").exists() and shutil.which("git") is not None


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    probe = subprocess.run(["git", "config", "user.email"], cwd=root, capture_output=True, text=True)
    if not probe.stdout.strip():
        env.update(GIT_AUTHOR_NAME=IDENTITY[0], GIT_AUTHOR_EMAIL=IDENTITY[1], GIT_COMMITTER_NAME=IDENTITY[0], GIT_COMMITTER_EMAIL=IDENTITY[1])
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env, check=check)


def dirty(root: Path) -> bool:
    return bool(_git(root, "status", "--porcelain").stdout.strip())


def commit_all(root: Path, message: str) -> str | None:
    """Commit every change in the vault (the derived .memdream/ ignores itself); the new
    commit's id, or None when there was nothing to commit."""
    if not dirty(root):
        return None
    _git(root, "add", "-A", ".")
    _git(root, "commit", "-q", "--no-verify", "-m", message)
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def revert(root: Path, sha: str, message: str) -> str | None:
    """Revert commit `sha`; the revert's id, or None when it does not apply cleanly (nothing changed then)."""
    res = _git(root, "revert", "--no-edit", "--no-commit", sha, check=False)
    if res.returncode != 0:
        _git(root, "revert", "--abort", check=False)
        _git(root, "reset", "-q", "--hard", "HEAD", check=False)  # only the failed revert's changes: the tree was committed first
        return None
    _git(root, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def dream_commit(root: Path, run: str) -> str | None:
    """The commit a dream made (its message starts "dream RUN:"), newest first; None if there is none."""
    res = _git(root, "log", "--format=%H", "-F", f"--grep=dream {run}:", check=False)
    shas = res.stdout.split()
    return shas[0] if shas else None
