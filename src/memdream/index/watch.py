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
is not shared). After events, only the files they name are compared (all of them past
WATCHED_CHANGES_MAX, index/sync.py). One difference: a hard link made to a memory file from
another folder sends no event, so its rows stay until the file changes, where the full
comparison drops them at once (the writer and doctor refuse the file either way).
`Index(watch=False)` turns it off.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import Any

from memdream.model import lazyre as re
from memdream.store.vault import is_entry_file_name

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
    """The watches on one scope's folders, and the files changed since the last comparison."""

    def __init__(self) -> None:
        # Every folder from below the vault's root down to the watched ones -> (device, inode) as
        # watched (None: missing). Checked at every read: a folder moved, replaced by another or by
        # a symlink, anywhere on the way, changes one of them (a rename of a parent sends no event).
        self.ids: dict[str, tuple[int, int] | None] = {}
        self.wds: list[int] = []
        self.changed: set[str] | None = None  # the files changed since the last comparison; None: maybe any
        self.broken = False  # a folder was moved, removed or replaced: watch it again
        self.epoch: object = None  # the index's epoch at the last full comparison (a rebuild changes it)


class Watcher:
    """One inotify instance per index: the watches of every scope it syncs."""

    def __init__(self) -> None:
        from inotify_simple import INotify, flags  # here: only a process that syncs a scope twice

        self._mask = (
            flags.CREATE | flags.DELETE | flags.MODIFY | flags.ATTRIB | flags.MOVED_FROM | flags.MOVED_TO
            | flags.DELETE_SELF | flags.MOVE_SELF | flags.ONLYDIR | flags.DONT_FOLLOW
        )  # fmt: skip
        self._self_events = flags.DELETE_SELF | flags.MOVE_SELF | flags.IGNORED | flags.UNMOUNT
        self._inotify: Any = INotify(nonblocking=True)
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._scopes: dict[str, ScopeWatch] = {}
        self._of_wd: dict[int, tuple[ScopeWatch, str, str | None]] = {}  # wd -> (its scope, its folder, the one name that matters)

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
        return self.get(key) is not None

    def forget(self) -> None:
        """Every scope is compared in full at its next sync (the index was replaced or cleared)."""
        with self._lock:
            for w in self._scopes.values():
                w.changed = None

    def get(self, key: str) -> ScopeWatch | None:
        """The scope's watch if it has a sound one."""
        w = self._scopes.get(key)
        return w if w is not None and not w.broken else None

    def watch(self, key: str, root: str, folders: list[tuple[str, str | None]]) -> ScopeWatch | None:
        """The scope's watch, set up if needed (the caller compares every file next); None
        if the kernel refuses (the watch limit, a folder we may not read) or a symlink is on the
        way (the comparison refuses to read through it, every time)."""
        with self._lock:
            w = self.get(key)
            if w is not None:
                return w
            if key in self._scopes:  # broken: watched again from scratch
                self._drop(key, self._scopes[key])
            w = ScopeWatch()
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
                self._of_wd[wd] = (w, path, name)
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

    def pending(self, w: ScopeWatch, epoch: object, most: int) -> list[str] | None:
        """The files of the scope that may have changed since its last comparison began: [] if
        none; None if any may have (a folder moved or replaced, the queue overflowed, more than
        `most` files, the index cleared since: `epoch`, as another process's rebuild does). The
        scope counts as compared from now: the caller compares them (all of them for None)."""
        with self._lock:
            for ev in self._inotify.read(timeout=0):
                if ev.wd < 0:  # the queue overflowed: events were lost
                    for other in self._scopes.values():
                        other.changed = None
                    continue
                hit = self._of_wd.get(ev.wd)
                if hit is None:
                    continue
                other, folder, name = hit
                if ev.mask & self._self_events:
                    other.changed, other.broken = None, True
                elif other.changed is not None and (ev.name == name if name else is_entry_file_name(ev.name)):
                    other.changed.add(os.path.join(folder, ev.name))
            if not w.broken:
                for path, was in w.ids.items():
                    try:
                        st = os.lstat(path)
                        now = (st.st_dev, st.st_ino)
                    except OSError:
                        now = None
                    if now != was:  # a folder came, went or was replaced (by another, by a symlink)
                        w.broken = True
                        break
            changed, w.changed = w.changed, set()
            if w.broken or changed is None or len(changed) > most or epoch != w.epoch:
                w.epoch = epoch
                return None
            return sorted(changed)
