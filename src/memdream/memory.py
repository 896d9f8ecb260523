"""The facade every shell calls: `open_memory(...)` returns a `Memory` bound to one scope.

This is the one composition root: it reads the config, wires the vault, the writer, the
index and the clock. Tests pass a frozen clock through the same arguments.
"""

from __future__ import annotations

import os
import re
import secrets as _random
import unicodedata
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from memdream.clock import Clock, SystemClock
from memdream.config import Config, load_config
from memdream.errors import MemdreamError, NotFound, RefusedInput, SecretRefused, VaultError
from memdream.index.db import NEG_TOKEN, Index, Row
from memdream.model.classify import classify_type, extract_subject, salience
from memdream.model.hostile import PENDING_INJECTION, pending_reason
from memdream.model.entry import (
    ARCHIVE,
    END_FORGOTTEN,
    END_SUPERSEDED,
    LAYERS,
    RECALL,
    RESIDENT,
    TYPES,
    Entry,
    layer_for_type,
)
from memdream.model.secrets import find_secret, redact
from memdream.model.crud import decide, negated, without_negation
from memdream.model.scoring import DEFAULT_COSINE_WEIGHT, dense_weight
from memdream.model.similarity import RESTATEMENT_COSINE, anchor_terms, dedup_anchors, is_duplicate, similarity, word_count
from memdream.store import journal
from memdream.store.format import Document, parse_line, render_line
from memdream.store.vault import MEMORY_HEADER, RECALL_FILE_MAX_LINES, Scope, Vault, recall_part
from memdream.store.writer import Writer
from memdream.importers import MAX_IMPORT_TEXT_CHARS, Skipped
from memdream.importers import read as read_transcripts
from memdream.index.raw import search_raw, sync_raw
from memdream.index.slots import Settled, ambiguous_candidate, ask_same_fact, find_slot, nearest_restatement
from memdream.model.slots import default_subject
from memdream.recall.active import ActiveRecall
from memdream.recall.hits import FLUSH_AFTER, Bump, HitJournal
from memdream.recall.search import CANDIDATES as DENSE_CANDIDATES
from memdream.recall.search import Dense, Hit
from memdream.recall.slots import collapse as collapse_slots
from memdream.recall.search import recall as recall_hits
from memdream.recall.snapshot import (
    DEFAULT_BUDGET,
    RESIDENT_SHARE,
    SNIPPET_SHARE,
    ContextBlock,
    Snapshot,
    Snippet,
    build_snapshot,
    count_tokens,
    fit,
)
from memdream.store.transcripts import render as render_transcript
from memdream.embed.embedder import Embedder, NoEmbedder, load_embedder
from memdream.index.vectors import VectorStore
from memdream.knowledge.base import MAX_LOG_CHARS, MAX_NOTE_CHARS, NOW_MAX_CHARS, Conflict, Knowledge, NoteOutcome, check_size
from memdream.knowledge.gc import Plan
from memdream.knowledge.lookup import LookupResult, lookup
from memdream.llm.client import LLM
from memdream.dream.transaction import Transaction

# re-exported for the shells
from memdream.doctor import Problem  # noqa: F401
from memdream.dream.run import PHASES  # noqa: F401
from memdream.dream.schedule import Scheduler  # noqa: F401
from memdream.importers import FORMATS as TRANSCRIPT_FORMATS  # noqa: F401
from memdream.importers.folders import FOLDER_FORMATS  # noqa: F401
from memdream.knowledge.base import NoteInfo  # noqa: F401
from memdream.knowledge.notes import CATEGORIES as NOTE_CATEGORIES  # noqa: F401
from memdream.knowledge.notes import PRIORITIES as NOTE_PRIORITIES  # noqa: F401
from memdream.llm.client import LLMError  # noqa: F401

if TYPE_CHECKING:
    from memdream.dream.flush import FlushReport
    from memdream.dream.run import DreamReport

ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_LENGTH = 6  # 36^6 ≈ 2.2e9; uniqueness in the vault is checked against the index
DEDUP_CANDIDATES = 10  # full-text candidates compared by bigram similarity on each write
# A duplicate holds every content word of the new text (see model/similarity.py). So if one
# of the text's anchor terms is in no entry at all, there is no duplicate, and otherwise the
# candidates are the entries holding all of its 3 rarest anchors: a cheap query at any size.
DEDUP_QUERY_TERMS = 3
MAX_SUBJECT_CHARS = 100
CONF_USER, CONF_OTHER, CONF_STEP = 0.9, 0.8, 0.05  # initial confidence; raised by each repeat
CONTRADICTION_CANDIDATES, CONTRADICTION_QUERY_TERMS = 5, 2  # a small AND query per write
EMBED_AT_RECALL = 256  # a recall embeds at most this many new entries first; `memdream index embed` does the rest

Action = Literal["added", "duplicate", "superseded"]


IMPORT_HINTS = {
    "chatgpt": "give the ChatGPT export's .zip as downloaded (Settings > Data controls > Export data), or the conversations.json inside it",
    "jsonl": 'give a file with one JSON object per line, e.g. {"role": "user", "content": "..."}',
    "markdown": "give a Markdown chat log (User: / Assistant: turns) or any Markdown file",
}


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)  # files written (transcripts, documents, daily memory)
    unchanged: list[str] = field(default_factory=list)  # files already imported
    skipped: list[tuple[str, str]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # ids of memories written
    known: int = 0  # memories already there (importing twice adds nothing)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (where, why): secrets and bad lines

    def to_json(self) -> dict:
        return {
            "imported": self.imported,
            "unchanged": self.unchanged,
            "skipped": [{"where": w, "why": y} for w, y in self.skipped],
            "memories_added": self.added,
            "memories_known": self.known,
            "refused": [{"where": w, "why": y} for w, y in self.refused],
        }


@dataclass(frozen=True)
class WriteOutcome:
    """What `remember` did: a new line, a refreshed duplicate, or a new line superseding others."""

    action: Action
    entry: Entry
    superseded: tuple[Entry, ...] = ()
    similarity: float = 0.0
    contradicts: Entry | None = None  # a valid memory saying the opposite: both kept, a conflict opened

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "entry": self.entry.to_json(),
            "superseded": [e.to_json() for e in self.superseded],
            "similarity": round(self.similarity, 3),
            "contradicts": self.contradicts.to_json() if self.contradicts else None,
        }


def _check_text(text: str, max_chars: int) -> str:
    if not isinstance(text, str):
        raise RefusedInput("the memory text must be a string", "pass the text as a plain string")
    text = text.strip()
    if not text:
        raise RefusedInput("the memory text is empty", "say what to remember, e.g. memdream remember \"I prefer dark themes\"")
    if len(text) > max_chars:
        raise RefusedInput(
            f"the memory text is {len(text)} characters long (at most {max_chars})",
            "store one fact per memory, or keep longer notes with 'memdream log'",
        )
    bad = [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cs") and ch != "\t"]
    if bad:
        what = "a line break" if any(ch in "\r\n" for ch in bad) else f"the control character {bad[0]!r}"
        raise RefusedInput(
            f"the memory text contains {what}",
            "a memory is one line of text; split it into several memories",
        )
    return text


class Memory:
    """Memories of one (user, agent) scope in one vault."""

    def __init__(self, config: Config, clock: Clock | None = None, embedder: Embedder | None = None, llm: LLM | None = None) -> None:
        self.config = config
        self.vault = Vault(config.vault)
        self.scope = Scope(user=config.user, agent=config.agent)
        self.clock: Clock = clock or SystemClock(config.tzinfo())
        self.index = Index(self.vault)
        self.writer = Writer(self.vault, self.clock, self._new_id)
        self._snapshot: Snapshot | None = None
        self._active: ActiveRecall | None = None
        self._embedder = embedder
        self._llm = llm
        self._llm_loaded = llm is not None
        self._knowledge: Knowledge | None = None
        self._vectors: VectorStore | None = None
        self.last_warning = ""  # set when recall degraded (e.g. the embedder failed)
        self.hit_flush_after = FLUSH_AFTER  # recall counts gathered before they are written into the files
        self._tx: Transaction | None = None  # the open dream transaction, recording every file it writes

    # -- plumbing
    def close(self) -> None:
        """Close the index connection (the files need no closing)."""
        self.index.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _new_id(self, taken: set[str]) -> str:
        while True:
            candidate = "".join(_random.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
            if candidate not in taken and not self.index.id_taken(candidate):
                return candidate

    def sync(self) -> int:
        """Catch the index up with hand edits; returns the number of files re-read."""
        return self.index.sync_scope(self.scope)

    def _update(self, path: Path, change, header: str = ""):  # type: ignore[no-untyped-def]
        """One writer update followed by the matching incremental index update."""
        tx = self._tx
        if tx is not None:
            tx.touch(path, self.writer.read_at_rest)
        upd = self.writer.update(path, change, header=header)
        if upd.changed:
            if tx is not None:
                tx.record(path, upd)
            try:
                self.index.apply_update(path, self.scope, self.vault.layer_of(self.scope, path), upd)
            except VaultError as exc:
                # The file (the truth) is written; the index catches up at the next sync.
                self.last_warning = exc.message
        return upd

    def _file_for_new(self, layer: str, now: datetime) -> tuple[Path, str]:
        if layer == RESIDENT:
            return self.vault.resident_file(self.scope), MEMORY_HEADER
        month = f"{now:%Y-%m}"
        parts = {
            part: count
            for rel, count in self.index.files(self.scope, RECALL, self.index.rel(self.vault.recall_dir(self.scope)) + f"/{month}")
            for m, part in [recall_part(Path(rel)) or ("", 0)]
            if m == month
        }
        part = max(parts, default=1)
        if parts.get(part, 0) >= RECALL_FILE_MAX_LINES:
            part += 1
        return self.vault.recall_file_for(self.scope, now, part), f"# Recall memories {month}\n\n"

    def _path(self, row: Row) -> Path:
        return self.vault.root / row.path

    def _find(self, entry_id: str, current_only: bool = False) -> Row:
        rows = self.index.by_id(self.scope, entry_id)
        if current_only:
            rows = [r for r in rows if r.entry().valid_to is None]
        if not rows:
            raise NotFound(
                f"no memory with id {entry_id!r} in scope {self.scope.key}",
                "find ids with 'memdream list' or 'memdream history SUBJECT'",
            )
        order = {RESIDENT: 0, RECALL: 1, ARCHIVE: 2}
        return sorted(rows, key=lambda r: order.get(r.layer, 3))[0]

    @staticmethod
    def _set(entry_id: str, fn):  # type: ignore[no-untyped-def]
        """A writer change that rewrites the entry `entry_id` with `fn(entry)` (by id, re-appliable)."""

        def change(doc: Document) -> Entry | None:
            i = doc.find(entry_id)
            if i < 0:
                return None
            new = fn(doc.lines[i].entry)
            doc.set_entry(i, new)
            return new

        return change

    # -- writing
    def remember(self, text: str, type: str | None = None, subject: str | None = None, pin: bool = False, source: str = "user") -> Entry:
        """Store a memory; returns the entry that now holds it (a new one, or the existing duplicate)."""
        return self.write(text, type=type, subject=subject, pin=pin, source=source).entry

    def write(self, text: str, type: str | None = None, subject: str | None = None, pin: bool = False, source: str = "user") -> WriteOutcome:
        """The write path (DESIGN section 5): validate, refuse secrets, classify, dedup or supersede, write."""
        text = _check_text(text, self.config.max_text_chars)
        if subject is not None and (len(subject) > MAX_SUBJECT_CHARS or any(unicodedata.category(c) == "Cc" for c in subject.strip())):
            raise RefusedInput("the subject must be one short line", f"use at most {MAX_SUBJECT_CHARS} characters")
        # The subject is written into the line too (subj=): it gets the same secret check.
        for part in (text, subject or ""):
            kind = find_secret(part)
            if kind:
                raise SecretRefused(
                    f"refused: the {'text' if part is text else 'subject'} looks like {kind}; credentials never enter memory",
                    "keep secrets in a password manager or your environment, and remember where they are, not what they are",
                )
        if type is not None and type not in TYPES:
            raise RefusedInput(f"unknown type {type!r}", "use one of: " + ", ".join(TYPES))
        type_ = type or classify_type(text)
        subj = (extract_subject(text) if subject is None else subject).strip()
        if len(subj) > MAX_SUBJECT_CHARS or any(unicodedata.category(c) == "Cc" for c in subj):
            raise RefusedInput("the subject must be one short line", f"use at most {MAX_SUBJECT_CHARS} characters")
        # An instruction or rule not from the user, or a text that steers the agent, waits for the
        # user's confirmation (pend=, docs/format.md): written to the recall layer, never resident,
        # never recalled, superseding nothing; `memdream conflicts` lists it, `resolve` decides.
        pending = pending_reason(text, type_, source)
        settled = self._settle(text) if subject is None and source == "user" else None  # a model call: before the lock
        with self.writer.locked():
            self.sync()
            now = self.clock.now()
            dup = self._duplicate_of(text, subj)
            if dup is None and subject is None:
                found = find_slot(self.index, self.scope, text)
                if found is not None:  # the subject of the entry stating the same slot
                    subj = found.subject
                    if found.restates is not None:
                        dup = (found.restates, similarity(text, found.restates.entry().text))
                elif not subj:
                    subj = default_subject(text)  # the slot's own name: a later value finds it
            also_ends: list[Row] = []
            if dup is None:
                near = self._restatement_of(text, subj)
                if near is not None:  # the same fact in other words (by the embedder)
                    row, cos = near
                    if word_count(text) > word_count(row.entry().text):
                        also_ends, subj = [row], subj or row.entry().subject  # the one saying more stays
                    else:
                        dup = (row, cos)
            if dup is None and settled is not None:  # the model's opinion, if the entry did not change since
                rows = [r for r in self.index.by_id(self.scope, settled.entry_id) if r.vt is None and r.entry().text == settled.text]
                if rows and settled.kind == "same":
                    dup = (rows[0], similarity(text, settled.text))
                elif rows and not subj:
                    subj = rows[0].entry().subject
                    also_ends = [] if subj else rows[:1]
            if dup is not None:
                row, sim = dup
                old = row.entry()

                def refresh(e: Entry) -> Entry:
                    conf = e.confidence if e.confidence is not None else CONF_OTHER
                    return e.evolve(
                        confidence=round(min(1.0, conf + CONF_STEP), 2),
                        last_recalled=now,
                        pinned=e.pinned or pin,
                        subject=e.subject or subj,
                    )

                upd = self._update(self._path(row), self._set(old.id, refresh))
                refreshed = (upd.result or old).evolve(layer=row.layer)
                return WriteOutcome("duplicate", refreshed, (), sim)
            olds = (([r for r in self.index.by_subject(self.scope, subj)] if subj else []) or also_ends) if not pending else []
            against = None if olds else self._contradiction_of(text)
            new = Entry(
                text=text,
                id=self._new_id(set()),
                type=type_,
                subject=subj,
                valid_from=now,
                confidence=CONF_USER if source == "user" else CONF_OTHER,
                source=source,
                pinned=pin,
                created_at=now,
                salience=salience(text),
                supersedes=olds[-1].entry().id if olds else "",
                conflicts_with=against.id if against else "",
                pending=pending,
            )
            layer = RECALL if pending else layer_for_type(type_)
            path, header = self._file_for_new(layer, now)
            # New line first, then the end marks: a crash in between leaves both valid, never neither.
            self._update(path, lambda doc: doc.append_entry(new), header=header)
            if self._tx is None:  # a dream's own lines are in its ledger, which undo follows; the record is of acknowledged writes
                journal.record(self.vault, self.scope, path, new.id, render_line(new), now)  # what doctor checks the files against
            ended: list[Entry] = []
            for row in olds:
                upd = self._update(self._path(row), self._set(row.entry().id, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
                if upd.result is not None:
                    ended.append(upd.result.evolve(layer=row.layer))
            return WriteOutcome("superseded" if ended else "added", new.evolve(layer=layer), tuple(ended), contradicts=against)

    def _restatement_of(self, text: str, subject: str) -> tuple[Row, float] | None:
        """With an embedder: the current entry saying `text`'s fact in other words, if any
        (model/similarity.may_fold_by_meaning guards it: never a contradiction). Without one,
        or when it fails, None (the lexical rules stand)."""
        if self._embedder is None and self.config.embedder in ("", "none"):
            return None
        vectors = self.vectors
        if vectors is None:
            return None
        try:
            near = nearest_restatement(vectors, self.scope, text, RESTATEMENT_COSINE)
        except Exception as exc:  # noqa: BLE001 - an embedder failure only leaves the lexical rules
            self.last_warning = f"embedder unavailable, restatements compared by words only: {exc}"
            return None
        if near is not None and subject and near[0].entry().subject not in ("", subject):
            return None  # another subject: another slot
        return near

    def _settle(self, text: str) -> Settled | None:
        """With a model configured: its opinion on the one current entry the mechanical rules
        leave ambiguous (same fact? a change?), asked outside the lock; None otherwise."""
        llm = self.llm
        if llm is None:
            return None
        self.sync()
        row = ambiguous_candidate(self.index, self.scope, text)
        if row is None:
            return None
        settled, why = ask_same_fact(llm, row, text)
        if why:
            self.last_warning = why
        return settled

    def _contradiction_of(self, text: str) -> Entry | None:
        """A valid memory on the same topic with the opposite polarity (我吃辣 / 我不吃辣), if any.

        Such a memory holds the new text's words once negations are set aside, so the rarest
        of them find it; for a positive text only negative entries qualify, and those carry an
        extra index token, so the AND query walks a short list at any scope size.
        """
        anchors = [t for t in anchor_terms(without_negation(text))]
        df = self.index.document_frequency(anchors + [NEG_TOKEN])
        present = sorted((t for t in anchors if df.get(t)), key=lambda t: df[t])
        if not present:
            return None
        if negated(text):
            terms = present[:CONTRADICTION_QUERY_TERMS]  # one anchor is enough: 我不吃辣 has only 吃辣
        else:
            if not df.get(NEG_TOKEN):
                return None  # no negative memory at all: nothing can contradict a positive one
            terms = [NEG_TOKEN, *present[: CONTRADICTION_QUERY_TERMS - 1]]
        for row, _ in self.index.match(self.scope, terms, CONTRADICTION_CANDIDATES, op="AND"):
            e = row.entry()
            if e.is_current and decide([e.text], text).kind == "CONFLICT":
                return e.evolve(layer=row.layer)
        return None

    def _duplicate_of(self, text: str, subject: str) -> tuple[Row, float] | None:
        """The most similar currently valid entry that says the same thing, if any."""
        anchors = dedup_anchors(text)
        df = self.index.document_frequency(anchors)
        rows: list[Row] = []
        if anchors and all(df.get(t) for t in anchors):
            rarest = sorted(anchors, key=lambda t: df[t])[:DEDUP_QUERY_TERMS]
            rows = [r for r, _ in self.index.match(self.scope, rarest, DEDUP_CANDIDATES, op="AND")]
        elif not anchors:
            rows = [r for r, _ in self.index.search(self.scope, text, DEDUP_CANDIDATES)]
        if subject:
            rows += self.index.by_subject(self.scope, subject)
        best: tuple[Row, float] | None = None
        seen: set[int] = set()
        for row in rows:
            if row.rowid in seen:
                continue
            seen.add(row.rowid)
            e = row.entry()
            if not e.is_current or not is_duplicate(text, e.text):
                continue
            sim = similarity(text, e.text)
            if best is None or sim > best[1]:
                best = (row, sim)
        return best

    def forget(self, entry_id: str, hard: bool = False) -> Entry:
        """Soft: end the entry's validity and move its line to the archive. Hard: delete the line."""
        with self.writer.locked():
            self.sync()
            if hard:
                rows = self.index.by_id(self.scope, entry_id)
                if not rows:
                    self._find(entry_id)
                removed: Entry | None = None
                for row in rows:

                    def drop(doc: Document) -> Entry | None:
                        i = doc.find(entry_id)
                        return doc.remove(i) if i >= 0 else None

                    upd = self._update(self._path(row), drop)
                    removed = upd.result or removed
                assert removed is not None
                journal.erase(self.vault, self.scope, entry_id)  # erased history leaves no copy behind
                return removed
            row = self._find(entry_id, current_only=True)
            now = self.clock.now()
            # The line as typed (row.entry() shows a hand-typed credential redacted): the archive keeps it verbatim.
            ended = parse_line(row.line, row.layer).evolve(valid_to=now, end=END_FORGOTTEN)
            if row.layer == ARCHIVE:
                return self._update(self._path(row), self._set(entry_id, lambda e: ended)).result.evolve(layer=ARCHIVE)
            # Copy into the archive first, then remove: a crash in between duplicates, never loses.
            archive = self.vault.archive_file_for(self.scope, now)
            self._update(archive, lambda doc: doc.append_entry(ended) if doc.find(entry_id) < 0 else None, header="# Archived memories\n\n")

            def drop_current(doc: Document) -> None:
                i = doc.find(entry_id)
                if i >= 0:
                    doc.remove(i)

            self._update(self._path(row), drop_current)
            return ended.evolve(layer=ARCHIVE)

    def update(self, entry_id: str, text: str, source: str = "user") -> WriteOutcome:
        """Replace a memory's text: a new line supersedes the old one (`sup`), which ends and
        stays in the history. The type, subject and pin carry over."""
        with self.writer.locked():
            self.sync()
            row = self._find(entry_id, current_only=True)
            old = row.entry()
            out = self.write(text, type=old.type or None, subject=old.subject or None, pin=old.pinned, source=source)
            if out.entry.id == old.id or out.entry.pending:
                return out  # the same thing said again; or a replacement that waits for the user (the old one stays)
            if out.action == "superseded" and any(e.id == old.id for e in out.superseded):
                return out  # the subject did it
            now = self.clock.now()
            new_id = out.entry.id
            self._update(self._path(self._find(new_id, current_only=True)), self._set(new_id, lambda e: e.evolve(supersedes=e.supersedes or old.id)))
            upd = self._update(self._path(row), self._set(old.id, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
            ended = (upd.result or old).evolve(layer=row.layer)
            return WriteOutcome("superseded", out.entry.evolve(supersedes=out.entry.supersedes or old.id), (*out.superseded, ended))

    def pin(self, entry_id: str, pinned: bool = True) -> Entry:
        """Pin a memory: always in the resident snapshot (whatever its layer), never touched by dreams."""
        with self.writer.locked():
            self.sync()
            row = self._find(entry_id, current_only=True)
            upd = self._update(self._path(row), self._set(entry_id, lambda e: e.evolve(pinned=pinned)))
            return (upd.result or row.entry()).evolve(layer=row.layer)

    def unpin(self, entry_id: str) -> Entry:
        """Undo `pin`: the memory is ranked and maintained like any other again."""
        return self.pin(entry_id, pinned=False)

    # -- reading
    def get(self, entry_id: str) -> Entry:
        """The entry with this id (current or ended); `NotFound` if there is none."""
        self.sync()
        return self._find(entry_id).entry()

    def list(self, layer: str | None = None, include_ended: bool = False) -> list[Entry]:
        """Entries by layer (default: resident and recall), oldest first; `include_ended` adds superseded
        ones (the archive layer, asked for by name, always lists its ended entries)."""
        self.sync()
        if layer is not None and layer not in LAYERS:
            raise RefusedInput(f"unknown layer {layer!r}", "use one of: " + ", ".join(LAYERS))
        layers = (layer,) if layer else ((RESIDENT, RECALL, ARCHIVE) if include_ended else (RESIDENT, RECALL))
        # The archive holds ended entries by nature: asking for it means asking for them.
        current_only = not include_ended and layer != ARCHIVE
        return [r.entry() for r in self.index.entries(self.scope, layers, current_only=current_only)]

    def history(self, subject_or_id: str) -> list[Entry]:
        """The supersede trail of a subject (or of the entry with that id), oldest first."""
        self.sync()
        rows = self.index.by_subject(self.scope, subject_or_id, current_only=False)
        if not rows:
            by_id = self.index.by_id(self.scope, subject_or_id)
            if not by_id:
                raise NotFound(
                    f"no memory with subject or id {subject_or_id!r} in scope {self.scope.key}",
                    "subjects are set with 'memdream remember --subject S'; list entries with 'memdream list --all'",
                )
            start = by_id[0].entry()
            rows = self.index.by_subject(self.scope, start.subject, current_only=False) if start.subject else []
            rows += self._chain(start)
        out: dict[str, Entry] = {}
        for r in rows:
            e = r.entry()
            key = e.id or f"row{r.rowid}"
            if key not in out or out[key].valid_to is not None:
                out[key] = e
        earliest = datetime.min.replace(tzinfo=timezone.utc)
        by_id = {e.id: e for e in out.values() if e.id}

        def depth(e: Entry) -> int:  # how many links of the trail lead to e (ties within a second)
            n, seen = 0, set()
            while e.supersedes in by_id and e.supersedes not in seen:
                seen.add(e.supersedes)
                e, n = by_id[e.supersedes], n + 1
            return n

        return sorted(out.values(), key=lambda e: (e.valid_from or e.created_at or earliest, depth(e), e.id))

    def _chain(self, start: Entry) -> list[Row]:
        rows: list[Row] = []
        seen = {start.id}
        frontier = [start.id]
        while frontier:
            nxt: list[str] = []
            for eid in frontier:
                for r in self.index.by_id(self.scope, eid) + self.index.by_supersedes(self.scope, eid):
                    rows.append(r)
                    e = r.entry()
                    for other in (e.id, e.supersedes):
                        if other and other not in seen:
                            seen.add(other)
                            nxt.append(other)
            frontier = nxt
        return rows

    # -- recall (DESIGN section 6)
    def recall(self, query: str, k: int = 10, as_of: datetime | str | None = None, rank_by: str = "score") -> list[Hit]:
        """The `k` best memories for `query`: relevance lifted by recency and importance, with traces.

        Only currently valid entries, or those valid at `as_of` (a datetime, or a date /
        ISO string; a bare date means the end of that day). Hits are counted (batched).
        """
        if not isinstance(query, str):
            raise RefusedInput("the query must be a string", "pass the question as plain text")
        when = self._as_of(as_of)
        self.sync()
        if rank_by not in ("score", "relevance"):
            raise RefusedInput(f"unknown ranking {rank_by!r}", "use 'score' (relevance lifted by recency and importance) or 'relevance'")
        dense = self._dense(query)
        hits = recall_hits(
            self.index, self.scope, query, max(0, int(k)), self.clock.now(), as_of=when, rank_by=rank_by,
            dense=dense, fusion=self.config.fusion,
            cosine_weight=self._dense_weight(query) if dense else DEFAULT_COSINE_WEIGHT,
        )  # fmt: skip
        hits = [h for h in hits if not h.entry.pending]  # waiting for the user's confirmation: never served
        if when is None:
            hits = collapse_slots(hits)
        if hits and when is None:
            self._count_hits([h.entry.id for h in hits])
        return hits

    @property
    def llm(self) -> LLM | None:
        """The configured model, or None: every LLM phase is then skipped with a status line."""
        if not self._llm_loaded:
            from memdream.llm.client import load_llm

            self._llm = load_llm(self.config)
            self._llm_loaded = True
        return self._llm

    @property
    def embedder(self) -> Embedder:
        """The configured embedder (NoEmbedder for keyword-only); built on first use."""
        if self._embedder is None:
            if self.config.embedder == "openai":
                from memdream.embed.remote import from_config

                self._embedder = from_config(dict(self.config.embedder_options))
            else:
                self._embedder = load_embedder(self.config.embedder)
        return self._embedder

    @property
    def vectors(self) -> VectorStore | None:
        """The stored embeddings of this vault (None without an embedder); built on first use."""
        if self._vectors is None and not isinstance(self.embedder, NoEmbedder):
            self._vectors = VectorStore(self.index, self.embedder)
        return self._vectors

    def embed_pending(self, limit: int | None = None, progress=None) -> int:  # type: ignore[no-untyped-def]
        """Embed the scope's entries that lack a vector for the configured model (0 without an embedder)."""
        vectors = self.vectors
        if vectors is None:
            return 0
        self.sync()
        return vectors.embed_pending(self.scope, limit, progress)

    def _dense_weight(self, query: str) -> float:
        latin = getattr(self.embedder, "cosine_weight", DEFAULT_COSINE_WEIGHT)
        return dense_weight(query, latin, getattr(self.embedder, "cosine_weight_cjk", latin))

    def _dense(self, query: str) -> Dense | None:
        """The dense side of recall, or None: keyword only, by choice or because it failed."""
        self.last_warning = ""
        vectors = self.vectors
        if vectors is None or not query.strip():
            return None
        try:
            vectors.embed_pending(self.scope, limit=EMBED_AT_RECALL)
            qvec = vectors.query_vector(query)
            near, mean, std, n = vectors.search(self.scope, qvec, DENSE_CANDIDATES)
        except Exception as exc:  # noqa: BLE001 - any embedder failure degrades to keyword recall
            self.last_warning = f"embedder unavailable, keyword relevance only: {exc}"
            return None
        return Dense(lambda rows: vectors.cosines(self.scope, qvec, rows), self.index.rows([rid for rid, _ in near]), mean, std, n)

    def _as_of(self, as_of: datetime | str | None) -> datetime | None:
        if as_of is None or isinstance(as_of, datetime):
            if isinstance(as_of, datetime) and as_of.tzinfo is None:
                return as_of.replace(tzinfo=self.clock.now().tzinfo)
            return as_of
        text = str(as_of).strip()
        try:
            if len(text) == 10:
                d = datetime.fromisoformat(text)
                return d.replace(hour=23, minute=59, second=59, tzinfo=self.clock.now().tzinfo)
            d = datetime.fromisoformat(text.replace("Z", "+00:00"))
            return d if d.tzinfo else d.replace(tzinfo=self.clock.now().tzinfo)
        except ValueError as exc:
            raise RefusedInput(f"cannot read the date {text!r}", "use YYYY-MM-DD or an ISO 8601 time such as 2026-06-20T18:00") from exc

    @property
    def hit_journal(self) -> HitJournal:
        """Where this scope's recall counts wait to be folded into the files."""
        return HitJournal(self.vault.state_dir / "hits" / f"{self.scope.agent}__{self.scope.user}.jsonl")

    def _count_hits(self, ids: list[str]) -> None:
        journal = self.hit_journal
        if journal.record(ids, self.clock.now(), self.hit_flush_after):
            self.flush_hits()

    def flush_hits(self) -> int:
        """Fold batched recall counts into the files (hc += n, la = last); returns hits folded."""
        journal = self.hit_journal
        with self.writer.locked():
            self.sync()

            def apply(bumps: list[Bump]) -> None:
                by_path: dict[str, list[Bump]] = {}
                for b in bumps:
                    for row in self.index.by_id(self.scope, b.entry_id):
                        by_path.setdefault(row.path, []).append(b)
                for rel, group in by_path.items():

                    def change(doc: Document, group: list[Bump] = group) -> None:
                        for b in group:
                            i = doc.find(b.entry_id)
                            e = doc.lines[i].entry if i >= 0 else None
                            if e is not None:
                                last = max(b.last, e.last_recalled) if e.last_recalled else b.last
                                doc.set_entry(i, e.evolve(hits=e.hits + b.count, last_recalled=last))

                    self._update(self.vault.root / rel, change)

            return journal.flush(apply)

    def snapshot(self, budget: int = DEFAULT_BUDGET, refresh: bool = False) -> Snapshot:
        """The resident layer, plus pinned recall-layer facts ("pinned memories are always
        resident"), frozen at the first call for the life of this Memory (a session)."""
        if self._snapshot is None or refresh or self._snapshot.budget != budget:
            self.sync()
            resident = [e for r in self.index.entries(self.scope, (RESIDENT,), current_only=True) if not (e := r.entry()).pending]
            resident += [e for r in self.index.pinned(self.scope, (RECALL,)) if not (e := r.entry()).pending]
            self._snapshot = build_snapshot(resident, budget, self.clock.now())
        return self._snapshot

    def context(self, query: str | None = None, budget: int = DEFAULT_BUDGET, k: int = 8, one_to_one: bool = True) -> ContextBlock:
        """What an agent injects each turn: the frozen resident snapshot, then the entries
        recalled for `query`, then active-recall snippets from past conversations."""
        if budget < 1:
            raise RefusedInput("the budget must be at least 1 token", "pass --budget 2000 or so")
        snap = self.snapshot(max(1, int(budget * RESIDENT_SHARE)))
        block = ContextBlock(snap, budget=budget, query=query or "")
        if not query:
            return block
        shown = {e.id for e in snap.entries}
        left = budget - snap.tokens
        hits = [h for h in self.recall(query, k=k + len(shown)) if h.entry.id not in shown][:k]
        block.recalled = fit(hits, max(0, left - int(budget * SNIPPET_SHARE)), lambda h: count_tokens(h.text) + 2)
        left -= sum(count_tokens(h.text) + 2 for h in block.recalled)
        snippets = self.active_recall(query, one_to_one=one_to_one)
        block.snippets = fit(snippets, max(0, left), lambda s: count_tokens(s.text) + 8)
        return block

    @property
    def active_recall(self) -> ActiveRecall:
        """Transcript snippets before a reply: local search with a timeout and a circuit breaker."""
        if self._active is None:
            self._active = ActiveRecall(lambda q, n: self.search_raw(q, n), self.clock)
        return self._active

    def search_raw(self, query: str, k: int = 5) -> list[Snippet]:
        """Full-text search over stored transcripts (the raw layer)."""
        sync_raw(self.index, self.scope)
        return search_raw(self.index, self.scope, query, k)

    def import_transcripts(self, fmt: str, path: str | os.PathLike[str]) -> ImportReport:
        """Store conversation transcripts verbatim under memory/sessions/ (idempotent), except
        for lines that hold a credential: those are replaced by a note and reported as refused."""
        report = ImportReport()
        for item in read_transcripts(fmt, Path(path)):
            if isinstance(item, Skipped):
                report.skipped.append((item.where, item.why))
                continue
            when = item.started_at or self.clock.now()
            target = self.vault.memory_dir(self.scope) / "sessions" / f"{when:%Y-%m-%d}" / f"{item.session_id}.md"
            big = next((n for n, m in enumerate(item.messages, 1) if len(m.content) > MAX_IMPORT_TEXT_CHARS), 0)
            if big:  # checked before the secret scan, whose cost grows with the text
                report.skipped.append((f"{item.session_id} message {big}", f"longer than {MAX_IMPORT_TEXT_CHARS:,} characters; split it first"))
                continue
            clean = []
            for n, m in enumerate(item.messages, 1):
                content, kinds = redact(m.content)
                report.refused += [(f"{item.session_id} message {n}", f"a line holding {k} was left out") for k in kinds]
                clean.append(replace(m, content=content))
            text = render_transcript(replace(item, messages=clean, source_id=item.source_id or item.digest()))
            state = self.writer.write_text(target, lambda old, text=text: text if old is None else None)
            if state is None:
                report.unchanged.append(self.vault.relpath(target))
            else:
                report.imported.append(self.vault.relpath(target))
        if not report.imported and not report.unchanged:
            # Nothing could be read: a failure, not an empty success.
            reasons = "; ".join(f"{w}: {y}" for w, y in report.skipped[:3]) or "no conversation in it"
            raise RefusedInput(f"nothing in {path} could be imported as {fmt} ({reasons})", IMPORT_HINTS.get(fmt, "check the file and --from"))
        sync_raw(self.index, self.scope)
        return report

    def export(self, to: str | os.PathLike[str], scope: Scope | None = None):  # type: ignore[no-untyped-def]
        """Copy the vault's truth (every Markdown file, the dream ledgers, memdream.toml; not
        the derived index) to a new folder or a FILE.tar.gz; with `scope`, only that scope."""
        from memdream.store.backup import export

        return export(self.vault, self.writer, Path(to).expanduser(), scope)

    def import_vault(self, path: str | os.PathLike[str]) -> ImportReport:
        """Restore a copy that `export` wrote: each file the vault lacks is written; a file
        already there with other content is kept and reported. The index follows."""
        from memdream.config import CONFIG_TEMPLATE
        from memdream.store.backup import restore

        src = Path(path).expanduser()
        if not src.exists():
            raise RefusedInput(f"{src} does not exist", "check the path")
        imported, unchanged, skipped = restore(self.vault, self.writer, src, pristine_config=CONFIG_TEMPLATE)
        report = ImportReport(imported=imported, unchanged=unchanged, skipped=skipped)
        if not imported and not unchanged:
            raise RefusedInput(
                f"nothing in {src} could be restored ({'; '.join(f'{w}: {y}' for w, y in skipped[:3])})",
                "restore into a new, empty vault: memdream import --from vault COPY --vault NEW_FOLDER",
            )
        self.sync()
        return report

    def check_import_source(self, path: str | os.PathLike[str], from_scope: str | None = None) -> None:
        """Refuse to import from another scope of this vault (its memories would cross into
        this scope without a word) unless `from_scope` names that scope ("agent/user")."""
        real = os.path.realpath(path)
        scopes = os.path.realpath(self.vault.root / "scopes")
        if real == scopes or scopes.startswith(real + os.sep):
            raise RefusedInput(
                f"{path} holds this vault's scopes; importing it would copy every scope's memories into {self.scope.key}",
                "import one scope's folder, with --from-scope AGENT/USER naming it",
            )
        if not real.startswith(scopes + os.sep):
            return
        parts = real[len(scopes) + 1 :].split(os.sep)
        owner = "/".join(parts[:2])
        if from_scope != owner:
            said = f" (--from-scope {from_scope} was given)" if from_scope else ""
            raise RefusedInput(
                f"{path} is inside scope {owner} of this vault{said}; importing it copies that scope's memories into {self.scope.key}",
                f"if that is what you mean, say so: --from-scope {owner}",
            )

    def import_folder(self, fmt: str, path: str | os.PathLike[str], from_scope: str | None = None) -> ImportReport:
        """Import another memory system's folder (claude-code, openclaw, cowagent): list items
        become memories through the write path; daily logs join the daily memory; the rest is
        kept verbatim in the raw layer. Importing twice adds nothing. A folder of another scope
        of this vault is refused unless `from_scope` names it."""
        import hashlib

        self.check_import_source(path, from_scope)

        from memdream.importers.folders import FOLDER_FORMATS, read_folder

        if fmt not in FOLDER_FORMATS:
            raise RefusedInput(f"unknown folder format {fmt!r}", "use one of: " + ", ".join(FOLDER_FORMATS))
        src = Path(path)
        if not src.exists():
            raise RefusedInput(f"{src} does not exist", "check the path")
        folder = read_folder(fmt, src)
        report = ImportReport(skipped=list(folder.skipped))
        for item in folder.memories:
            self.sync()
            if self.index.db.execute(
                "SELECT 1 FROM entries WHERE scope = ? AND text = ? AND vt IS NULL LIMIT 1", (self.scope.key, item.text)
            ).fetchone():
                report.known += 1
                continue
            try:
                out = self.write(item.text, source="import")
            except MemdreamError as exc:
                report.refused.append((item.where, exc.message))
                continue
            if out.action == "duplicate":
                report.known += 1
            else:
                report.added.append(out.entry.id)
        for day, text, where in folder.daily:
            if len(text) > MAX_IMPORT_TEXT_CHARS:  # before the secret scan
                report.skipped.append((where, f"longer than {MAX_IMPORT_TEXT_CHARS:,} characters; split it first"))
                continue
            if find_secret(text):
                report.refused.append((where, "the file holds something that looks like a credential; import it after removing it"))
                continue
            mark = f"<!-- memdream:import {fmt} {hashlib.sha256(text.encode()).hexdigest()[:16]} -->"
            target = self.knowledge.log_path(date.fromisoformat(day))

            def add(old: str | None, text: str = text, mark: str = mark) -> str | None:
                if old is not None and mark in old:
                    return None
                block = text.rstrip("\n") + "\n" + mark + "\n"
                if old is None:
                    return block
                return old.rstrip("\n") + f"\n\n### 00:00 — Imported from {fmt}\n\n" + block

            (report.imported if self.writer.write_text(target, add) else report.unchanged).append(self.vault.relpath(target))
        folder_dir = self.vault.memory_dir(self.scope) / "sessions" / f"import-{fmt}"
        for name, text, where in folder.documents:
            if len(text) > MAX_IMPORT_TEXT_CHARS:  # before the secret scan
                report.skipped.append((where, f"longer than {MAX_IMPORT_TEXT_CHARS:,} characters; split it first"))
                continue
            if find_secret(text):
                report.refused.append((where, "not kept as a document: it holds something that looks like a credential (its lines were imported one by one)"))
                continue
            safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:100] or "document"
            target = folder_dir / (safe if safe.endswith(".md") else safe + ".md")
            state = self.writer.write_text(target, lambda old, text=text: text if old != text else None)
            (report.imported if state else report.unchanged).append(self.vault.relpath(target))
        sync_raw(self.index, self.scope)
        return report

    # -- the knowledge vault (DESIGN section 8)
    @property
    def knowledge(self) -> Knowledge:
        """NOW.md, the daily log, knowledge files, conflicts and INDEX.md of this scope."""
        if self._knowledge is None:
            self._knowledge = Knowledge(self.vault, self.scope, self.writer, self.clock, self.llm)
        return self._knowledge

    def _no_secret(self, text: str, what: str = "the text") -> None:
        kind = find_secret(text)
        if kind:
            raise SecretRefused(
                f"refused: {what} looks like {kind}; credentials never enter memory",
                "keep secrets in a password manager or your environment",
            )

    def now(self, text: str | None = None) -> str:
        """NOW.md: the current text, or replace it with `text` (the only file written in place)."""
        if text is not None:
            check_size(text, NOW_MAX_CHARS, "the NOW.md text", "keep NOW.md to the current state")  # before the scan
            self._no_secret(text)
            self.knowledge.set_now(text)
        return self.knowledge.now()

    def log(self, title: str, body: str = "") -> tuple[Path, str]:
        """Append a "### HH:MM — Title" block to today's daily log; returns (file, heading)."""
        check_size(f"{title}{body}", MAX_LOG_CHARS, "the log block", "put long text in a knowledge file")  # before the scan
        self._no_secret(f"{title}\n{body}")
        return self.knowledge.log(title, body)

    def note(self, category: str, topic: str, text: str, priority: str | None = None, tags: tuple[str, ...] = ()) -> NoteOutcome:
        """Read-then-write a knowledge file: ADD, UPDATE, NOOP or CONFLICT; INDEX.md follows."""
        # note_add checks the size, then the text, the topic and the tags for credentials.
        return self.knowledge.note_add(category, topic, text, priority, tags)

    def conflicts(self) -> list[Conflict]:
        """Every open conflict: contradictory knowledge paragraphs, contradictory memories, and
        memories waiting for the user's confirmation (id p-<entry id>; a: nothing, b: the text)."""
        return self.knowledge.conflicts() + self._entry_conflicts() + self._pending_conflicts()

    def _pending_conflicts(self) -> list[Conflict]:
        self.sync()
        rows = self.index._rows(self.index._ROW + " WHERE e.scope = ? AND e.vt IS NULL AND e.line LIKE '%;pend=%'", (self.scope.key,))
        out = []
        for row in rows:
            e = row.entry()
            if not e.pending:
                continue
            day = (e.valid_from or e.created_at).date().isoformat() if (e.valid_from or e.created_at) else ""
            why = "it tells the agent to send data or ignore its instructions" if e.pending == PENDING_INJECTION else f"a {e.effective_type} from src={e.source or '?'}, not from you"
            out.append(Conflict(f"p-{e.id}", row.path, day, f"(not resident: {why}; --keep b makes it resident, --keep a drops it)", e.text, "pending", f"{row.path}#{e.id}"))
        return out

    def _resolve_pending(self, conflict_id: str, keep: str, text: str | None) -> Conflict:
        if keep not in ("a", "b", "edit") or (keep == "edit" and not (text or "").strip()):
            raise RefusedInput("for a pending memory --keep must be b (confirm), a (drop) or edit with --text", f"memdream resolve {conflict_id} --keep b")
        match = next((c for c in self._pending_conflicts() if c.id == conflict_id), None)
        if match is None:
            raise NotFound(f"no open conflict {conflict_id!r}", "list them with 'memdream conflicts'")
        eid = conflict_id[2:]
        if keep == "a":
            self.forget(eid)  # to the archive, with end=forgotten: history kept
            return match
        if keep == "edit":
            self.forget(eid)
            self.write(text or "", source="user")
            return match
        with self.writer.locked():
            row = self._find(eid, current_only=True)
            old = parse_line(row.line, row.layer)
            now = self.clock.now()
            # Confirmed by the user: a new line in the layer its type belongs to, superseding the pending one.
            new = old.evolve(id=self._new_id(set()), pending="", supersedes=old.id, valid_from=now, created_at=now, layer="", hits=0)
            path, header = self._file_for_new(layer_for_type(old.type), now)
            self._update(path, lambda doc: doc.append_entry(new), header=header)
            self._update(self._path(row), self._set(eid, lambda e: e.evolve(pending="", valid_to=now, end=END_SUPERSEDED)))
        return match

    def _entry_conflicts(self) -> list[Conflict]:
        self.sync()
        out = []
        rows = self.index._rows(self.index._ROW + " WHERE e.scope = ? AND e.vt IS NULL AND e.line LIKE '%;cf=%'", (self.scope.key,))
        for row in rows:
            b = row.entry()
            others = [r for r in self.index.by_id(self.scope, b.conflicts_with) if r.vt is None]
            if not b.conflicts_with or not others:
                continue
            a = others[0].entry()
            day = (b.valid_from or b.created_at).date().isoformat() if (b.valid_from or b.created_at) else ""
            out.append(Conflict(f"e-{b.id}", row.path, day, a.text, b.text, "entry", f"{others[0].path}#{a.id}"))
        return out

    def resolve(self, conflict_id: str, keep: str, text: str | None = None) -> Conflict:
        """Close a conflict: the side not kept is superseded (memories) or marked superseded (knowledge)."""
        if text:
            check_size(text, MAX_NOTE_CHARS, "the resolved text", "say the settled fact in a few lines")  # before the scan
            self._no_secret(text)
        if conflict_id.startswith("p-"):
            return self._resolve_pending(conflict_id, keep, text)
        if not conflict_id.startswith("e-"):
            return self.knowledge.resolve(conflict_id, keep, text)
        if keep not in ("a", "b", "both", "edit") or (keep == "edit" and not (text or "").strip()):
            raise RefusedInput("--keep must be a, b, both, or edit with --text", 'memdream resolve ID --keep edit --text "..."')
        match = next((c for c in self._entry_conflicts() if c.id == conflict_id), None)
        if match is None:
            raise NotFound(f"no open conflict {conflict_id!r}", "list them with 'memdream conflicts'")
        b_id = conflict_id[2:]
        a_id = match.a_source.rsplit("#", 1)[1]
        with self.writer.locked():
            now = self.clock.now()
            b_row = self._find(b_id, current_only=True)
            a_row = self._find(a_id, current_only=True)
            clear = self._set(b_id, lambda e: e.evolve(conflicts_with=""))
            if keep == "a":
                self._update(self._path(b_row), self._set(b_id, lambda e: e.evolve(conflicts_with="", valid_to=now, end=END_SUPERSEDED)))
            elif keep == "b":
                self._update(self._path(b_row), self._set(b_id, lambda e: e.evolve(conflicts_with="", supersedes=e.supersedes or a_id)))
                self._update(self._path(a_row), self._set(a_id, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
            elif keep == "both":
                self._update(self._path(b_row), clear)
            else:
                self._update(self._path(b_row), clear)
                out = self.write(text or "", source="user")
                for rid, row in ((a_id, a_row), (b_id, b_row)):
                    if rid != out.entry.id:
                        self._update(self._path(row), self._set(rid, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)))
        return match

    def gc(self, dry_run: bool = False) -> Plan:
        """Archive cold knowledge-vault files by the OpenClaw rules; `dry_run` changes nothing."""
        return self.knowledge.gc(dry_run)

    def reflect(self, day: str | None = None) -> Path:
        """Write memory/reflections/DAY.md (a mechanical summary without a model)."""
        from datetime import date as _date

        return self.knowledge.reflect(_date.fromisoformat(day) if day else None)

    def aggregate(self, from_agent: str) -> int:
        """Copy a sub-agent's new daily-log blocks (same user) into this scope's logs; idempotent."""
        source = Knowledge(self.vault, Scope(user=self.scope.user, agent=from_agent), self.writer, self.clock, None)
        if source.scope == self.scope:
            raise RefusedInput("an agent cannot aggregate its own logs", "name another agent with --from")
        return self.knowledge.aggregate(source)

    def lookup(self, query: str, archive: bool = False) -> LookupResult:
        """INDEX.md, then the named file, then search; the result says which level answered."""

        def search(q: str, include_archive: bool) -> list[dict]:
            hits = [{"kind": "memory", "path": h.entry.id, "text": h.text, "score": round(h.score, 3)} for h in self.recall(q, k=5)]
            sync_raw(self.index, self.scope)
            docs = search_raw(self.index, self.scope, q, 5, kinds=("note", "log", "reflection"), archived=include_archive)
            hits += [{"kind": "document", "path": s.path, "text": s.text, "score": round(s.score, 3)} for s in docs]
            return hits

        return lookup(self.knowledge, query, search, archive)

    def adopt(self) -> int:
        """Give every hand-written line of the scope an id (its text untouched); returns how many."""
        n = 0
        with self.writer.locked():
            self.sync()
            paths = [r[0] for r in self.index.db.execute("SELECT DISTINCT path FROM entries WHERE scope = ? AND id = ''", (self.scope.key,))]
            for rel in paths:
                n += len(self._update(self.vault.root / rel, lambda doc: None).adopted_ids)
        return n

    # -- dreaming (DESIGN section 9)
    def dream(self, phases: list[str] | tuple[str, ...] | None = None, days: int = 3, dry_run: bool = False, force: bool = True, progress=None) -> "DreamReport":  # type: ignore[no-untyped-def]
        """Run the dream phases (light, deep, distill, replay, profile; all by default). The
        model phases are skipped with a status line when no model is configured."""
        from memdream.dream.run import dream

        return dream(self, phases, days, dry_run, force, progress)

    def undo(self) -> dict:
        """Revert the last dream that changed something (git revert in a git vault)."""
        from memdream.dream.run import undo

        return undo(self)

    def flush(self, messages: list[dict] | None = None, day: str | None = None) -> "FlushReport":
        """Summarize conversations into the daily memory memory/YYYY-MM-DD.md.

        With `messages` (role/content dicts: the part of a chat that was trimmed), they are
        first stored verbatim in the raw layer, then summarized. Without, the day's stored
        conversations not yet flushed are summarized."""
        from datetime import date as _date

        from memdream.dream.flush import flush
        from memdream.store.transcripts import Message, Transcript

        when = _date.fromisoformat(day) if day else self.clock.now().date()
        if messages is None:
            return flush(self, when)
        now = self.clock.now()
        msgs = []
        for m in messages:
            if not isinstance(m, dict) or not isinstance(m.get("content"), str) or not m["content"].strip():
                continue
            msgs.append(Message(str(m.get("role") or "user"), redact(m["content"])[0]))
        if not msgs:
            return flush(self, when, [])
        t = Transcript("chat", msgs, title="trimmed context", started_at=now, source_id=f"{now:%Y%m%d-%H%M%S}")
        target = self.vault.memory_dir(self.scope) / "sessions" / f"{now:%Y-%m-%d}" / f"{t.session_id}-{t.digest()[:6]}.md"
        text = render_transcript(t)
        self.writer.write_text(target, lambda old: text if old is None else None)
        return flush(self, now.date(), [self.vault.relpath(target)])

    def stats(self) -> dict[str, int]:
        """Counts of the scope's currently valid memories, by layer and type."""
        self.sync()
        counts = self.index.count(self.scope)
        out: dict[str, int] = {}
        for (layer, type_), n in counts.items():
            out[f"{layer}.{type_}"] = n
        return out

    # -- for the CLI
    def write_config_template(self) -> bool:
        """Write the commented memdream.toml into the vault if it has none; True when written."""
        from memdream.config import CONFIG_TEMPLATE

        if self.vault.config_path.exists():
            return False
        self.vault.config_path.write_text(CONFIG_TEMPLATE, encoding="utf-8")
        return True

    def scopes(self) -> list[Scope]:
        """Every scope of the vault (not only this one)."""
        return self.vault.scopes()

    def relpath(self, path: Path) -> str:
        """A file of the vault as shown to the user: its path relative to the vault root."""
        return self.vault.relpath(path)

    def now_file(self) -> Path:
        """Where this scope's NOW.md is (it may not exist yet)."""
        return self.knowledge.now_path

    def notes(self) -> list[NoteInfo]:
        """The scope's knowledge files with priority, status and last verification (what INDEX.md shows)."""
        return self.knowledge.notes()

    @property
    def knowledge_status(self) -> str:
        """What the model did in the last knowledge operation (a reflection, a note), or why it was skipped."""
        return self.knowledge.last_status

    def rebuild_index(self) -> int:
        """Delete the index and build it again from every scope's files, transcripts too; returns the entries indexed."""
        n = self.index.rebuild(self.vault.scopes())
        for scope in self.vault.scopes():
            sync_raw(self.index, scope)
        return n

    def sync_all(self) -> int:
        """Catch the index up with hand edits in every scope of the vault; returns the files re-read."""
        return sum(self.index.sync_scope(s) for s in self.vault.scopes())

    def doctor(self, fix: bool = False) -> tuple[list[str], list[str], list[str], list[Problem]]:
        """Check that every file parses and the index agrees with the files. With `fix`, first
        delete the temp files interrupted writes left and put back acknowledged memories no
        file holds any more. Returns (temp files removed, restored, not restored, problems)."""
        from memdream.doctor import check_vault, remove_temp_files, restore_acknowledged

        removed = remove_temp_files(self.vault, self.writer) if fix else []
        restored, unrestored = restore_acknowledged(self.vault, self.writer) if fix else ([], [])
        return removed, restored, unrestored, check_vault(self.vault, self.index)

    def last_dream(self) -> dict | None:
        """The ledger record of the dream `undo` would revert (run id, changed files), or None."""
        from memdream.dream.ledger import last_dream

        return last_dream(self)


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
