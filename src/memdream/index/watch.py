"""Knowing that none of a scope's memory files changed without a stat of each (Linux inotify).

Before every read the index compares each memory file of the scope with what it indexed: one
`lstat` per file, about 110 files at 100k entries and a thousand at a million (0.5 ms and
several ms of every warm recall). A long-lived process (an MCP server, a chat, a script)
asks the kernel instead: it watches the scope's three folders (the scope's own, for
MEMORY.md; recall; the archive) and does the full comparison only after an event there,
whoever made it (memdream, another process, an editor saving in place or by rename).

Only where the kernel sees every change: a Linux file system on this machine (a network or
FUSE file system can change without an event, so there every read compares as before). Only
from a process's second sync of a scope, so a one-shot command never pays for it. Whatever
goes wrong (no inotify, the watch limit, a folder moved or replaced, a queue overflow), the
next read compares every file as it always did; a forked child watches for itself (the queue
is not shared). `Index(watch=False)` turns it off.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import Any

from memdream.model import lazyre as re

# File systems whose every change passes through this machine's kernel (so inotify sees it).
LOCAL_FILE_SYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "overlay", "bcachefs", "jfs", "reiserfs", "ramfs", "nilfs2"}
)
_OCTAL = re.compile(r"\\([0-7]{3})")


def file_system_of(path: str) -> str | None:
    """The type of the file system that holds `path`, from /proc/self/mountinfo (None if unknown)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            table = fh.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for line in table:
        left, sep, right = line.partition(" - ")
        fields = left.split(" ")
        if not sep or len(fields) < 5 or not right:
            continue
        point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):  # the deepest mount; of equal ones the last mounted
            best, kind = point, right.split(" ")[0]
    return kind


class ScopeWatch:
    """The watches on one scope's folders; `dirty` until a full comparison of the files began
    after the last event."""

    def __init__(self, folders: list[tuple[str, str | None]]) -> None:
        self.folders = folders  # (path, the one name that matters there, or None: every *.md)
        # Every folder from below the vault's root down to the watched ones -> (device, inode) as
        # watched (None: missing). Checked at every read: a folder moved, replaced by another or by
        # a symlink, anywhere on the way, changes one of them (a rename of a parent sends no event).
        self.ids: dict[str, tuple[int, int] | None] = {}
        self.wds: list[int] = []
        self.dirty = True
        self.broken = False  # a folder was moved, removed or replaced: watch it again
        self.epoch: object = None  # the index's epoch at the last full comparison (a rebuild changes it)


class Watcher:
    """One inotify instance per index: the watches of every scope it syncs."""

    def __init__(self) -> None:
        from inotify_simple import INotify, flags  # here: only a process that syncs a scope twice

        self._flags = flags
        self._mask = (
            flags.CREATE | flags.DELETE | flags.MODIFY | flags.ATTRIB | flags.MOVED_FROM | flags.MOVED_TO
            | flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR | flags.DONT_FOLLOW
        )  # fmt: skip
        self._self_events = flags.DELETE_SELF | flags.MOVE_SELF | flags.IGNORED | flags.UNMOUNT
        self._inotify: Any = INotify(nonblocking=True)
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._scopes: dict[str, ScopeWatch] = {}
        self._of_wd: dict[int, tuple[ScopeWatch, str | None]] = {}

    def alive(self) -> bool:
        """False in a child process after a fork: the queue would be shared with the parent."""
        return self._pid == os.getpid()

    def close(self) -> None:
        with self._lock:
            self._scopes.clear()
            self._of_wd.clear()
            if self.alive():
                self._inotify.close()

    def watching(self, key: str) -> bool:
        with self._lock:
            w = self._scopes.get(key)
            return w is not None and not w.broken

    def forget(self) -> None:
        """Every scope is compared in full at its next sync (the index was replaced or cleared)."""
        with self._lock:
            for w in self._scopes.values():
                w.dirty = True

    def get(self, key: str) -> ScopeWatch | None:
        """The scope's watch if it has a sound one."""
        w = self._scopes.get(key)
        return w if w is not None and not w.broken else None

    def watch(self, key: str, root: str, folders: list[tuple[str, str | None]]) -> ScopeWatch | None:
        """The scope's watch, set up if needed (dirty: the caller compares every file next); None
        if the kernel refuses (the watch limit, a folder we may not read) or a symlink is on the
        way (the comparison refuses to read through it, every time)."""
        with self._lock:
            w = self._scopes.get(key)
            if w is not None and not w.broken:
                return w
            if w is not None:
                self._drop(key, w)
            w = ScopeWatch(folders)
            for path, _ in folders:  # the folders on the way first: a watch is only taken below them
                parts = os.path.relpath(path, root).split(os.sep)
                for i in range(1, len(parts) + 1):
                    w.ids.setdefault(os.path.join(root, *parts[:i]), None)
            for path, name in folders:
                try:
                    wd = self._inotify.add_watch(path, self._mask)
                except (FileNotFoundError, NotADirectoryError):
                    continue  # not there yet: its id stays None until it is
                except OSError:
                    self._drop(key, w)
                    return None
                w.wds.append(wd)
                self._of_wd[wd] = (w, name)
            for path in w.ids:
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    self._drop(key, w)
                    return None
                w.ids[path] = (st.st_dev, st.st_ino)
            self._scopes[key] = w
            return w

    def _drop(self, key: str, w: ScopeWatch) -> None:
        self._scopes.pop(key, None)
        for wd in w.wds:
            self._of_wd.pop(wd, None)
            try:
                self._inotify.rm_watch(wd)
            except OSError:
                pass  # already gone with its folder

    def quiet(self, w: ScopeWatch, epoch: object) -> bool:
        """True if no memory file of the scope can have changed since its last full comparison
        began, and the index was not cleared since (`epoch`: another process's rebuild empties it
        and fills it again); otherwise False, and the scope counts as compared from now (the
        caller does it)."""
        with self._lock:
            for ev in self._inotify.read(timeout=0):
                if ev.wd < 0:  # the queue overflowed: events were lost
                    for other in self._scopes.values():
                        other.dirty = True
                    continue
                hit = self._of_wd.get(ev.wd)
                if hit is None:
                    continue
                other, name = hit
                if ev.mask & self._self_events:
                    other.dirty = other.broken = True
                elif name is None:
                    if ev.name.endswith(".md") and not ev.name.startswith("."):
                        other.dirty = True
                elif ev.name == name:
                    other.dirty = True
            if not w.dirty and not w.broken:
                for path, was in w.ids.items():
                    try:
                        st = os.lstat(path)
                        now = (st.st_dev, st.st_ino)
                    except OSError:
                        now = None
                    if now != was:  # a folder came, went or was replaced (by another, by a symlink)
                        w.broken = True
                        break
            if w.broken:
                return False
            if w.dirty or epoch != w.epoch:
                w.dirty, w.epoch = False, epoch
                return False
            return True
