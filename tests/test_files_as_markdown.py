"""The files are plain Markdown: metadata is invisible when rendered, and a supersede is a small git diff."""

from __future__ import annotations

import html as html_lib
import re
import shutil
import subprocess

import pytest
from markdown_it import MarkdownIt


def visible_text(markdown: str) -> str:
    html = MarkdownIt("commonmark").render(markdown)
    html = re.sub(r"<!--.*?-->", "", html, flags=re.S)  # what a browser does not show
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


def test_metadata_is_invisible_when_rendered(mem, clock) -> None:
    mem.remember("我在余杭区")
    clock.advance(days=3)
    mem.remember("我在西湖区")
    mem.remember("以后都用中文回我")
    mem.remember("Never deploy on Fridays; it's 100% a rule => really")
    for path in mem.vault.root.rglob("*.md"):
        shown = visible_text(path.read_text(encoding="utf-8"))
        assert "m:id=" not in shown and "subj=" not in shown and "-->" not in shown, path
    shown = visible_text(mem.vault.resident_file(mem.scope).read_text(encoding="utf-8"))
    assert "以后都用中文回我" in shown and "Never deploy on Fridays; it's 100% a rule => really" in shown
    assert "Resident memory" not in shown and "metadata" not in shown  # the header comment is hidden whole


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_diff_of_a_supersede_is_one_changed_and_one_added_line(mem, clock) -> None:
    root = mem.vault.root

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            cwd=root, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip

    mem.remember("我在余杭区")
    mem.remember("周五下午有组会")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "before")
    clock.advance(days=19)
    mem.remember("我在西湖区")
    numstat = git("diff", "--numstat").split()
    assert numstat[:2] == ["2", "1"], numstat  # 2 lines added (one is the changed line's new version), 1 removed
    diff = git("diff", "-U0")
    removed = [ln for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert len(removed) == 1 and "我在余杭区" in removed[0]
    assert len(added) == 2
    assert "我在余杭区" in added[0] and "vt=" in added[0]
    assert "我在西湖区" in added[1] and "sup=" in added[1]
