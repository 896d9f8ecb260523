"""THE single writer (DESIGN principle 3). Only this module writes memory files.

Every change goes through `Writer.update(path, change)`:

1. take the vault's cross-process lock (a file lock under .memdream/, re-entrant in a process);
2. read the file as it is on disk now (so a person's edit made since the last write is the
   base, never overwritten), adopt hand-written lines (give them an id and src=manual without
   touching their text);
3. apply `change`, a function of the parsed document that finds entries by id, so it can be
   applied again on top of a newer version;
4. just before replacing, read the file once more: if it changed (an editor saved meanwhile),
   start again from 2 on the new content;
5. atomic replace: temp file in the same folder, fsync, rename, fsync the folder.

A crash at any point leaves the old or the new file, never a mix; temp files start with a
dot and are never read as memory.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from memdream.clock import Clock
from memdream.errors import VaultError
from memdream.model.classify import classify_type
from memdream.model import lazyre as re
from memdream.store.files import LINE_INDEX_MAX, FileState, content_hash, decode_exact, encode_exact, has_raw_bytes, read_file
from memdream.store.format import Document, Line, parse_document, render_line
from memdream.store.vault import Vault

if TYPE_CHECKING:
    from filelock import FileLock

# Reading lives in store/files.py; these names are imported from here by shells not yet
# switched to it (web/app.py, for one). New code imports them from store/files.py.
from memdream.store.files import NotRegularFile, clean, decode, hard_linked, not_regular, what_is  # noqa: F401  (re-exported)

T = TypeVar("T")

LOCK_TIMEOUT_S = 60.0  # a writer waits this long for another before giving up with a hint
MAX_RETRIES = 32  # how often a write re-applies itself on a file that keeps changing under it (cheap: each is one read, one change)
RETRY_FOR_S = 10.0  # ... and for at least this long: on a loaded machine each attempt is slower, not each edit
SETTLE_S = 0.03  # a file changed in place less than this long ago may be half saved: wait (6x the 5 ms pause of issue 17)
SETTLE_CUT_S = 2.0  # the same for a file that does not end with a newline (cut off mid-line?)
SETTLE_POLL_S = 0.01
SETTLE_MAX_S = 10.0  # a file that never settles for this long: give up with a hint
OWN_WRITES = "written"  # under .memdream/: the state of each file as memdream last wrote it
OWN_WRITES_MAX = 256


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Raced(Exception):
    """Someone else replaced the file between our last check and our rename (see atomic_write).

    `rescued`: (our version, a save someone made on top of it) when that save landed in the
    instant our version was in place, before the swap back took it out again: the writer
    merges it into the file before it tries again, so it is never lost (see _saved_on_top)."""

    def __init__(self, rescued: tuple[bytes, bytes] | None = None) -> None:
        super().__init__()
        self.rescued = rescued


_RENAME_EXCHANGE, _RENAME_NOREPLACE, _AT_FDCWD = 2, 1, -100
_renameat2: Any = None  # None: not looked up yet; False: not available


def _exchange(tmp: str, path: str, flags: int) -> bool:
    """renameat2(2) with RENAME_EXCHANGE / RENAME_NOREPLACE (Linux); False where unavailable."""
    global _renameat2
    if _renameat2 is None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            _renameat2 = fn
        except (OSError, AttributeError):
            _renameat2 = False
    if _renameat2 is False:
        return False
    import ctypes

    if _renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        _renameat2 = False
        return False
    if err == errno.EEXIST:
        raise Raced()
    raise OSError(err, os.strerror(err), path)


# The temp files atomic_write makes: mkstemp(prefix=".NAME.", suffix=".tmp") adds 8 random characters.
TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")


def atomic_write(path: Path, data: bytes, expected: FileState | None = None) -> FileState:
    """Write `data` to `path` so that readers and crashes see the old or the new file only.

    With `expected` (the file as the caller read it), the new file is swapped in with an atomic
    exchange where the system has one (Linux renameat2): if what came out is not the version
    the caller read, an editor saved in between, so the swap is undone and Raced is raised
    for the caller to re-apply its change on top. Elsewhere a plain rename is used.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with _signals_deferred():
        return _atomic_write(path, data, expected)


_DEFERRED = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C or SIGTERM during one file write waits until the write is done (or undone), so
    an interruption never leaves a temp file behind (a signal landing inside mkstemp could)."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _atomic_write(path: Path, data: bytes, expected: FileState | None) -> FileState:
    import tempfile  # here, not at import: a process that only reads never loads it (issue 21)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
            try:
                os.fchmod(fd, os.stat(path).st_mode & 0o777)
            except FileNotFoundError:
                os.fchmod(fd, 0o644)
            # The state of what we wrote, taken from our own descriptor before the rename (a
            # rename keeps the inode, its size and its modification time). A stat of the path
            # after the rename can see an editor that opened the new file at once and is half
            # way through saving it in place: recorded as memdream's own, that torn version
            # was then built on without waiting (issue 17, item 13).
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if expected is None:
            os.replace(tmp, path)
        elif not expected.exists:
            if not _exchange(tmp, str(path), _RENAME_NOREPLACE):
                os.replace(tmp, path)
        elif _exchange(tmp, str(path), _RENAME_EXCHANGE):
            _, out = read_file(Path(tmp))  # what was in place just before the swap
            if out.sha != expected.sha:
                _exchange(tmp, str(path), _RENAME_EXCHANGE)  # put their version back
                raise Raced(_saved_on_top(Path(tmp), data))
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)
    return FileState(True, st.st_mtime_ns, st.st_size, st.st_ino, content_hash(data))


def _saved_on_top(tmp: Path, ours: bytes) -> tuple[bytes, bytes] | None:
    """After a swap back: None if what came out is our version as we wrote it; otherwise
    (ours, what someone saved on top of it), read once it is at rest.

    For the instant between the exchange and the swap back our version was in place: an
    editor could read it and save on top (by rename, so the swap back took its save out, or
    in place, into our inode). That editor was told its save landed; dropping it with the
    temp file lost a hand-written line in the in-place soak under load (1 in about 30 runs)."""
    data, state = read_file(tmp)
    if not state.exists or state.sha == content_hash(ours):
        return None
    data, state, _ = _settled(tmp, data, state, lambda _: SETTLE_S)  # an in-place save into our inode may still be under way
    # Gone meanwhile (someone removed our temp file): nothing to merge. Merged as an empty save,
    # its absence would delete every line of ours from the file.
    return (ours, data) if state.exists else None


def _settled(path: Path, data: bytes, state: FileState, settle_for: Callable[[bytes], float]) -> tuple[bytes, FileState, bool]:
    """`path` read again every SETTLE_POLL_S until its version is at rest: its modification or
    change time `settle_for(data)` seconds old, or unchanged that long (a clock set ahead), or
    the file gone. (data, state, True) then; (the last read, False) after SETTLE_MAX_S."""
    deadline = time.monotonic() + SETTLE_MAX_S
    stable_since = time.monotonic()
    while True:
        settle = settle_for(data)
        if time.time_ns() - max(state.mtime_ns, state.ctime_ns) >= settle * 1e9 or time.monotonic() - stable_since >= settle:
            return data, state, True
        if time.monotonic() > deadline:
            return data, state, False
        time.sleep(SETTLE_POLL_S)
        again, now = read_file(path)
        if now != state:
            data, state, stable_since = again, now, time.monotonic()
            if not state.exists:
                return data, state, True


def merge_saved(current: str, rescued: list[tuple[bytes, bytes]]) -> str:
    """`current` with the edits of each rescued save (see Raced) applied: what the save changed
    against our version, the base it was built on, as line edits. Our own change is not taken
    from it (the writer applies that again). An edit of lines that `current` still has as they
    were replaces them; where `current` changed them too, its lines stay and the save's new
    lines join them: a line too many is for the user to remove, a line lost for nobody to find."""
    from difflib import SequenceMatcher  # here: only a write that raced two editors at once needs it

    def lines(text: str) -> list[str]:
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        return out

    for ours, theirs in rescued:
        base, a, b = lines(decode_exact(ours)), lines(current), lines(decode_exact(theirs))
        where: dict[int, int] = {}  # a line of base -> the same line in current
        for i, j, n in SequenceMatcher(None, base, a, autojunk=False).get_matching_blocks():
            where.update((i + k, j + k) for k in range(n))
        drop: set[int] = set()
        before: dict[int, list[str]] = {}  # lines to put before current's line i (len(a): at the end)
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, base, b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            kept = [where[i] for i in range(i1, i2) if i in where]
            if i2 > i1 and len(kept) == i2 - i1:  # lines current still has as they were: replace them
                drop.update(kept)
                before.setdefault(kept[0], []).extend(b[j1:j2])
                continue
            at = next((where[i] for i in range(i2, len(base)) if i in where), len(a))
            before.setdefault(at, []).extend(ln for ln in b[j1:j2] if ln not in a)
        out: list[str] = []
        for i, ln in enumerate(a):
            out += before.get(i, [])
            if i not in drop:
                out.append(ln)
        current = "".join(out + before.get(len(a), []))
    return current


@dataclass
class Update(Generic[T]):
    """What one `Writer.update` did: the change's own result and the file as written."""

    result: T
    document: Document
    state: FileState
    changed: bool
    adopted: int
    before: FileState = FileState(False)
    # Entry lines that left the file and that came in (raw text), for an incremental index update.
    removed: list[str] = field(default_factory=list)
    added: list[Line] = field(default_factory=list)
    adopted_ids: list[str] = field(default_factory=list)  # hand-written lines given an id by this update
    raw_bytes: bool = False  # the file holds bytes that are not UTF-8 (kept as typed): index it from the file


class Writer:
    """Serializes every change to the vault's memory files."""

    def __init__(self, vault: Vault, clock: Clock, new_id: Callable[[set[str]], str], lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        self.vault = vault
        self.clock = clock
        self._new_id = new_id
        self._lock_timeout = lock_timeout
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._file_lock: FileLock | None = None
        self._own: dict[str, tuple[int, int, int, str]] = {}  # path -> (ino, mtime_ns, size, content hash) as a writer last wrote it

    # -- locking
    @contextmanager
    def locked(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self.vault.state_dir.mkdir(parents=True, exist_ok=True)
                from filelock import FileLock, Timeout  # here, not at import: a reading process never loads it

                if self._file_lock is None:
                    self._file_lock = FileLock(str(self.vault.lock_path), thread_local=False)
                try:
                    self._file_lock.acquire(timeout=self._lock_timeout)
                except Timeout as exc:  # (a subclass of OSError: caught first)
                    raise VaultError(
                        f"another memdream process has held the vault lock for {self._lock_timeout:.0f} s",
                        f"wait for it to finish, or check for a stuck process holding {self.vault.lock_path}",
                    ) from exc
                except OSError as exc:
                    raise _os_error(exc, self.vault.lock_path) from exc
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._file_lock is not None:
                    self._file_lock.release()

    # -- the one write operation
    def _rewrite(self, path: Path, compute: Callable[[str | None], tuple[str | None, Any]]) -> tuple[FileState | None, Any, FileState]:
        """The loop every write goes through: read, `compute(old_text) -> (new_text, extra)`,
        check that nobody changed the file meanwhile, swap the new text in; start again on top
        of any change that landed. Returns (the new state or None if nothing was written,
        the last `extra`, the state the change was computed from)."""
        self.vault.ensure_inside(path)
        with self.locked():
            start = time.monotonic()
            attempts = 0
            rescued: list[tuple[bytes, bytes]] = []  # saves made on top of a version we swapped back out
            while attempts < MAX_RETRIES or time.monotonic() - start < RETRY_FOR_S:
                attempts += 1
                data, before = self._at_rest(path, *read_file(path))
                if rescued:  # first put them back, merged, as a write of their own; then our change
                    merged = encode_exact(merge_saved(decode_exact(data), rescued))
                    try:
                        if merged != data:
                            self._note_own(path, atomic_write(path, merged, expected=before))
                        rescued = []
                    except Raced as exc:
                        if exc.rescued is not None:
                            rescued.append(exc.rescued)
                    except OSError as exc:
                        raise _os_error(exc, path) from exc
                    continue
                new, extra = compute(decode_exact(data) if before.exists else None)
                if new is None:
                    return None, extra, before
                _, again = read_file(path)
                if again != before:
                    continue  # a hand edit landed meanwhile: redo the change on top of it
                try:
                    written = atomic_write(path, encode_exact(new), expected=before)
                    self._note_own(path, written)
                    return written, extra, before
                except Raced as exc:
                    if exc.rescued is not None:
                        rescued.append(exc.rescued)
                    continue  # an editor saved in the last instant: redo the change on top of it
                except OSError as exc:
                    raise _os_error(exc, path) from exc
            raise VaultError(
                f"{path} kept changing while memdream tried to write it ({attempts} attempts in {time.monotonic() - start:.0f} s)",
                "close the editor that keeps saving it, then try again",
            )

    def read_at_rest(self, path: Path) -> tuple[bytes, FileState]:
        """The file's bytes once nobody is saving it in place (see _at_rest), under the lock."""
        self.vault.ensure_inside(path)
        with self.locked():
            data, state = read_file(path)
            return self._at_rest(path, data, state)

    # -- telling a file at rest from a file being saved in place (issue 17, item 13)
    def _at_rest(self, path: Path, data: bytes, state: FileState) -> tuple[bytes, FileState]:
        """The file once nobody is writing it: never build on a torn read.

        An editor that saves in place truncates the file and writes it again, maybe in
        several pieces: a read in between sees half a file. memdream's own writes are atomic
        renames, so a file as a memdream writer left it (the state recorded in
        .memdream/written) is at rest. Any other version is taken once its modification time
        is SETTLE_S old, or once it stayed the same for SETTLE_S (a clock set ahead), and
        SETTLE_CUT_S if it ends mid-line; until then it is read again every few milliseconds.
        The inode's change time counts too: a file renamed into place a moment ago may be an
        editor's exchange that it is about to undo (what atomic_write itself does on a race).
        The final exchange in atomic_write still checks that what it swaps out is what was read."""
        if not state.exists or self._is_own(path, state):
            return data, state
        # A file cut off mid-line (memdream always ends with a newline) is most likely an editor
        # stalled half way: it must stay the same for longer before it is taken.
        data, state, settled = _settled(path, data, state, lambda d: SETTLE_S if not d or d.endswith(b"\n") else SETTLE_CUT_S)
        if not settled:
            raise VaultError(
                f"{path} kept changing for {SETTLE_MAX_S:.0f} s while memdream waited to write it",
                "close the program that keeps saving it, then try again",
            )
        return data, state

    def _own_path(self) -> Path:
        return self.vault.state_dir / OWN_WRITES

    def _is_own(self, path: Path, state: FileState) -> bool:
        """True if `state` is the file exactly as a memdream writer left it: the same inode,
        modification time and size, and the same content (its hash): a read that caught an
        editor half way through saving in place never passes for memdream's own version,
        whatever the clock's granularity."""
        key = str(path)
        sig = (state.ino, state.mtime_ns, state.size, state.sha)
        if self._own.get(key) == sig:
            return True
        try:  # another memdream process may have written it: its record is in the vault
            with open(self._own_path(), encoding="utf-8") as fh:
                for line in fh:
                    parts = line.rstrip("\n").rsplit("\t", 4)
                    if len(parts) == 5 and parts[0] == key:
                        self._own[key] = (int(parts[1]), int(parts[2]), int(parts[3]), parts[4])
        except (OSError, ValueError):
            return False
        return self._own.get(key) == sig

    def _note_own(self, path: Path, state: FileState) -> None:
        """Record the state of a file memdream just wrote (held under the vault lock)."""
        key = str(path)
        self._own.pop(key, None)
        self._own[key] = (state.ino, state.mtime_ns, state.size, state.sha)
        while len(self._own) > OWN_WRITES_MAX:
            self._own.pop(next(iter(self._own)))
        body = "".join(f"{k}\t{i}\t{m}\t{n}\t{h}\n" for k, (i, m, n, h) in self._own.items())
        try:
            fd = os.open(self._own_path(), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, body.encode("utf-8", "surrogateescape"))
            finally:
                os.close(fd)
        except OSError:
            pass  # only a hint: without it the next writer waits for the file to settle

    def update(self, path: Path, change: Callable[[Document], T], *, header: str = "") -> Update[T]:
        """Apply `change` to the memory file at `path` (created with `header` if missing).

        `change` mutates the document in place and returns anything; it may be called more
        than once if the file changes under us, so it must find entries by id.
        """

        def compute(old: str | None) -> tuple[str | None, tuple]:
            text = old if old is not None else header
            doc = parse_document(text)
            before_lines = Counter(ln.raw for ln in doc.lines if ln.is_entry)
            adopted = self._adopt(doc)
            result = change(doc)
            rendered = doc.render()
            unchanged = rendered == text if old is not None else rendered == header
            return (None if unchanged else rendered), (result, doc, before_lines, adopted)

        state, (result, doc, before_lines, adopted), before = self._rewrite(path, compute)
        if state is None:
            return Update(result, doc, before, False, 0)
        after_lines = Counter(ln.raw for ln in doc.lines if ln.is_entry)
        removed = list((before_lines - after_lines).elements())
        incoming = after_lines - before_lines
        added = []
        for ln in doc.lines:
            if incoming.get(ln.raw, 0) > 0 and ln.is_entry:
                incoming[ln.raw] -= 1
                added.append(ln)
        return Update(result, doc, state, True, len(adopted), before, removed, added, adopted, has_raw_bytes(doc.render()) if before.exists else False)

    def write_text(self, path: Path, transform: Callable[[str | None], str | None]) -> FileState | None:
        """Rewrite a non-entry file (a transcript, a log, NOW.md) with `transform(old_text)`.

        `transform` gets the current text (None if the file does not exist) and returns the
        new text, or None to leave the file as it is. Same guarantees as `update`.
        """

        def compute(old: str | None) -> tuple[str | None, None]:
            new = transform(old)
            return (None if new is None or new == old else new), None

        return self._rewrite(path, compute)[0]

    def restore(self, path: Path, data: bytes | None) -> None:
        """Put a file back as it was (`data`; None: it did not exist), atomically: how a dream
        whose checks failed is rolled back. Only the dream's own transaction calls this."""
        self.vault.ensure_inside(path)
        with self.locked():
            if data is None:
                if os.path.lexists(path):
                    os.unlink(path)
                    _fsync_dir(path.parent)
                return
            self._rewrite(path, lambda old: (None if old is not None and encode_exact(old) == data else decode_exact(data), None))

    def move(self, src: Path, dst: Path) -> Path:
        """Move a file inside the vault (archiving): the copy is written atomically first, then
        the original removed, so a crash leaves it in one place or both, never nowhere. An
        existing different file at `dst` is kept: the copy gets a numbered name instead."""
        self.vault.ensure_inside(src)
        self.vault.ensure_inside(dst.parent if dst.parent.exists() else self.vault.root)
        with self.locked():
            data, state = read_file(src)
            if not state.exists:
                raise VaultError(f"{src} no longer exists", "run the command again to see the current plan")
            target, n = dst, 1
            while target.exists() and read_file(target)[0] != data:
                n += 1
                target = dst.with_name(f"{dst.stem}.{n}{dst.suffix}")
            if not target.exists():
                try:
                    self._note_own(target, atomic_write(target, data))
                except OSError as exc:
                    raise _os_error(exc, target) from exc
            os.unlink(src)
            _fsync_dir(src.parent)
            return target

    def _adopt(self, doc: Document) -> list[str]:
        """Give hand-written lines an id and src=manual; their text is left exactly as typed.
        Returns the ids given."""
        ids: list[str] = []
        now = self.clock.now()
        taken: set[str] = set()  # ids given in this pass; the id factory checks the index
        for i, ln in enumerate(doc.lines):
            if not ln.may_lack_id() or len(ln.raw) > LINE_INDEX_MAX:
                continue
            e = ln.entry
            if e is None or e.id or not e.text.strip():
                continue
            new_id = self._new_id(taken)
            taken.add(new_id)
            adopted = e.evolve(
                id=new_id,
                source=e.source or "manual",
                type=e.type or classify_type(e.text),
                created_at=e.created_at or now,
            )
            if ln.has_meta:
                doc.set_entry(i, adopted)
            else:
                # Keep the typed text byte for byte: append the comment to the raw line.
                comment = render_line(adopted.evolve(text=""))
                comment = comment[comment.index("<!--m:") :]
                raw = ln.raw[:-1] if ln.raw.endswith("\r") else ln.raw
                cr = "\r" if ln.raw.endswith("\r") else ""
                doc.lines[i] = Line(f"{raw} {comment}{cr}", adopted)
            ids.append(new_id)
        return ids


def _os_error(exc: OSError, path: Path) -> VaultError:
    if exc.errno == errno.ENOSPC:
        return VaultError(f"the disk is full; {path} was left unchanged", "free some space and try again")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return VaultError(f"cannot write {path}: {exc.strerror}", "check the vault's permissions (is it read-only?)")
    return VaultError(f"cannot write {path}: {exc.strerror or exc}", "check the disk and the vault's permissions")
