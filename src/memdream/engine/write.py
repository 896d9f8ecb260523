"""The write path (DESIGN section 5): validate, refuse secrets, classify, dedup or supersede,
route to a layer's file.

1. The text is one bounded line without a credential; the subject likewise.
2. Type and subject are classified when not given; a text that steers the agent, or an
   instruction not from the user, waits for the user's confirmation (pend=).
3. With a model configured, its opinion on the one ambiguous current entry is asked first,
   outside the writer lock.
4. Under the lock: a current entry saying the same thing (same words, the same slot, or the
   same fact in other words by the embedder) is refreshed instead of written again;
5. otherwise a new line is appended, superseding the subject's current lines (their
   validity ends) and, when the text says a value ended ("I switched from Vim", 离开美团了:
   model/changes.py), every current line naming that value; or recording the memory it
   contradicts (both kept, a conflict opened).

The new line is written before the end marks: a crash in between leaves both valid, never
neither. A dream passes its transaction (`tx`), so every file it writes can be rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memdream.core import Core, set_entry
from memdream.engine.checks import check_subject, check_text, no_secret
from memdream.errors import RefusedInput
from memdream.index.db import NEG_TOKEN, Row
from memdream.index.slots import Settled, ambiguous_candidate, ask_same_fact, find_slot, nearest_restatement
from memdream.model.changes import about_someone_else, generic_terms, old_values
from memdream.model.classify import classify_type, extract_subject, salience
from memdream.model.contradiction import negation_count, without_negation, without_signals
from memdream.model.crud import decide, negated
from memdream.model.dates import said_when
from memdream.model.entry import END_SUPERSEDED, INSTRUCTION, RECALL, RULE, TYPES, Entry, layer_for_type
from memdream.model.hostile import pending_reason
from memdream.model.similarity import DEDUP_THRESHOLD, anchor_terms, contradiction, dedup_anchors, each_says_its_own, in_one_sentence, is_duplicate, looks_alike, one_frame, only_asks, other_act, recombines, restatement_cosine, similarity, word_count, words_inside
from memdream.model.slots import default_subject
from memdream.store import journal
from memdream.store.format import parse_line, render_line
from memdream.store.transaction import Transaction

SWAPS = ("roles swapped", "parts swapped", "numbers in another order", "times in another order")  # one frame, parts traded: a look-alike
NAMED_MAX_ENTRIES = 8  # current memories naming an ended value that a change may end (more: a common word)
DEDUP_CANDIDATES = 10  # full-text candidates compared by bigram similarity on each write
# A duplicate holds every content word of the new text (see model/similarity.py). So if one
# of the text's anchor terms is in no entry at all, there is no duplicate, and otherwise the
# candidates are the entries holding all of its 3 rarest anchors: a cheap query at any size.
DEDUP_QUERY_TERMS = 3
CONF_USER, CONF_OTHER, CONF_STEP = 0.9, 0.8, 0.05  # initial confidence; raised by each repeat
CONTRADICTION_CANDIDATES, CONTRADICTION_QUERY_TERMS = 5, 2  # a small AND query per write
# A look-alike that says another thing: the signals under which two texts of one frame cannot
# both be true as said ("I lent Sam $200" / "... $2000", "open Monday to Friday" / "Friday to
# Monday", "Alice owes Bob" / "Bob owes Alice"). Not "names differ" (Tom and Anna may both
# love hiking), nor a value swapped without a signal (a lamp and a sofa may both be bought at
# IKEA): those are two facts, both kept, nothing asked.
CONFLICT_SIGNALS = frozenset({
    "negation", "numbers differ", "numbers in another order", "times differ", "times in another order",
    "roles swapped", "owners differ", "opposite words", "parts swapped",
})  # fmt: skip
LOOK_ALIKE_CANDIDATES, LOOK_ALIKE_QUERY_TERMS = 5, 3  # the newest memories holding two of the 3 rarest words
# A recombination (parts of the earlier text's clauses joined into a claim it does not make)
# uses the earlier text's words: 0.88-1.0 of them over the corpus's 20 recombined pairs, where
# the small talk it was confused with ("谢谢你的建议，我会尝试一些你说的方法" / "...我会尝试一下这些
# 方法，希望可以让自己感到更加轻松") brings words of its own.
RECOMBINED_INSIDE = 0.85
SECRET_HINT = "keep secrets in a password manager or your environment, and remember where they are, not what they are"

Action = Literal["added", "duplicate", "superseded"]


@dataclass(frozen=True)
class WriteOutcome:
    """What `remember` did: a new line, a refreshed duplicate, or a new line superseding others."""

    action: Action
    entry: Entry
    superseded: tuple[Entry, ...] = ()
    similarity: float = 0.0
    contradicts: Entry | None = None  # a valid memory saying the opposite: both kept, a conflict opened
    # What degraded while writing (the embedder or the model unreachable: the lexical rules
    # decided alone; the index behind the files): the line is written all the same.
    warning: str = ""

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "entry": self.entry.to_json(),
            "superseded": [e.to_json() for e in self.superseded],
            "similarity": round(self.similarity, 3),
            "contradicts": self.contradicts.to_json() if self.contradicts else None,
            "warning": self.warning or None,
        }


def write(
    core: Core,
    text: str,
    type: str | None = None,
    subject: str | None = None,
    pin: bool = False,
    source: str = "user",
    tx: Transaction | None = None,
) -> WriteOutcome:
    """Store `text` in the scope (steps 1-5 above); returns what was done, with a warning when
    part of it degraded (`WriteOutcome.warning`, also `core.last_warning`)."""
    text = check_text(text, core.config.max_text_chars)
    core.last_warning = ""
    if subject is not None:
        check_subject(subject)
    # The subject is written into the line too (subj=): it gets the same secret check.
    no_secret(text, "the text", SECRET_HINT)
    no_secret(subject or "", "the subject", SECRET_HINT)
    if type is not None and type not in TYPES:
        raise RefusedInput(f"unknown type {type!r}", "use one of: " + ", ".join(TYPES))
    type_ = type or classify_type(text)
    subj = (extract_subject(text) if subject is None else subject).strip()
    check_subject(subj)
    # An instruction or rule not from the user, or a text that steers the agent, waits for the
    # user's confirmation (pend=, docs/format.md): written to the recall layer, never resident,
    # never recalled, superseding nothing; `memdream conflicts` lists it, `resolve` decides.
    pending = pending_reason(text, type_, source)
    settled = _settle(core, text) if subject is None and source == "user" else None  # a model call: before the lock
    with core.writer.locked():
        core.sync()
        now = core.clock.now()
        dup = _duplicate_of(core, text, subj)
        if dup is None and subject is None:
            found = find_slot(core.index, core.scope, text)
            if found is not None:  # the subject of the entry stating the same slot
                subj = found.subject
                if found.restates is not None:
                    dup = (found.restates, similarity(text, found.restates.entry().text))
            elif not subj:
                subj = default_subject(text)  # the slot's own name: a later value finds it
        also_ends: list[Row] = []
        if dup is None:
            near = _restatement_of(core, text, subj)
            if near is not None:  # the same fact in other words (by the embedder)
                row, cos = near
                if word_count(text) > word_count(row.entry().text):
                    also_ends, subj = [row], subj or row.entry().subject  # the one saying more stays
                else:
                    dup = (row, cos)
        if dup is None and settled is not None:  # the model's opinion, if the entry did not change since
            rows = [r for r in core.index.by_id(core.scope, settled.entry_id) if r.vt is None and r.entry().text == settled.text]
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

            upd = core.update(core.path(row), set_entry(old.id, refresh), tx=tx)
            refreshed = (upd.result or old).evolve(layer=row.layer)
            return WriteOutcome("duplicate", refreshed, (), sim, warning=core.last_warning)
        olds = ((list(core.index.by_subject(core.scope, subj)) if subj else []) or also_ends) if not pending else []
        if subject is None and not pending:
            named = _named_old(core, text, {r.rowid for r in olds})
            if named:  # the change names the value that ended: every current memory naming it ends
                subj = subj or next((r.entry().subject for r in reversed(named) if r.entry().subject), "")
                olds = sorted(olds + named, key=lambda r: (r.vf or 0.0, r.rowid))
        against = None if olds else (_contradiction_of(core, text, now) or _look_alike_of(core, text, now))
        new = Entry(
            text=text,
            id=core.new_id(),
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
        path, header = core.file_for_new(layer, now)
        # New line first, then the end marks: a crash in between leaves both valid, never neither.
        core.update(path, lambda doc: doc.append_entry(new), header=header, tx=tx)
        if tx is None:  # a dream's own lines are in its ledger, which undo follows; the record is of acknowledged writes
            journal.record(core.vault, core.scope, path, new.id, render_line(new), now)  # what doctor checks the files against
        ended: list[Entry] = []
        for row in olds:
            upd = core.update(core.path(row), set_entry(row.entry().id, lambda e: e.evolve(valid_to=now, end=END_SUPERSEDED)), tx=tx)
            if upd.result is not None:
                ended.append(upd.result.evolve(layer=row.layer))
        return WriteOutcome("superseded" if ended else "added", new.evolve(layer=layer), tuple(ended), contradicts=against, warning=core.last_warning)


def _named_old(core: Core, text: str, have: set[int]) -> list[Row]:
    """The current memories naming a value `text` says ended ("I switched from Vim to Helix":
    the lines naming Vim), oldest first; see model/changes.py. A value named by more than
    NAMED_MAX_ENTRIES current memories is a common word, not a value: nothing is ended by it.
    Rules and instructions are never ended this way, nor a memory about someone else, nor a
    look-alike with a contradiction signal ("moved from Berlin to Paris" / "... from Paris to
    Berlin"), which the contradiction rule keeps beside it."""
    out: dict[int, Row] = {}
    for value in old_values(text):
        generic = generic_terms(cjk=not value.isascii())
        terms = [t for t in anchor_terms(value) if t not in generic]
        if not terms:
            continue
        found = [r for r, _ in core.index.match(core.scope, terms, NAMED_MAX_ENTRIES + 1, op="AND")]
        if len(found) > NAMED_MAX_ENTRIES:
            continue
        for row in found:
            e = row.entry()
            if row.rowid in have or not e.is_current or e.pinned or e.pending or e.type in (RULE, INSTRUCTION) or about_someone_else(e.text):
                continue
            signal = contradiction(text, e.text) or contradiction(e.text, text)
            if (signal in SWAPS and one_frame(text, e.text)) or (signal and similarity(text, e.text) >= DEDUP_THRESHOLD):
                continue  # a look-alike with a contradiction signal: step 3's rule (a conflict, both kept) decides
            out[row.rowid] = row
    return sorted(out.values(), key=lambda r: (r.vf or 0.0, r.rowid))


def _restatement_of(core: Core, text: str, subject: str) -> tuple[Row, float] | None:
    """With an embedder: the current entry saying `text`'s fact in other words, if any
    (model/similarity.may_fold_by_meaning guards it: never a contradiction). Without one,
    or when it fails, None (the lexical rules stand)."""
    if not core.embedder_configured:
        return None
    vectors = core.vectors
    if vectors is None:
        return None
    try:
        near = nearest_restatement(vectors, core.scope, text, restatement_cosine(vectors.embedder, core.config.embedder_options))
    except Exception as exc:  # noqa: BLE001 - an embedder failure only leaves the lexical rules
        core.last_warning = f"embedder unavailable, restatements compared by words only: {exc}"
        return None
    if near is not None and subject and near[0].entry().subject not in ("", subject):
        return None  # another subject: another slot
    return near


def _settle(core: Core, text: str) -> Settled | None:
    """With a model configured: its opinion on the one current entry the mechanical rules
    leave ambiguous (same fact? a change?), asked outside the lock; None otherwise."""
    llm = core.llm
    if llm is None:
        return None
    core.sync()
    row = ambiguous_candidate(core.index, core.scope, text)
    if row is None:
        return None
    settled, why = ask_same_fact(llm, row, text)
    if why:
        core.last_warning = why
    return settled


def _contradiction_of(core: Core, text: str, now) -> Entry | None:  # type: ignore[no-untyped-def]
    """A valid memory on the same topic with the opposite polarity (我吃辣 / 我不吃辣), if any.

    Such a memory holds the new text's words once negations are set aside, so the rarest
    of them find it; for a positive text only negative entries qualify, and those carry an
    extra index token, so the AND query walks a short list at any scope size.
    """
    anchors = list(anchor_terms(without_negation(text)))
    df = core.index.document_frequency(anchors + [NEG_TOKEN])
    present = sorted((t for t in anchors if df.get(t)), key=lambda t: df[t])
    if not present:
        return None
    if negated(text):
        terms = present[:CONTRADICTION_QUERY_TERMS]  # one anchor is enough: 我不吃辣 has only 吃辣
    else:
        if not df.get(NEG_TOKEN):
            return None  # no negative memory at all: nothing can contradict a positive one
        terms = [NEG_TOKEN, *present[: CONTRADICTION_QUERY_TERMS - 1]]
    for row, _ in core.index.match(core.scope, terms, CONTRADICTION_CANDIDATES, op="AND"):
        e = row.entry()
        if e.is_current and decide([e.text], text).kind == "CONFLICT" and in_one_sentence(text, e.text, _polarity_differs) and _may_conflict(text, e, now):
            return e.evolve(layer=row.layer)
    return None


def _signalled(a: str, b: str) -> bool:
    return (contradiction(a, b) or contradiction(b, a)) in CONFLICT_SIGNALS


def _polarity_differs(a: str, b: str) -> bool:
    return negated(a) != negated(b)


def _may_conflict(text: str, e: Entry, now) -> bool:  # type: ignore[no-untyped-def]
    """Could `text` and the memory `e` be two versions of one fact, were a contradiction signal
    found between them (within one sentence of each, `in_one_sentence`)? Not when they are two
    acts (two speakers' messages, a question and a statement: `other_act`), nor questions (they
    state nothing), nor when they do not look alike (`looks_alike`: small talk shares a frame,
    "Thanks, I'll try it" / "Okay, thank you for your advice"), nor when each says a word of
    its own once numbers, times and negations are set aside (`without_signals`,
    `each_says_its_own`: "周末去爬了莫干山，走了 5 公里" / "... 千岛湖，走了 7 公里" are two hikes), nor
    when either is tied to the day it was said ("ran 5 km today", 昨晚加班) and they were
    written on different days: two runs, two evenings."""
    if other_act(text, e.text) or other_act(e.text, text) or only_asks(text) or only_asks(e.text) or not looks_alike(text, e.text):
        return False
    if each_says_its_own(without_signals(text), without_signals(e.text)):
        return False  # each says a word of its own besides the signal: two facts (two hikes, two places)
    said = e.created_at or e.valid_from
    return not ((said_when(text) or said_when(e.text)) and said is not None and said.astimezone(now.tzinfo).date() != now.date())


def _look_alike_of(core: Core, text: str, now) -> Entry | None:  # type: ignore[no-untyped-def]
    """A valid memory that `text` looks like but contradicts, if any: a CONFLICT_SIGNALS
    signal between them (a negation, numbers, dates or amounts that differ, the same parts in
    another order, roles swapped), or a text made of the memory's words joining parts of two
    of its clauses into a claim it does not make ("Bob owes me 300" after "Alice owes me 500.
    I owe Bob 300.", `recombines`), and `_may_conflict`. The dedup never folds such a pair
    (model/similarity.py); without a subject to supersede, it is a conflict for the user to
    settle (both kept, `memdream conflicts`).

    Candidates: the newest memories holding two of the new text's three rarest words the
    index holds, pair by pair (the one word, if it holds only one; numbers and negation cues
    left out: they are what a look-alike changes, and a word the scope lacks, found in another
    scope, would empty the pair's query): a fact changes from its latest statement, and the
    list stays short at any scope size."""
    anchors = [t for t in anchor_terms(text) if not t.isdigit() and not negation_count(t)]
    df = core.index.document_frequency(anchors)
    present = sorted((t for t in anchors if df.get(t)), key=lambda t: (df[t], t))[:LOOK_ALIKE_QUERY_TERMS]
    if not present:
        return None
    pairs = [[a, b] for i, a in enumerate(present) for b in present[i + 1 :]] or [present]
    seen: set[int] = set()
    for terms in pairs:  # two of the words, or the one word the index holds
        for row, _ in core.index.match(core.scope, terms, LOOK_ALIKE_CANDIDATES, op="AND", newest=True):
            if row.rowid not in seen:
                seen.add(row.rowid)
                found = _look_alike(text, row, now)
                if found is not None:
                    return found
    return None


def _look_alike(text: str, row: Row, now) -> Entry | None:  # type: ignore[no-untyped-def]
    e = parse_line(row.line, row.layer)  # as written: compared here, shown (`row.entry()`) only if it is the one
    if not e.is_current or e.pending or not e.id or not _may_conflict(text, e, now):  # what turns most candidates away, first
        return None
    signal = contradiction(text, e.text) or contradiction(e.text, text)
    if signal in CONFLICT_SIGNALS:
        return row.entry().evolve(layer=row.layer) if in_one_sentence(text, e.text, _signalled) else None
    if words_inside(text, e.text) >= RECOMBINED_INSIDE and recombines(text, e.text):
        return row.entry().evolve(layer=row.layer)
    return None


def _duplicate_of(core: Core, text: str, subject: str) -> tuple[Row, float] | None:
    """The most similar currently valid entry that says the same thing, if any."""
    anchors = dedup_anchors(text)
    df = core.index.document_frequency(anchors)
    rows: list[Row] = []
    if anchors and all(df.get(t) for t in anchors):
        rarest = sorted(anchors, key=lambda t: df[t])[:DEDUP_QUERY_TERMS]
        rows = [r for r, _ in core.index.match(core.scope, rarest, DEDUP_CANDIDATES, op="AND")]
    elif not anchors:
        rows = [r for r, _ in core.index.search(core.scope, text, DEDUP_CANDIDATES)]
    if subject:
        rows += core.index.by_subject(core.scope, subject)
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
