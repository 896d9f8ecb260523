"""The ChatGPT export as users receive it: a .zip with conversations.json (and images, HTML)
inside. It is read; a file that cannot be imported exits 1 with a hint, never a quiet 0."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdream.cli.main import cli
from memdream.errors import RefusedInput

CONVERSATIONS = [
    {
        "id": "conv-1",
        "title": "京都旅行",
        "create_time": 1767225600,
        "current_node": "n3",
        "mapping": {
            "n1": {"id": "n1", "parent": None, "message": None},
            "n2": {"id": "n2", "parent": "n1", "message": {"author": {"role": "user"}, "content": {"parts": ["四月去京都看樱花，住在祇园附近"]}, "create_time": 1767225600}},
            "n3": {"id": "n3", "parent": "n2", "message": {"author": {"role": "assistant"}, "content": {"parts": ["Cherry blossoms in Kyoto peak in early April."]}}},
        },
    }
]


def export_zip(path: Path, conversations: list | None = CONVERSATIONS) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("chat.html", "<html>the export's viewer</html>")
        z.writestr("user.json", json.dumps({"id": "user-1"}))
        z.writestr("file-abc.png", b"\x89PNG not really")
        if conversations is not None:
            z.writestr("conversations.json", json.dumps(conversations, ensure_ascii=False))
    return path


def test_the_export_zip_is_imported_and_searchable(mem, tmp_path: Path) -> None:
    rep = mem.import_transcripts("chatgpt", export_zip(tmp_path / "chatgpt-export.zip"))
    assert len(rep.imported) == 1 and rep.skipped == [], rep
    assert "四月去京都看樱花" in (mem.vault.root / rep.imported[0]).read_text(encoding="utf-8")
    assert mem.search_raw("京都")[0].text and mem.search_raw("cherry blossoms")
    again = mem.import_transcripts("chatgpt", tmp_path / "chatgpt-export.zip")
    assert again.imported == [] and len(again.unchanged) == 1  # importing twice adds nothing


def test_an_unpacked_export_folder_reads_only_its_json(mem, tmp_path: Path) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    with zipfile.ZipFile(export_zip(tmp_path / "e.zip")) as z:
        z.extractall(folder)
    rep = mem.import_transcripts("chatgpt", folder)
    assert len(rep.imported) == 1
    assert all(not w.endswith((".png", ".html")) for w, _ in rep.skipped), rep.skipped  # images and HTML are not "not JSON"


def test_a_file_that_cannot_be_imported_exits_1_with_a_hint(mem, tmp_path: Path) -> None:
    no_conv = export_zip(tmp_path / "other.zip", conversations=None)
    with pytest.raises(RefusedInput) as exc:
        mem.import_transcripts("chatgpt", no_conv)
    assert "without conversations.json" in exc.value.message and ".zip" in exc.value.hint
    runner = CliRunner()
    v = str(mem.vault.root)
    for bad in (no_conv, tmp_path / "notes.txt"):
        if bad.suffix == ".txt":
            bad.write_text("just some notes, 不是 JSON", encoding="utf-8")
        res = runner.invoke(cli, ["import", "--from", "chatgpt", str(bad), "--vault", v])
        assert res.exit_code == 1, res.output
        assert "error: nothing in" in res.output and "hint:" in res.output and "Traceback" not in res.output
    ok = runner.invoke(cli, ["import", "--from", "chatgpt", str(export_zip(tmp_path / "good.zip")), "--vault", v])
    assert ok.exit_code == 0 and "imported 1 transcript(s)" in ok.output, ok.output
