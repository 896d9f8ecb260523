"""Reading the vault's files, for everyone: the bytes and state of a file, never through a
link, never blocking on a FIFO, and the ways to decode them. Nothing here writes; the single
writer (store/writer.py) reads through these functions too, so readers and the writer agree
on what a file is.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from memdream.errors import VaultError
from memdream.model import lazyre as re

# A line longer than this (typed by hand: memdream writes at most max_chars of text plus its
# metadata) stays in the file as it is and is not adopted; only its first LINE_INDEX_MAX
# characters are indexed, shown and recalled, and doctor names it.
LINE_INDEX_MAX = 8_000


@dataclass(frozen=True)
class FileState:
    """What a reader (or the writer) saw of a file: enough to notice any change."""

    exists: bool
    mtime_ns: int = 0
    size: int = 0
    ino: int = 0
    sha: str = ""
    # When the inode last changed, a rename included (a save by rename keeps the new file's
    # modification time): told apart from the rest only by the writer's wait for a file at rest.
    ctime_ns: int = field(default=0, compare=False)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class NotRegularFile(VaultError):
    """Something other than a plain file (a folder, a FIFO, a device, a link, a hard-linked
    file) sits where memdream expects one of its files: it is never opened for reading."""


def what_is(mode: int) -> str:
    """'a folder', 'a FIFO (named pipe)', ... for a file mode that is not a regular file."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def not_regular(path: Path | str, what: str) -> NotRegularFile:
    return NotRegularFile(
        f"{path} is {what}, where memdream keeps a plain file; memdream does not open it",
        "move it out of the vault (or replace it with a plain file), then try again; 'memdream doctor' lists every such path",
    )


def hard_linked(path: Path | str, links: int) -> NotRegularFile:
    return NotRegularFile(
        f"{path} has {links} hard links: another name (maybe in another scope) shares its content; memdream does not read or write it",
        f"give it its own copy ('cp {path} {path}.copy && mv {path}.copy {path}'), then try again",
    )


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def read_file(path: Path, links_ok: bool = False) -> tuple[bytes, FileState]:
    """The bytes of a regular file and its state; (b"", missing) if there is none.

    Never blocks and never follows a link: a FIFO, device, socket or folder at `path`, a
    symlink, or (unless `links_ok`) a file with more than one hard link raises NotRegularFile
    without reading anything. (Opened non-blocking, so even a FIFO returns at once.)"""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return b"", FileState(False)
    except NotADirectoryError:
        return b"", FileState(False)  # a parent is a file: there is no such file
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise not_regular(path, "a symlink") from exc
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket
            raise not_regular(path, "a socket") from exc
        if exc.errno == errno.EISDIR:
            raise not_regular(path, "a folder") from exc
        raise _read_error(exc, path) from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(path, what_is(st.st_mode))
        if st.st_nlink > 1 and not links_ok:
            raise hard_linked(path, st.st_nlink)
        chunks = []
        while True:
            try:
                chunk = os.read(fd, max(st.st_size + 1, 65536))
            except BlockingIOError:  # cannot happen on a regular file; never spin
                break
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise _read_error(exc, path) from exc
    finally:
        os.close(fd)
    return data, FileState(True, st.st_mtime_ns, st.st_size, st.st_ino, content_hash(data), st.st_ctime_ns)


def _read_error(exc: OSError, path: Path | str) -> VaultError:
    return VaultError(f"cannot read {path}: {exc.strerror or exc}", "check the file's permissions and the disk")


def decode(data: bytes, path: Path) -> str:
    """Memory files are UTF-8; undecodable bytes are shown as U+FFFD instead of crashing
    (for display and the index; the writer keeps the bytes: see decode_exact)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


def decode_exact(data: bytes) -> str:
    """The writer's reading: undecodable bytes become lone surrogates (surrogateescape) so
    that encode_exact gives them back byte for byte in every line memdream did not change."""
    return data.decode("utf-8", errors="surrogateescape")


def encode_exact(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


_SURROGATE = re.compile("[\udc80-\udcff]")


def has_raw_bytes(text: str) -> bool:
    """True if `text` (from decode_exact) holds bytes that were not valid UTF-8."""
    return _SURROGATE.search(text) is not None


def clean(text: str) -> str:
    """`text` from decode_exact as display text: undecodable bytes become U+FFFD."""
    if not has_raw_bytes(text):
        return text
    return encode_exact(text).decode("utf-8", errors="replace")
