"""The core: one scope's engine room, under the facade.

A `Core` holds what every operation on a scope needs and nothing a shell needs: the vault and
its paths, the scope, the clock, the single writer, the index, entry ids, where a new line
goes, and `update`, the one way a memory file changes:

1. a dream's transaction (when one is passed, explicitly) records the file's pre-image;
2. the writer applies the change under its lock, re-reading the file and re-applying on top
   of a hand edit that landed meanwhile (store/writer.py);
3. the index follows from the document just written (a few row updates, not a sync).

The engine modules (engine/write.py, engine/edits.py, engine/imports.py, ...) and the dream
phases take a Core; `Memory` (memory.py) is the facade that composes them. Nothing sets state
on a Core from outside: a transaction is an argument, never an attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memdream.clock import Clock, SystemClock
from memdream.config import Config
from memdream.errors import NotFound, VaultError
from memdream.index.db import Index, Row
from memdream.model.entry import ARCHIVE, RECALL, RESIDENT, Entry
from memdream.recall.hits import HitJournal
from memdream.store.format import Document
from memdream.store.transaction import Transaction
from memdream.store.vault import ARCHIVE_HEADER, MEMORY_HEADER, RECALL_FILE_MAX_LINES, Scope, Vault, recall_part
from memdream.store.writer import Update, Writer

if TYPE_CHECKING:
    from memdream.embed.embedder import Embedder
    from memdream.index.vectors import VectorStore
    from memdream.knowledge.base import Knowledge
    from memdream.llm.client import LLM

ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_LENGTH = 6  # 36^6 ≈ 2.2e9; uniqueness in the vault is checked against the index
LAYER_ORDER = {RESIDENT: 0, RECALL: 1, ARCHIVE: 2}  # where an id is looked up first

Change = Callable[[Document], object]


def set_entry(entry_id: str, fn: Callable[[Entry], Entry]) -> Change:
    """A writer change that rewrites the entry `entry_id` with `fn(entry)`. It finds the entry
    by id, so the writer can re-apply it on top of a hand edit; returns the new entry."""

    def change(doc: Document) -> Entry | None:
        i = doc.find(entry_id)
        if i < 0:
            return None
        new = fn(doc.lines[i].entry)
        doc.set_entry(i, new)
        return new

    return change


class Core:
    """Vault, scope, clock, writer and index of one (user, agent) scope, and the few
    operations every engine module shares."""

    def __init__(self, config: Config, clock: Clock | None = None, embedder: "Embedder | None" = None, llm: "LLM | None" = None) -> None:
        self.config = config
        self.vault = Vault(config.vault)
        self.scope = Scope(user=config.user, agent=config.agent)
        self.clock: Clock = clock or SystemClock(config.tzinfo())
        self.index = Index(self.vault)
        self.writer = Writer(self.vault, self.clock, self.new_id)
        self.last_warning = ""  # set when an operation degraded (e.g. the embedder failed)
        self._embedder = embedder
        self._llm = llm
        self._llm_loaded = llm is not None
        self._vectors: "VectorStore | None" = None
        self._knowledge: "Knowledge | None" = None

    def close(self) -> None:
        self.index.close()

    # -- ids and where lines go
    def new_id(self, taken: Iterable[str] = ()) -> str:
        """A fresh entry id, unused in `taken` and in the whole vault's index."""
        import secrets as _random  # here, not at import: hmac and OpenSSL's hashes load with it (issue 21)

        taken = set(taken)
        while True:
            candidate = "".join(_random.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
            if candidate not in taken and not self.index.id_taken(candidate):
                return candidate

    def file_for_new(self, layer: str, now: datetime) -> tuple[Path, str]:
        """The file (and the header it starts with) a new line of `layer` is appended to:
        MEMORY.md, or this month's recall or archive part with room left (those files roll
        over at RECALL_FILE_MAX_LINES, so a write rewrites one bounded file)."""
        path, header, _ = self.files_for_new(layer, now, 1)[0]
        return path, header

    def files_for_new(self, layer: str, now: datetime, n: int) -> list[tuple[Path, str, int]]:
        """Where `n` new lines of `layer` go, in order: (file, header, how many lines) filling
        this month's last part, then new parts of RECALL_FILE_MAX_LINES lines (MEMORY.md: one)."""
        if layer == RESIDENT:
            return [(self.vault.resident_file(self.scope), MEMORY_HEADER, n)]
        month = f"{now:%Y-%m}"
        folder = self.vault.archive_dir(self.scope) if layer == ARCHIVE else self.vault.recall_dir(self.scope)
        parts = {
            part: count
            for rel, count in self.index.files(self.scope, layer, self.index.rel(folder) + f"/{month}")
            for m, part in [recall_part(Path(rel)) or ("", 0)]
            if m == month
        }
        part = max(parts, default=1)
        room = RECALL_FILE_MAX_LINES - parts.get(part, 0)
        out: list[tuple[Path, str, int]] = []
        left = max(1, n)
        while left > 0:
            if room <= 0:
                part, room = part + 1, RECALL_FILE_MAX_LINES
            take = min(room, left)
            if layer == ARCHIVE:
                out.append((self.vault.archive_file_for(self.scope, now, part), ARCHIVE_HEADER, take))
            else:
                out.append((self.vault.recall_file_for(self.scope, now, part), f"# Recall memories {month}\n\n", take))
            left -= take
            room -= take
        return out

    def path(self, row: Row) -> Path:
        return self.vault.root / row.path

    def find(self, entry_id: str, current_only: bool = False) -> Row:
        """The row of `entry_id` (resident first, then recall, then archive); NotFound if none."""
        rows = self.index.by_id(self.scope, entry_id)
        if current_only:
            rows = [r for r in rows if r.entry().valid_to is None]
        if not rows:
            raise NotFound(
                f"no memory with id {entry_id!r} in scope {self.scope.key}",
                "find ids with 'memdream list' or 'memdream history SUBJECT'",
            )
        return sorted(rows, key=lambda r: LAYER_ORDER.get(r.layer, 3))[0]

    # -- the one way a memory file changes
    def sync(self) -> int:
        """Catch the index up with hand edits; returns the number of files re-read."""
        return self.index.sync_scope(self.scope)

    def update(self, path: Path, change: Change, header: str = "", tx: Transaction | None = None, index: bool = True) -> Update:
        """One writer update, recorded in `tx` when a dream passes its transaction, followed by
        the matching incremental index update; without `index`, the caller passes the update
        to `index_updates` (with the others it makes) before anything reads the index."""
        if tx is not None:
            tx.touch(path, self.writer.read_at_rest)
        upd = self.writer.update(path, change, header=header)
        if upd.changed:
            if tx is not None:
                tx.record(path, upd)
            if index:
                self.index_updates([(path, upd)])
        return upd

    def index_updates(self, done: list[tuple[Path, Update]]) -> None:
        """Index writer updates made one after another: one, as Index.apply_update; several (a
        dream's moves), as one change (Index.apply_updates: a line moved keeps its row)."""
        items = [(path, self.scope, self.vault.layer_of(self.scope, path), upd) for path, upd in done if upd.changed]
        if not items:
            return
        try:
            if len(items) == 1:
                self.index.apply_update(*items[0])
            else:
                self.index.apply_updates(items)
        except VaultError as exc:
            # The file (the truth) is written; the index catches up at the next sync.
            self.last_warning = exc.message

    # -- the parts loaded on first use
    @property
    def llm(self) -> "LLM | None":
        """The configured model, or None: every LLM phase is then skipped with a status line."""
        if not self._llm_loaded:
            if self.config.llm_configured:  # none configured: no client to import (issue 21)
                from memdream.llm.client import load_llm

                self._llm = load_llm(self.config)
            self._llm_loaded = True
        return self._llm

    @property
    def embedder_configured(self) -> bool:
        """Whether an embedder was passed in or configured (without loading it)."""
        return self._embedder is not None or self.config.embedder not in ("", "none")

    @property
    def embedder(self) -> "Embedder":
        """The configured embedder (NoEmbedder for keyword-only); built on first use."""
        if self._embedder is None:
            if self.config.embedder == "openai":
                from memdream.embed.remote import from_config

                self._embedder = from_config(dict(self.config.embedder_options))
            else:
                from memdream.embed.embedder import load_embedder

                self._embedder = load_embedder(self.config.embedder)
        return self._embedder

    @property
    def vectors(self) -> "VectorStore | None":
        """The stored embeddings of this vault (None without an embedder); built on first use."""
        from memdream.embed.embedder import NoEmbedder

        if self._vectors is None and not isinstance(self.embedder, NoEmbedder):
            from memdream.index.vectors import VectorStore

            self._vectors = VectorStore(self.index, self.embedder)
        return self._vectors

    @property
    def knowledge(self) -> "Knowledge":
        """NOW.md, the daily log, knowledge files, conflicts and INDEX.md of this scope."""
        if self._knowledge is None:
            from memdream.knowledge.base import Knowledge

            self._knowledge = Knowledge(self.vault, self.scope, self.writer, self.clock, self.llm)
        return self._knowledge

    @property
    def hit_journal(self) -> HitJournal:
        """Where this scope's recall counts wait to be folded into the files."""
        return HitJournal(self.vault.hits_journal_file(self.scope))
