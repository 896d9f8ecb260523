"""The CLI imports a command's module only when the command runs, and the facade its engine
modules only when they are called: the table of where each command lives stays equal to
what the modules define, and a recall leaves the other areas and the write path unimported
(a fresh interpreter, so nothing else imported them first)."""

from __future__ import annotations

import importlib
import subprocess
import sys

from memdream.cli.main import WHERE, cli
from memdream.memory import open_memory


def test_the_table_names_every_command_of_every_module() -> None:
    defined = {c.name: m for m in set(WHERE.values()) for c in importlib.import_module(m).COMMANDS}
    assert defined == WHERE
    assert sorted(cli.commands) == sorted([*WHERE, "demo"])


def test_recall_loads_neither_the_servers_nor_the_dream_runner(tmp_path) -> None:  # type: ignore[no-untyped-def]
    probe = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from memdream.cli.main import cli\n"
        f"v = {str(tmp_path / 'v')!r}\n"
        "r = CliRunner().invoke(cli, ['recall', '咖啡 coffee', '--vault', v])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(' '.join(m for m in sys.modules if m.startswith('memdream.')))\n"
    )
    open_memory(tmp_path / "v").close()  # the vault exists: the probe only recalls
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert "memdream.cli.recall" in out
    assert not {"memdream.cli.servers", "memdream.cli.dream", "memdream.mcp.server", "memdream.web.app", "memdream.dream.run"} & set(out)
    # Nor the write path, the knowledge vault, the importers or doctor: the facade loads them on first use.
    assert not {"memdream.engine.write", "memdream.index.slots", "memdream.model.hostile", "memdream.knowledge.base", "memdream.importers", "memdream.doctor"} & set(out)


def test_a_chinese_recall_does_not_load_the_segmenter(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Loading the segmenter's dictionary costs about 0.1 s a process: a recall segments its
    query by the words the index holds instead (model/tokens.py, query_terms)."""
    mem = open_memory(tmp_path / "v")
    mem.remember("我每天早上喝一杯咖啡")
    mem.remember("I walk the dog at seven")
    talk = tmp_path / "talk.jsonl"
    talk.write_text('{"role": "user", "content": "帮我整理一下明天的盘前简报要点", "timestamp": "2026-05-01T08:00:00+08:00"}\n', encoding="utf-8")
    mem.import_transcripts("jsonl", talk)
    mem.close()
    probe = (
        "import sys\n"
        "from memdream.memory import open_memory\n"
        f"m = open_memory({str(tmp_path / 'v')!r})\n"
        "print(m.recall('咖啡', k=1)[0].text)\n"
        "print(m.recall('早上喝咖啡', k=1)[0].text)\n"
        "print(m.search_raw('盘前简报')[0].text)\n"
        "print('rjieba' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    # the snippets of past conversations (`memdream context`) by the raw layer's own words
    assert out == ["我每天早上喝一杯咖啡", "我每天早上喝一杯咖啡", "帮我整理一下明天的盘前简报要点", "False"]


def test_an_english_remember_does_not_load_the_segmenter_for_chinese_memories(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A bilingual vault: memories with Chinese subjects (所在地, 宠物) must not make every English
    `remember` load the segmenter to cut their words (about 0.1 s a new process). A line of the
    home slot takes its subject, 所在地, into its own metadata, so indexing it needs the
    segmenter; home is one slot in both languages."""
    mem = open_memory(tmp_path / "v")
    mem.remember("我住在西湖区")  # subject 所在地
    mem.remember("我养了一只橘猫", subject="宠物")
    mem.remember("My phone is a Pixel 7")
    mem.remember("I live in Lisbon")  # supersedes 我住在西湖区, subject 所在地
    mem.close()
    probe = (
        "import sys\n"
        "from memdream.memory import open_memory\n"
        f"m = open_memory({str(tmp_path / 'v')!r})\n"
        "for text in ('The standup moved to Thursday', 'My phone is a Pixel 8 now', 'I live in Porto now', '我住在滨江区'):\n"
        "    out = m.write(text)\n"
        "    print(out.action, [e.text for e in out.superseded], 'rjieba' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [
        "added [] False",
        "superseded ['My phone is a Pixel 7'] False",
        "superseded ['I live in Lisbon'] True",
        "superseded ['I live in Porto now'] True",
    ]
