"""The facade every shell calls: `open_memory(...)` returns a `Memory` bound to one scope.

This is the one composition root: it reads the config and builds the scope's `Core` (the
vault, the writer, the index and the clock: core.py); every method is one call into the
engine (engine/), the knowledge vault (knowledge/) or the dream runner (dream/). Tests pass
a frozen clock, a fake model or a fake embedder through the same arguments.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager

from memdream.clock import Clock
from memdream.config import Config, load_config
from memdream import engine
from memdream.core import Core
from memdream.recall.hits import FLUSH_AFTER, HitJournal
from memdream.recall.snapshot import DEFAULT_BUDGET

if TYPE_CHECKING:
    from memdream.doctor import Problem
    from memdream.dream.flush import FlushReport
    from memdream.dream.run import DreamReport
    from memdream.embed.embedder import Embedder
    from memdream.engine.imports import ImportReport
    from memdream.engine.write import WriteOutcome
    from memdream.index.vectors import VectorStore
    from memdream.knowledge.base import Conflict, Knowledge, NoteInfo, NoteOutcome
    from memdream.knowledge.gc import Plan
    from memdream.knowledge.lookup import LookupResult
    from memdream.llm.client import LLM
    from memdream.model.entry import Entry
    from memdream.recall.active import ActiveRecall
    from memdream.recall.search import Hit
    from memdream.recall.snapshot import ContextBlock, Snapshot, Snippet
    from memdream.store.transcripts import Message
    from memdream.store.vault import Scope


# Re-exported for the shells (they import nothing under the facade: tests/test_layers.py),
# each loaded when a shell first asks for it.
REEXPORTS = {
    "Entry": ("memdream.model.entry", "Entry"), "Hit": ("memdream.recall.search", "Hit"), "Scope": ("memdream.store.vault", "Scope"),
    "FOLDER_FORMATS": ("memdream.importers.folders", "FOLDER_FORMATS"), "TRANSCRIPT_FORMATS": ("memdream.importers", "FORMATS"),
    "IMPORT_HINTS": ("memdream.engine.imports", "IMPORT_HINTS"), "ImportReport": ("memdream.engine.imports", "ImportReport"),
    "LLM": ("memdream.llm.client", "LLM"), "LLMError": ("memdream.llm.client", "LLMError"), "Message": ("memdream.store.transcripts", "Message"),
    "NOTE_CATEGORIES": ("memdream.knowledge.notes", "CATEGORIES"), "NOTE_PRIORITIES": ("memdream.knowledge.notes", "PRIORITIES"),
    "NoteInfo": ("memdream.knowledge.base", "NoteInfo"), "PHASES": ("memdream.dream.plan", "PHASES"), "Problem": ("memdream.doctor", "Problem"),
    "Scheduler": ("memdream.dream.schedule", "Scheduler"), "WriteOutcome": ("memdream.engine.write", "WriteOutcome"),
    "count_tokens": ("memdream.recall.snapshot", "count_tokens"),
}


def __getattr__(name: str) -> Any:
    if name in REEXPORTS:
        module, attr = REEXPORTS[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Memory", "open_memory", "load_config", "WriteOutcome", "ImportReport", "Hit", "Entry"]


class Memory:
    """Memories of one (user, agent) scope in one vault."""

    def __init__(self, config: Config, clock: Clock | None = None, embedder: "Embedder | None" = None, llm: "LLM | None" = None) -> None:
        self.core = Core(config, clock, embedder, llm)
        self.config, self.vault, self.scope = config, self.core.vault, self.core.scope
        self.clock, self.index, self.writer = self.core.clock, self.core.index, self.core.writer
        self.hit_flush_after = FLUSH_AFTER  # recall counts gathered before they are written into the files
        self._snapshot: Snapshot | None = None
        self._active: ActiveRecall | None = None

    # -- plumbing
    def close(self) -> None:
        """Close the index connection (the files need no closing)."""
        self.core.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sync(self) -> int:
        """Catch the index up with hand edits; returns the number of files re-read."""
        return self.core.sync()

    @property
    def last_warning(self) -> str:
        """Set when the last operation degraded (e.g. the embedder failed); empty otherwise."""
        return self.core.last_warning

    @last_warning.setter
    def last_warning(self, value: str) -> None:
        self.core.last_warning = value

    @property
    def llm(self) -> "LLM | None":
        """The configured model, or None: every LLM phase is then skipped with a status line."""
        return self.core.llm

    @property
    def embedder(self) -> "Embedder":
        """The configured embedder (NoEmbedder for keyword-only); built on first use."""
        return self.core.embedder

    @property
    def vectors(self) -> "VectorStore | None":
        """The stored embeddings of this vault (None without an embedder); built on first use."""
        return self.core.vectors

    @property
    def knowledge(self) -> Knowledge:
        """NOW.md, the daily log, knowledge files, conflicts and INDEX.md of this scope."""
        return self.core.knowledge

    @property
    def hit_journal(self) -> HitJournal:
        """Where this scope's recall counts wait to be folded into the files."""
        return self.core.hit_journal

    # -- writing (engine/write.py, engine/engine.edits.py)
    def remember(self, text: str, type: str | None = None, subject: str | None = None, pin: bool = False, source: str = "user") -> Entry:
        """Store a memory; returns the entry that now holds it (a new one, or the existing duplicate)."""
        return self.write(text, type=type, subject=subject, pin=pin, source=source).entry

    def write(self, text: str, type: str | None = None, subject: str | None = None, pin: bool = False, source: str = "user") -> WriteOutcome:
        """The write path (DESIGN section 5): validate, refuse secrets, classify, dedup or supersede, write."""
        return engine.write.write(self.core, text, type=type, subject=subject, pin=pin, source=source)

    def forget(self, entry_id: str, hard: bool = False) -> Entry:
        """Soft: end the entry's validity and move its line to the archive. Hard: delete the line."""
        return engine.edits.forget(self.core, entry_id, hard)

    def update(self, entry_id: str, text: str, source: str = "user") -> WriteOutcome:
        """Replace a memory's text: a new line supersedes the old one (`sup`), which ends and
        stays in the history. The type, subject and pin carry over."""
        return engine.edits.update(self.core, entry_id, text, source)

    def pin(self, entry_id: str, pinned: bool = True) -> Entry:
        """Pin a memory: always in the resident snapshot (whatever its layer), never touched by dreams."""
        return engine.edits.pin(self.core, entry_id, pinned)

    def unpin(self, entry_id: str) -> Entry:
        """Undo `pin`: the memory is ranked and maintained like any other again."""
        return self.pin(entry_id, pinned=False)

    def adopt(self) -> int:
        """Give every hand-written line of the scope an id (its text untouched); returns how many."""
        return engine.edits.adopt(self.core)

    def flush_hits(self) -> int:
        """Fold batched recall counts into the files (hc += n, la = last); returns hits folded."""
        return engine.hits.flush_hits(self.core)

    # -- reading (engine/engine.reading.py)
    def get(self, entry_id: str) -> Entry:
        """The entry with this id (current or ended); `NotFound` if there is none."""
        return engine.reading.get(self.core, entry_id)

    def list(self, layer: str | None = None, include_ended: bool = False) -> list[Entry]:
        """Entries by layer (default: resident and recall), oldest first; `include_ended` adds superseded
        ones (the archive layer, asked for by name, always lists its ended entries)."""
        return engine.reading.entries(self.core, layer, include_ended)

    def history(self, subject_or_id: str) -> list[Entry]:
        """The supersede trail of a subject (or of the entry with that id), oldest first."""
        return engine.reading.history(self.core, subject_or_id)

    def stats(self) -> dict[str, int]:
        """Counts of the scope's currently valid memories, by layer and type."""
        return engine.reading.stats(self.core)

    # -- recall (DESIGN section 6; engine/recall.py)
    def recall(self, query: str, k: int = 10, as_of: datetime | str | None = None, rank_by: str = "score") -> list[Hit]:
        """The `k` best memories for `query`: relevance lifted by recency and importance, with traces.

        Only currently valid entries, or those valid at `as_of` (a datetime, or a date /
        ISO string; a bare date means the end of that day). Hits are counted (batched).
        """
        return engine.recall.recall(self.core, query, k, as_of, rank_by, self.hit_flush_after)

    def as_of(self, when: datetime | str | None) -> datetime | None:
        """Read an as-of time as recall does (a bare date is the end of that day)."""
        return engine.recall.parse_as_of(self.core, when)

    def embed_pending(self, limit: int | None = None, progress=None) -> int:  # type: ignore[no-untyped-def]
        """Embed the scope's entries that lack a vector for the configured model (0 without an embedder)."""
        return engine.recall.embed_pending(self.core, limit, progress)

    def snapshot(self, budget: int = DEFAULT_BUDGET, refresh: bool = False) -> Snapshot:
        """The resident layer, plus pinned recall-layer facts ("pinned memories are always
        resident"), frozen at the first call for the life of this Memory (a session)."""
        if self._snapshot is None or refresh or self._snapshot.budget != budget:
            self._snapshot = engine.recall.resident_snapshot(self.core, budget)
        return self._snapshot

    def context(self, query: str | None = None, budget: int = DEFAULT_BUDGET, k: int = 8, one_to_one: bool = True) -> ContextBlock:
        """What an agent injects each turn: the frozen resident snapshot, then the entries
        recalled for `query`, then active-recall snippets from past conversations."""
        snap = self.snapshot(engine.recall.resident_budget(budget))
        return engine.recall.context(
            snap, query, budget, k, lambda q, n: self.recall(q, k=n), lambda q: self.active_recall(q, one_to_one=one_to_one)
        )

    @property
    def active_recall(self) -> ActiveRecall:
        """Transcript snippets before a reply: local search with a timeout and a circuit breaker."""
        if self._active is None:
            from memdream.recall.active import ActiveRecall

            self._active = ActiveRecall(lambda q, n: self.search_raw(q, n), self.clock)
        return self._active

    def search_raw(self, query: str, k: int = 5) -> list[Snippet]:
        """Full-text search over stored transcripts (the raw layer)."""
        from memdream.index.raw import search_raw, sync_raw

        sync_raw(self.index, self.scope)
        return search_raw(self.index, self.scope, query, k)

    # -- imports and exports (engine/engine.imports.py, store/backup.py)
    def import_transcripts(self, fmt: str, path: str | os.PathLike[str]) -> ImportReport:
        """Store conversation transcripts verbatim under memory/sessions/ (idempotent), except
        for lines that hold a credential: those are replaced by a note and reported as refused."""
        return engine.imports.import_transcripts(self.core, fmt, path)

    def export(self, to: str | os.PathLike[str], scope: Scope | None = None):  # type: ignore[no-untyped-def]
        """Copy the vault's truth (every Markdown file, the dream ledgers, memdream.toml; not
        the derived index) to a new folder or a FILE.tar.gz; with `scope`, only that scope."""
        from memdream.store.backup import export

        return export(self.vault, self.writer, Path(to).expanduser(), scope)

    def import_vault(self, path: str | os.PathLike[str]) -> ImportReport:
        """Restore a copy that `export` wrote: each file the vault lacks is written; a file
        already there with other content is kept and reported. The index follows."""
        return engine.imports.import_vault(self.core, path)

    def check_import_source(self, path: str | os.PathLike[str], from_scope: str | None = None) -> None:
        """Refuse to import from another scope of this vault (its memories would cross into
        this scope without a word) unless `from_scope` names that scope ("agent/user")."""
        engine.imports.check_import_source(self.core, path, from_scope)

    def import_folder(self, fmt: str, path: str | os.PathLike[str], from_scope: str | None = None) -> ImportReport:
        """Import another memory system's folder (claude-code, openclaw, cowagent): list items
        become memories through the write path; daily logs join the daily memory; the rest is
        kept verbatim in the raw layer. Importing twice adds nothing. A folder of another scope
        of this vault is refused unless `from_scope` names it."""
        return engine.imports.import_folder(self.core, fmt, path, from_scope)

    # -- the knowledge vault (DESIGN section 8)
    def now(self, text: str | None = None) -> str:
        """NOW.md: the current text, or replace it with `text` (the only file written in place)."""
        from memdream.knowledge.base import NOW_MAX_CHARS, check_size

        if text is not None:
            check_size(text, NOW_MAX_CHARS, "the NOW.md text", "keep NOW.md to the current state")  # before the scan
            engine.checks.no_secret(text)
            self.knowledge.set_now(text)
        return self.knowledge.now()

    def log(self, title: str, body: str = "") -> tuple[Path, str]:
        """Append a "### HH:MM — Title" block to today's daily log; returns (file, heading)."""
        from memdream.knowledge.base import MAX_LOG_CHARS, check_size

        check_size(f"{title}{body}", MAX_LOG_CHARS, "the log block", "put long text in a knowledge file")  # before the scan
        engine.checks.no_secret(f"{title}\n{body}")
        return self.knowledge.log(title, body)

    def note(self, category: str, topic: str, text: str, priority: str | None = None, tags: tuple[str, ...] = ()) -> NoteOutcome:
        """Read-then-write a knowledge file: ADD, UPDATE, NOOP or CONFLICT; INDEX.md follows."""
        # note_add checks the size, then the text, the topic and the tags for credentials.
        return self.knowledge.note_add(category, topic, text, priority, tags)

    def conflicts(self) -> list[Conflict]:
        """Every open conflict: contradictory knowledge paragraphs, contradictory memories, and
        memories waiting for the user's confirmation (id p-<entry id>; a: nothing, b: the text)."""
        return engine.conflicts.conflicts(self.core)

    def resolve(self, conflict_id: str, keep: str, text: str | None = None) -> Conflict:
        """Close a conflict: the side not kept is superseded (memories) or marked superseded (knowledge)."""
        return engine.conflicts.resolve(self.core, conflict_id, keep, text)

    def gc(self, dry_run: bool = False) -> Plan:
        """Archive cold knowledge-vault files by the OpenClaw rules; `dry_run` changes nothing."""
        return self.knowledge.gc(dry_run)

    def reflect(self, day: str | None = None) -> Path:
        """Write memory/reflections/DAY.md (a mechanical summary without a model)."""
        return self.knowledge.reflect(engine.checks.parse_day(day, "the date"))

    def aggregate(self, from_agent: str) -> int:
        """Copy a sub-agent's new daily-log blocks (same user) into this scope's logs; idempotent."""
        from memdream.errors import RefusedInput
        from memdream.store.vault import Scope

        from memdream.knowledge.base import Knowledge

        source = Knowledge(self.vault, Scope(user=self.scope.user, agent=from_agent), self.writer, self.clock, None)
        if source.scope == self.scope:
            raise RefusedInput("an agent cannot aggregate its own logs", "name another agent with --from")
        return self.knowledge.aggregate(source)

    def lookup(self, query: str, archive: bool = False) -> LookupResult:
        """INDEX.md, then the named file, then search; the result says which level answered."""
        return engine.recall.lookup(self.core, lambda q: self.recall(q, k=5), query, archive)

    # -- dreaming (DESIGN section 9; dream/run.py)
    def dream(self, phases: list[str] | tuple[str, ...] | None = None, days: int = 3, dry_run: bool = False, force: bool = True, progress=None) -> "DreamReport":  # type: ignore[no-untyped-def]
        """Run the dream phases (light, deep, distill, replay, profile; all by default). The
        model phases are skipped with a status line when no model is configured."""
        from memdream.dream.run import dream

        return dream(self.core, phases, days, dry_run, force, progress)

    def undo(self) -> dict:
        """Revert the last dream that changed something (git revert in a git vault)."""
        from memdream.dream.run import undo

        return undo(self.core)

    def flush(self, messages: list[dict] | None = None, day: str | None = None) -> "FlushReport":
        """Summarize conversations into the daily memory memory/YYYY-MM-DD.md.

        With `messages` (role/content dicts: the part of a chat that was trimmed), they are
        first stored verbatim in the raw layer, then summarized. Without, the day's stored
        conversations not yet flushed are summarized."""
        from memdream.dream.flush import flush_chat

        return flush_chat(self.core, messages, engine.checks.parse_day(day))

    # -- for the web console and chat (engine/views.py)
    def generation(self) -> int:
        """A number that changes whenever a memory line of the vault is added or removed (in
        any process), read after a sync: the web console reloads its page when it moves."""
        self.sync()
        return self.index.generation()

    def versioned(self, layer: str | None = None) -> list[tuple[Entry, str]]:
        """What `list(layer)` lists, each entry with the version of its line: the version a
        change made through `at_version` names."""
        return engine.views.versioned(self.core, layer)

    def versions(self, entry_ids: Iterable[str]) -> dict[str, str]:
        """The version of the current line of each of `entry_ids` (an id without one is left out)."""
        return engine.views.versions(self.core, entry_ids)

    def at_version(self, entry_id: str, version: str | None) -> ContextManager[Entry]:
        """Hold the writer lock while the current line of `entry_id` is the one at `version`
        (from `versioned` or `versions`): the changes made inside are made against what was
        shown. `NotFound` if it has no current line; `ChangedOnDisk` if the line reads otherwise
        now (a hand edit, another program): nothing is written."""
        return engine.views.at_version(self.core, entry_id, version)

    def lines_in(self, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        """For each (vault path, entry id): the line of that id in that file now, or None."""
        return engine.views.lines_in(self.core, wanted)

    def scope_problems(self) -> list[Problem]:
        """`memdream doctor`'s checks of this scope only: what its web console may show."""
        return engine.vaultwide.scope_problems(self.core)

    def notes(self) -> list[NoteInfo]:
        """The scope's knowledge files as INDEX.md lists them (category, priority, status, staleness)."""
        return self.knowledge.notes()

    def daily_logs(self, n: int = 7) -> list[tuple[str, str]]:
        """The newest `n` daily logs (memory/YYYY-MM-DD.md) as (day, text), newest first."""
        return engine.views.newest_days(self.vault.memory_dir(self.scope), n)

    def daily_log(self, day: date | None = None) -> str:
        """The daily log of `day` (today by default) as it is on disk; "" if there is none."""
        return engine.views.daily_log(self.core, day)

    def resident_text(self) -> str:
        """MEMORY.md, the resident layer's file, as it is on disk (after a sync); "" if there is none."""
        return engine.views.resident_text(self.core)

    def diaries(self, n: int = 30) -> list[tuple[str, str]]:
        """The newest `n` dream diaries (memory/dreams/YYYY-MM-DD.md) as (day, text), newest first."""
        from memdream.dream.ledger import ledger_path

        return engine.views.newest_days(ledger_path(self.core).parent, n, "*.md")

    def dream_records(self) -> list[dict]:
        """The dream ledger, oldest first: one record per dream (its changes by file: the lines
        removed as they stood, the ids added) and one per undo (`{"undo": run}`)."""
        from memdream.dream import ledger

        return ledger.records(self.core)

    def last_dream(self) -> dict | None:
        """The record of the latest dream that changed something and was not undone (what `undo` reverts)."""
        from memdream.dream import ledger

        return ledger.last_dream(self.core)

    def dreams_due(self) -> list[str]:
        """The dream jobs the scheduler would run now, by the config's times and the last runs."""
        from memdream.dream import ledger
        from memdream.dream.schedule import jobs_due

        return jobs_due(self.clock.now(), ledger.load_state(self.core), self.config.dream)

    def relpath(self, path: str | os.PathLike[str]) -> str:
        """`path` (a file a facade call returned, e.g. by `log`) relative to the vault."""
        return self.vault.relpath(Path(path))

    def keep_chat(self, session_id: str, started: datetime, messages: list[Message], part: int = 1, title: str = "memdream chat") -> str:
        """Store a chat's transcript so far in the raw layer (memory/sessions/DAY/SESSION[-PART].md),
        rewritten as the chat goes on; returns its vault path (what `flush_chat` takes)."""
        return engine.views.keep_chat(self.core, session_id, started, messages, part, title)

    def flush_chat(self, path: str, day: date) -> "FlushReport":
        """Summarize one stored conversation (its vault path, from `keep_chat`) into the daily memory of `day`."""
        from memdream.dream.flush import flush

        return flush(self.core, day, [path])

    # -- for the CLI: the whole vault (engine/engine.vaultwide.py)
    def write_config_template(self) -> bool:
        """Write the commented memdream.toml into the vault if it has none; True when written."""
        return engine.vaultwide.write_config_template(self.core)

    def scopes(self) -> list[Scope]:
        """Every scope of the vault (not only this one)."""
        return self.vault.scopes()

    def now_file(self) -> Path:
        """Where this scope's NOW.md is (it may not exist yet)."""
        return self.knowledge.now_path

    @property
    def knowledge_status(self) -> str:
        """What the model did in the last knowledge operation (a reflection, a note), or why it was skipped."""
        return self.knowledge.last_status

    def rebuild_index(self) -> int:
        """Delete the index and build it again from every scope's files, transcripts too; returns the entries indexed."""
        return engine.vaultwide.rebuild_index(self.core)

    def sync_all(self) -> int:
        """Catch the index up with hand edits in every scope of the vault; returns the files re-read."""
        return engine.vaultwide.sync_all(self.core)

    def doctor(self, fix: bool = False) -> tuple[list[str], list[str], list[str], list[Problem]]:
        """Check that every file parses and the index agrees with the files. With `fix`, first
        delete the temp files interrupted writes left and put back acknowledged memories no
        file holds any more. Returns (temp files removed, restored, not restored, problems)."""
        return engine.vaultwide.doctor(self.core, fix)


def open_memory(
    vault: str | os.PathLike[str] | None = None,
    user: str | None = None,
    agent: str | None = None,
    *,
    config: Config | None = None,
    clock: Clock | None = None,
    embedder: Embedder | None = None,
    llm: LLM | None = None,
    create: bool = True,
) -> Memory:
    """Open the memory of one (user, agent) scope; creates the vault if `create` (the default)."""
    cfg = config or load_config(vault, user, agent)
    mem = Memory(cfg, clock, embedder, llm)
    if create:
        mem.vault.init()
    else:
        mem.vault.require()
    mem.vault.ensure_scope_unlinked(mem.scope)
    return mem
