"""Issue 17, items 7-15: what a hostile or unlucky file system does to a vault. Every command
meets links, FIFOs, folders, hard links, bad bytes, over-long lines and a broken index with a
clear error (exit 1) or by skipping what it must not open; doctor names each one. Commands run
as real processes (a FIFO that hangs one fails the test on its timeout instead of the suite)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-c", "from memdream.cli.main import main; main()"]


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDREAM_")}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


def ok(r: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert r.returncode == 0, r.stderr
    return r


def no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (0, 1), (r.returncode, r.stderr)


@pytest.fixture
def v(tmp_path: Path) -> str:
    """A vault with one memory of alice's and one of bob's, written by what `memdream remember`
    runs (cli/common.py open_scope: open_memory, then write), with the CLI's environment, in
    this process: as two CLI processes it was over a second of each test's setup."""
    from memdream.memory import load_config, open_memory

    env = {k: val for k, val in os.environ.items() if not k.startswith("MEMDREAM_")}
    root = str(tmp_path / "vault")
    for user, text in (("alice", "alice likes tea 爱喝茶"), ("bob", "bob's secret plan is to move to Chengdu")):
        with open_memory(config=load_config(root, user, None, env=env), create=True) as mem:
            mem.write(text)
    return root


def scope(v: str, user: str, agent: str = "main") -> Path:
    return Path(v) / "scopes" / agent / user


# -- item 7: links inside the vault


def test_a_linked_user_or_agent_folder_never_lets_writes_through(v: str) -> None:
    before = sorted(p.read_bytes() for p in scope(v, "bob").rglob("*.md"))
    os.symlink("bob", scope(v, "eve"))
    r = cli("remember", "eve was here 夏娃来过", "--vault", v, "--user", "eve")
    assert r.returncode == 1 and "symlink" in r.stderr and "hint:" in r.stderr, r.stderr
    os.symlink("main", Path(v) / "scopes" / "evil")
    r = cli("remember", "evil agent was here", "--vault", v, "--user", "bob", "--agent", "evil")
    assert r.returncode == 1 and "symlink" in r.stderr, r.stderr
    # a link deeper in the scope: eve's own folder with bob's memory/ linked in
    os.unlink(scope(v, "eve"))
    (scope(v, "eve")).mkdir()
    os.symlink("../bob/memory", scope(v, "eve") / "memory")
    r = cli("remember", "deeper link 更深的链接", "--vault", v, "--user", "eve")
    assert r.returncode == 1 and "symlink" in r.stderr, r.stderr
    r = cli("list", "--vault", v, "--user", "eve")
    assert "Chengdu" not in r.stdout
    assert sorted(p.read_bytes() for p in scope(v, "bob").rglob("*.md")) == before
    d = cli("doctor", "--vault", v, "--user", "alice")
    assert d.returncode == 1
    assert "scopes/evil: agent folder is a symlink" in d.stdout
    assert "scopes/main/eve/memory: symlink" in d.stdout


# -- item 9: hard links


def test_a_hard_link_to_another_scopes_file_is_neither_read_nor_written(v: str) -> None:
    bob_file = next((scope(v, "bob") / "memory" / "recall").glob("*.md"))
    mine = scope(v, "mallory") / "memory" / "recall" / bob_file.name
    mine.parent.mkdir(parents=True)
    os.link(bob_file, mine)
    before = bob_file.read_bytes()
    assert "Chengdu" not in cli("list", "--vault", v, "--user", "mallory").stdout
    assert "Chengdu" not in cli("recall", "Chengdu", "--vault", v, "--user", "mallory").stdout
    r = cli("remember", "mallory likes plans", "--vault", v, "--user", "mallory")
    no_traceback(r)
    assert bob_file.read_bytes() == before
    d = cli("doctor", "--vault", v, "--user", "mallory")
    assert d.returncode == 1 and f"{bob_file.name}: has 2 hard links" in d.stdout, d.stdout
    assert "scopes/main/bob/memory/recall" in d.stdout  # bob's side is named too


# -- item 10: FIFOs


COMMANDS = [
    ("list",), ("recall", "tea"), ("remember", "alice likes green tea 绿茶"), ("search", "tea"), ("context",),
    ("history", "tea"), ("doctor",), ("dream",), ("index", "rebuild"), ("now",), ("log", "a day 一天"),
    ("note", "add", "lessons", "fifo", "a lesson 一课"), ("lookup", "lesson"), ("gc",), ("conflicts",),
]  # fmt: skip
# Where each FIFO sits, and the commands that read that file (all of them for MEMORY.md).
FIFO_READERS = {
    "MEMORY.md": COMMANDS,
    "memory/recall/2026-12.md": [("list",), ("recall", "tea"), ("remember", "alice likes oolong 乌龙"), ("doctor",), ("dream",), ("index", "rebuild")],
    "NOW.md": [("now",), ("context",), ("dream",), ("doctor",)],
    "memory/INDEX.md": [("note", "add", "lessons", "fifo", "a lesson 一课"), ("lookup", "lesson"), ("gc",), ("dream",), ("doctor",)],
    "today": [("log", "a day 一天"), ("dream",), ("gc",), ("lookup", "day"), ("doctor",)],
}


@pytest.mark.parametrize("where", ["MEMORY.md", "memory/recall/2026-12.md", "NOW.md", "memory/INDEX.md", "today"])
def test_a_fifo_where_a_file_should_be_hangs_nothing(v: str, where: str) -> None:
    from datetime import date

    rel = f"memory/{date.today().isoformat()}.md" if where == "today" else where
    fifo = scope(v, "alice") / rel
    fifo.parent.mkdir(parents=True, exist_ok=True)
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    for args in FIFO_READERS[where]:
        r = cli(*args, "--vault", v, "--user", "alice", timeout=30)
        no_traceback(r)
    d = cli("doctor", "--vault", v, "--user", "alice")
    assert d.returncode == 1 and f"{rel}: a FIFO (named pipe)" in d.stdout, d.stdout


def test_a_fifo_in_bobs_scope_hangs_nothing_of_alices(v: str) -> None:
    os.mkfifo(scope(v, "bob") / "MEMORY.md")
    os.mkfifo(scope(v, "bob") / "memory" / "recall" / "2026-01.md")
    for args in (("doctor",), ("index", "rebuild"), ("list",), ("recall", "tea")):
        no_traceback(cli(*args, "--vault", v, "--user", "alice", timeout=30))
    assert "alice likes tea" in ok(cli("list", "--vault", v, "--user", "alice")).stdout


# -- item 11: a folder where a file should be


@pytest.mark.parametrize(
    "where,command",
    [
        ("MEMORY.md", ("remember", "always answer in English", "--type", "rule")),
        ("NOW.md", ("now", "--set", "-")),
        ("today", ("log", "a day 一天")),
        ("memory/INDEX.md", ("note", "add", "lessons", "folders", "a lesson 一课")),
    ],
)
def test_a_folder_where_a_file_should_be_is_a_clear_error_and_a_doctor_finding(v: str, where: str, command: tuple) -> None:
    from datetime import date

    rel = f"memory/{date.today().isoformat()}.md" if where == "today" else where
    target = scope(v, "alice") / rel
    if target.exists():
        target.unlink()
    target.mkdir(parents=True)
    env = {k: val for k, val in os.environ.items() if not k.startswith("MEMDREAM_")}
    r = subprocess.run([*CLI, *command, "--vault", v, "--user", "alice"], input="now 现在\n", capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "a folder" in r.stderr and "hint:" in r.stderr, r.stderr
    d = cli("doctor", "--vault", v, "--user", "alice")
    assert d.returncode == 1 and f"{rel}: a folder where memdream keeps a file" in d.stdout, d.stdout


# -- item 8: importing another scope of the same vault


def test_importing_another_scope_needs_from_scope(v: str) -> None:
    bob = str(scope(v, "bob"))
    r = cli("import", bob, "--from", "claude-code", "--vault", v, "--user", "alice")
    assert r.returncode == 1 and "--from-scope main/bob" in r.stderr, r.stderr
    r = cli("import", v, "--from", "claude-code", "--vault", v, "--user", "alice")
    assert r.returncode == 1 and "holds this vault's scopes" in r.stderr, r.stderr
    r = cli("import", bob, "--from", "claude-code", "--from-scope", "main/carol", "--vault", v, "--user", "alice")
    assert r.returncode == 1, r.stderr
    assert "Chengdu" not in cli("list", "--vault", v, "--user", "alice").stdout
    ok(cli("import", bob, "--from", "claude-code", "--from-scope", "main/bob", "--vault", v, "--user", "alice"))
    assert "Chengdu" in cli("list", "--vault", v, "--user", "alice").stdout


# -- item 12: bytes that are not UTF-8


def test_undecodable_bytes_typed_by_hand_survive_the_next_write_and_stay_in_doctor(v: str) -> None:
    resident = scope(v, "alice") / "MEMORY.md"
    typed = b"- caf\xe9 au lait every morning (typed in Latin-1)\n- \xff\xfe \xe4\xbd broken \xe5\x9c\n"
    resident.write_bytes(typed)
    ok(cli("remember", "always greet in Chinese 总是用中文问候", "--type", "rule", "--vault", v, "--user", "alice"))
    data = resident.read_bytes()
    assert b"- caf\xe9 au lait every morning (typed in Latin-1) <!--m:" in data
    assert b"- \xff\xfe \xe4\xbd broken \xe5\x9c <!--m:" in data
    assert "总是用中文问候".encode() in data
    assert "\ufffd".encode() not in data
    d = cli("doctor", "--vault", v, "--user", "alice")
    assert d.returncode == 1 and "MEMORY.md:1: not valid UTF-8" in d.stdout, d.stdout
    listed = ok(cli("list", "--vault", v, "--user", "alice")).stdout
    assert "caf\ufffd au lait" in listed and "总是用中文问候" in listed


# -- item 14: an over-long hand-typed line


def test_an_over_long_hand_line_stays_in_the_file_is_named_and_only_its_prefix_is_indexed(v: str) -> None:
    recall = next((scope(v, "alice") / "memory" / "recall").glob("*.md"))
    long_line = "- " + "长" * 10 + "x" * 50_000_000 + "\n"
    with open(recall, "a", encoding="utf-8") as fh:
        fh.write(long_line)
    size = recall.stat().st_size
    listed = ok(cli("list", "--vault", v, "--user", "alice", timeout=120)).stdout
    assert len(listed) < 20_000 and "alice likes tea" in listed
    ok(cli("remember", "alice likes coffee too 也爱咖啡", "--vault", v, "--user", "alice", timeout=120))
    assert long_line.encode() in recall.read_bytes()  # left as typed: no id appended to it
    assert recall.stat().st_size > size
    d = cli("doctor", "--vault", v, "--user", "alice", timeout=120)
    assert d.returncode == 1 and "characters long (at most 2,000): left in the file as typed" in d.stdout, d.stdout
    assert "index is missing" not in d.stdout and "index holds" not in d.stdout


# -- item 15: an index.db that is not a database


def test_a_corrupt_index_is_replaced_by_index_rebuild(v: str) -> None:
    db = Path(v) / ".memdream" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database, just garbage \x00\x01" * 100)
    r = cli("list", "--vault", v, "--user", "alice")
    assert r.returncode == 1 and "index rebuild" in r.stderr and "Traceback" not in r.stderr, r.stderr
    out = ok(cli("index", "rebuild", "--vault", v, "--user", "alice")).stdout
    assert "index rebuilt: 2 entries" in out
    assert "alice likes tea" in ok(cli("list", "--vault", v, "--user", "alice")).stdout
    sqlite3.connect(db).execute("SELECT count(*) FROM entries").fetchone()
    ok(cli("doctor", "--vault", v, "--user", "alice"))


# -- item 13: an editor that saves in place; the record of acknowledged writes


def test_the_writer_never_builds_on_a_half_saved_file(tmp_path: Path, clock) -> None:
    import threading
    import time

    from memdream.config import load_config
    from memdream.memory import Memory

    mem = Memory(load_config(tmp_path / "v", "me", "main", env={}), clock)
    mem.vault.init()
    first = mem.remember("我住在杭州 I live in Hangzhou").id
    path = next(mem.vault.recall_dir(mem.scope).glob("*.md"))
    whole = path.read_bytes() + "- 手写：周末去爬山 hiking on weekends\n".encode()
    half = len(whole) // 2
    assert whole[half - 1 : half] != b"\n"  # cut mid-line, as a torn save almost always is
    with open(path, "r+b") as fh:  # an editor saving in place: truncate, the first half, a pause ...
        fh.truncate()
        fh.write(whole[:half])
        fh.flush()

        def rest() -> None:
            time.sleep(0.05)
            fh.write(whole[half:])
            fh.flush()

        t = threading.Thread(target=rest)
        t.start()
        second = mem.remember("我在西湖区上班 I work in Xihu", type="fact").id  # while the file is half written
        t.join()
    data = path.read_bytes().decode("utf-8")
    assert first in data and second in data and "hiking on weekends" in data, data
    assert data.count("\n- ") + data.startswith("- ") >= 3
    mem.close()


def test_a_half_saved_file_never_passes_for_the_version_memdream_wrote(tmp_path: Path, clock) -> None:
    """The writer takes a file as memdream's own (at rest, no waiting) when it matches the state
    recorded after memdream's last write. An editor that opened the file right after that write
    and is half way through saving it in place can leave the same inode, size and (at the file
    system's timestamp granularity) modification time: only the content tells them apart. This
    was how the soak lost acknowledged remembers before `doctor --fix` (issue 17, item 13)."""
    import threading
    import time

    from memdream.config import load_config
    from memdream.memory import Memory
    from memdream.store.format import parse_document

    mem = Memory(load_config(tmp_path / "v", "me", "main", env={}), clock)
    mem.vault.init()
    first = mem.remember("我住在杭州 I live in Hangzhou").id
    path = next(mem.vault.recall_dir(mem.scope).glob("*.md"))
    st = os.stat(path)  # the file exactly as memdream left it
    original = path.read_bytes()
    whole = original.replace(b"Hangzhou", "Hangzhou 西湖边 by the lake".encode()) + "- 手写：周末去爬山 hiking on weekends\n".encode()
    torn = whole[: len(original)]  # the editor's first write happens to be as long as the old file
    assert torn != original and not torn.endswith(b"\n")
    with open(path, "r+b") as fh:  # truncate, write the first part, pause ...
        fh.truncate()
        fh.write(torn)
        fh.flush()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # ... within the same timestamp tick
        now = os.stat(path)
        assert (now.st_ino, now.st_size, now.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)

        def rest() -> None:
            time.sleep(0.3)
            fh.write(whole[len(torn) :])
            fh.flush()

        t = threading.Thread(target=rest)
        t.start()
        second = mem.remember("我在西湖区上班 I work in Xihu", type="fact").id  # while the file is half saved
        t.join()
    data = path.read_bytes().decode("utf-8")
    assert first in data and second in data and "by the lake" in data and "hiking on weekends" in data, data
    assert all(not ln.problems for ln in parse_document(data).lines), data
    mem.close()


def test_doctor_lists_acknowledged_memories_no_file_holds_and_fix_puts_them_back(v: str) -> None:
    out = ok(cli("remember", "my dentist is Dr. Wang 牙医姓王", "--json", "--vault", v, "--user", "alice")).stdout
    eid = json.loads(out)["entry"]["id"]
    recall = next((scope(v, "alice") / "memory" / "recall").glob("*.md"))
    stale = b"".join(ln for ln in recall.read_bytes().splitlines(keepends=True) if eid.encode() not in ln)
    recall.write_bytes(stale)  # an editor's stale buffer saved over the acknowledged line
    d = cli("doctor", "--vault", v, "--user", "alice")
    assert d.returncode == 1 and f"acknowledged memory {eid}" in d.stdout and "doctor --fix" in d.stdout, d.stdout
    assert "Dr. Wang" not in cli("list", "--vault", v, "--user", "alice").stdout
    f = cli("doctor", "--fix", "--vault", v, "--user", "alice")
    assert f.returncode == 0 and f"restored scopes/main/alice/memory/recall/{recall.name}: {eid}" in f.stdout, f.stdout
    assert "Dr. Wang" in cli("list", "--vault", v, "--user", "alice").stdout
    # the record lives in the scope's own folder, a plain file; a hard forget erases it there too
    records = list((scope(v, "alice") / "memory" / ".journal").glob("*.jsonl"))
    assert records and eid in records[0].read_text(encoding="utf-8")
    ok(cli("forget", eid, "--hard", "--yes", "--vault", v, "--user", "alice"))
    assert eid not in records[0].read_text(encoding="utf-8")
    ok(cli("doctor", "--vault", v, "--user", "alice"))
