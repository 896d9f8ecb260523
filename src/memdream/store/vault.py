"""The vault on disk: where each scope's files live, and name validation (DESIGN section 2).

    vault/
      memdream.toml
      scopes/<agent>/<user>/MEMORY.md           resident layer
      scopes/<agent>/<user>/NOW.md              the workbench
      scopes/<agent>/<user>/memory/recall/...   recall layer, one file per month (rolled by size)
      scopes/<agent>/<user>/memory/.archive/entries/YYYY-MM[.N].md   archived entries
      scopes/<agent>/<user>/memory/YYYY-MM-DD.md, <category>/, INDEX.md, reflections/   knowledge
      scopes/<agent>/<user>/memory/sessions/    raw layer: transcripts
      scopes/<agent>/<user>/memory/dreams/      dream diaries and the ledger
      scopes/<agent>/<user>/memory/.journal/    acknowledged writes
      .memdream/                                derived and private: index.db, lock, hits/

Every path of the layout is made here; other modules ask a Vault for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from memdream.errors import InvalidName, VaultError
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT
from memdream.model import lazyre as re

NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
MAX_NAME = 64
DEFAULT_USER = "me"
DEFAULT_AGENT = "main"
STATE_DIR = ".memdream"
CONFIG_FILE = "memdream.toml"
SCOPES_DIR = "scopes"
NOW_FILE = "NOW.md"
INDEX_FILE = "INDEX.md"  # memory/INDEX.md, generated
ARCHIVE_DIR = ".archive"  # memory/.archive/: what was archived, in the same layout
SESSIONS_DIR = "sessions"  # memory/sessions/: the raw layer
REFLECTIONS_DIR = "reflections"
DREAMS_DIR = "dreams"
LEDGER_FILE = "ledger.jsonl"  # memory/dreams/ledger.jsonl: what each dream changed, for undo
JOURNAL_DIR = ".journal"  # memory/.journal/: acknowledged writes
HITS_DIR = "hits"  # .memdream/hits/: recall counts waiting to be folded into the files

# A recall file holds at most this many lines before the month rolls over to a new part
# (2026-11.md, 2026-11.2.md, ...): every write rewrites one file atomically, so bounding
# the file bounds the cost of a write however large the scope grows.
RECALL_FILE_MAX_LINES = 1000

_RECALL_NAME = re.compile(r"^(\d{4}-\d{2})(?:\.(\d+))?\.md$")

MEMORY_HEADER = (
    "# MEMORY\n\n"
    "<!-- Resident memory: rules, identity, instructions, preferences. One memory per list item;\n"
    "     the hidden comment at the end of each item is memdream's metadata. Edit freely. -->\n\n"
)
ARCHIVE_HEADER = "# Archived memories\n\n"


def validate_name(value: str, what: str = "name") -> str:
    """Check a user, agent or other path-bearing name; raise InvalidName with a hint."""
    hint = f"use 1-{MAX_NAME} characters from letters, digits, '-', '_' and '.', e.g. 'me' or 'main'"
    if not isinstance(value, str) or value == "":
        raise InvalidName(f"the {what} is empty", hint)
    if "\x00" in value:
        raise InvalidName(f"the {what} contains a NUL byte", hint)
    if len(value) > MAX_NAME:
        raise InvalidName(f"the {what} is {len(value)} characters long (at most {MAX_NAME})", hint)
    if value in (".", ".."):
        raise InvalidName(f"the {what} {value!r} is not allowed", hint)
    if not NAME_RE.fullmatch(value):
        bad = sorted({ch for ch in value if not re.fullmatch(r"[A-Za-z0-9._-]", ch)})
        raise InvalidName(f"the {what} {value!r} contains {''.join(bad)!r}", hint)
    return value


def is_entry_file_name(name: str) -> bool:
    """A file of memory lines in recall/ or the archive (`*.md`; a dotted name is a temp file)."""
    return name.endswith(".md") and not name.startswith(".")


@dataclass(frozen=True)
class Scope:
    """A (user, agent) pair; scopes never see each other's memories."""

    user: str = DEFAULT_USER
    agent: str = DEFAULT_AGENT

    def __post_init__(self) -> None:
        validate_name(self.user, "user name")
        validate_name(self.agent, "agent name")

    @property
    def key(self) -> str:
        return f"{self.agent}/{self.user}"

    @classmethod
    def from_key(cls, key: str) -> "Scope":
        agent, user = key.split("/", 1)
        return cls(user=user, agent=agent)


class Vault:
    """Paths of a vault. Creating a Vault object touches nothing; `init` creates folders."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()

    # -- vault-level paths
    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.db"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / "write.lock"

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def scopes_dir(self) -> Path:
        return self.root / SCOPES_DIR

    def exists(self) -> bool:
        return self.state_dir.is_dir()

    def init(self) -> bool:
        """Create the vault folders; return False if it already existed."""
        existed = self.exists()
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self.scopes_dir.mkdir(exist_ok=True)
            gi = self.state_dir / ".gitignore"
            if not gi.exists():
                gi.write_text("*\n", encoding="utf-8")
        except OSError as exc:
            raise VaultError(
                f"cannot create the vault at {self.root}: {exc.strerror or exc}",
                "choose a writable folder with --vault or MEMDREAM_VAULT",
            ) from exc
        return not existed

    def require(self) -> None:
        if not self.exists():
            raise VaultError(
                f"no memdream vault at {self.root}",
                f"run 'memdream init --vault {self.root}' first, or point --vault / MEMDREAM_VAULT at an existing vault",
            )

    # -- scope paths
    def scope_dir(self, scope: Scope) -> Path:
        return self.scopes_dir / scope.agent / scope.user

    def resident_file(self, scope: Scope) -> Path:
        return self.scope_dir(scope) / "MEMORY.md"

    def memory_dir(self, scope: Scope) -> Path:
        return self.scope_dir(scope) / "memory"

    def recall_dir(self, scope: Scope) -> Path:
        return self.memory_dir(scope) / "recall"

    def archive_dir(self, scope: Scope) -> Path:
        return self.memory_dir(scope) / ARCHIVE_DIR / "entries"

    def recall_file_for(self, scope: Scope, when: datetime, part: int = 1) -> Path:
        name = f"{when:%Y-%m}.md" if part <= 1 else f"{when:%Y-%m}.{part}.md"
        return self.recall_dir(scope) / name

    def archive_file_for(self, scope: Scope, when: datetime, part: int = 1) -> Path:
        """This month's archive file; like recall files, archives roll over at
        RECALL_FILE_MAX_LINES (2026-11.md, 2026-11.2.md, ...), so one move rewrites one bounded file."""
        name = f"{when:%Y-%m}.md" if part <= 1 else f"{when:%Y-%m}.{part}.md"
        return self.archive_dir(scope) / name

    def now_file(self, scope: Scope) -> Path:
        return self.scope_dir(scope) / NOW_FILE

    def daily_log_file(self, scope: Scope, day: date) -> Path:
        return self.memory_dir(scope) / f"{day.isoformat()}.md"

    def knowledge_index_file(self, scope: Scope) -> Path:
        return self.memory_dir(scope) / INDEX_FILE

    def reflection_file(self, scope: Scope, day: date) -> Path:
        return self.memory_dir(scope) / REFLECTIONS_DIR / f"{day.isoformat()}.md"

    def sessions_dir(self, scope: Scope) -> Path:
        """memory/sessions/: transcripts, one folder a day (store/transcripts.py)."""
        return self.memory_dir(scope) / SESSIONS_DIR

    def dreams_dir(self, scope: Scope) -> Path:
        """memory/dreams/: a diary a day and the ledger."""
        return self.memory_dir(scope) / DREAMS_DIR

    def ledger_file(self, scope: Scope) -> Path:
        return self.dreams_dir(scope) / LEDGER_FILE

    def journal_dir(self, scope: Scope) -> Path:
        return self.memory_dir(scope) / JOURNAL_DIR

    def hits_journal_file(self, scope: Scope) -> Path:
        """Where a scope's recall counts wait to be folded into its files (recall/hits.py)."""
        return self.state_dir / HITS_DIR / f"{scope.agent}__{scope.user}.jsonl"

    def list_entry_files(self, scope: Scope) -> list[tuple[str, str]]:
        """Every file of the scope that holds entries, as (path relative to the vault, layer); folders are listed without stat."""
        base = self.relpath(self.scope_dir(scope))
        out: list[tuple[str, str]] = []
        if os.path.lexists(self.resident_file(scope)):  # the index reads regular files only (lstat)
            out.append((f"{base}/MEMORY.md", RESIDENT))
        for sub, layer in (("memory/recall", RECALL), ("memory/.archive/entries", ARCHIVE)):
            try:
                names = sorted(n for n in os.listdir(f"{self.root}/{base}/{sub}") if is_entry_file_name(n))
            except (FileNotFoundError, NotADirectoryError):
                continue
            out.extend((f"{base}/{sub}/{n}", layer) for n in names)
        return out

    def layer_of(self, scope: Scope, path: Path) -> str:
        if path == self.resident_file(scope):
            return RESIDENT
        if path.parent == self.archive_dir(scope):
            return ARCHIVE
        return RECALL

    def scopes(self) -> list[Scope]:
        """Every scope that has a folder, sorted; folders with invalid names are skipped."""
        base = self.scopes_dir
        found: list[Scope] = []
        if not base.is_dir():
            return found
        for agent_dir in sorted(base.iterdir()):
            if agent_dir.is_symlink() or not agent_dir.is_dir():
                continue  # a linked agent folder is never a scope (doctor reports it)
            for user_dir in sorted(agent_dir.iterdir()):
                if not user_dir.is_symlink() and user_dir.is_dir() and NAME_RE.fullmatch(agent_dir.name) and NAME_RE.fullmatch(user_dir.name):
                    if agent_dir.name not in (".", "..") and user_dir.name not in (".", ".."):
                        found.append(Scope(user=user_dir.name, agent=agent_dir.name))
        return found

    def is_inside(self, path: Path | str) -> bool:
        """True if `path` resolves to a place inside the vault and no part of it below the
        vault's root is a symlink: a link from one scope's folder to another's (or to a
        folder outside) is never followed, even when it stays inside the vault."""
        root = os.path.realpath(self.root)
        if os.path.islink(path) or not self.no_links_below_root(path):
            return False
        real = os.path.realpath(path)
        return real == root or real.startswith(root + os.sep)

    def no_links_below_root(self, path: Path | str) -> bool:
        """True if no component of `path` under the vault root is a symlink (lstat only: cheap)."""
        root = str(self.root)
        p = os.path.abspath(path)
        if p == root:
            return True
        if not p.startswith(root + os.sep):
            return False
        cur = root
        for part in p[len(root) + 1 :].split(os.sep):
            cur = cur + os.sep + part
            if os.path.islink(cur):
                return False
        return True

    def ensure_inside(self, path: Path | str) -> None:
        """Refuse to read or write through a symlink (anywhere on the path below the vault's
        root), or anything that resolves outside the vault."""
        if not self.is_inside(path):
            link = self.first_link(path)
            where = f"{link} is a symlink" if link else f"{path} resolves outside the vault {self.root}"
            raise VaultError(
                f"{where}; memdream does not follow links inside a vault (they would let one scope reach another's files)",
                "replace the link with a real folder or file of its own, then try again",
            )

    def first_link(self, path: Path | str) -> str:
        """The first part of `path` below the vault's root that is a symlink ('' if none)."""
        root = str(self.root)
        p = os.path.abspath(path)
        if not p.startswith(root + os.sep):
            return ""
        cur = root
        for part in p[len(root) + 1 :].split(os.sep):
            cur = cur + os.sep + part
            if os.path.islink(cur):
                return cur
        return ""

    def ensure_scope_unlinked(self, scope: Scope) -> None:
        """Refuse a scope whose folders (agent, user, memory, recall, archive) are reached through a link."""
        for d in (self.recall_dir(scope), self.archive_dir(scope)):
            link = self.first_link(d)
            if link:
                raise VaultError(
                    f"{link} is a symlink: scope {scope.key} would read and write another folder's files",
                    "replace the link with a real folder of its own (memdream never follows links inside a vault)",
                )

    def relpath(self, path: Path | str) -> str:
        s, root = str(path), str(self.root)
        if s.startswith(root + os.sep):
            return s[len(root) + 1 :]
        return s


def recall_part(path: Path) -> tuple[str, int] | None:
    """('2026-11', 2) for recall/2026-11.2.md; None for other names."""
    m = _RECALL_NAME.match(path.name)
    if not m:
        return None
    return m.group(1), int(m.group(2) or 1)
