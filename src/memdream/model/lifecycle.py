"""The light phase's lifecycle state machine (DESIGN section 9; the first source document's
lifecycle.go): one table of (state, condition) -> action, and the near-duplicate grouping.

Pure: entries, their layer and the clock in; decisions out. It can only move an entry to
another layer or mark it ended; nothing here can produce text, so the light phase cannot
hallucinate. The thresholds are named once, here.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from memdream.model.entry import ARCHIVE, CONTEXT, PREFERENCE, RECALL, RESIDENT, RULE, Entry
from memdream.model import lazyre as re
from memdream.model.script import is_cjk
from memdream.model.scoring import importance, last_touched
from memdream.model.similarity import DEDUP_THRESHOLD, bigrams, contradiction, new_content, normal_bigrams, other_act, recombines
from memdream.model.tokens import nfkc_number_tokens
from memdream.model.wording import normalize

PROMOTE_HITS = 3  # a recall entry recalled this often has earned a place in the resident layer
STALE_DAYS = 180  # a fact untouched (not created, started or recalled) this long is "old" ...
STALE_CONTEXT_DAYS = 30  # ... a piece of passing context sooner
UNIMPORTANT_MAX = 0.4  # "unimportant": no more importance than a bare fact (no salience, no recalls)
DEMOTE_IDLE_DAYS = 60  # a resident preference nobody recalled for this long goes back to recall

# Actions
KEEP, ARCHIVE_IT, PROMOTE, DEMOTE, SUPERSEDE = "keep", "archive", "promote", "demote", "supersede"


@dataclass(frozen=True)
class State:
    """What the table looks at for one entry."""

    entry: Entry
    layer: str
    now: datetime
    duplicate_of: str = ""  # the id of a kept entry that says everything this one says


@dataclass(frozen=True)
class Rule:
    state: str  # the state, in words (the diary and docs/dreaming.md quote it)
    condition: Callable[[State], bool]
    action: str
    reason: Callable[[State], str]


def _days(s: State, since: datetime | None) -> float:
    return (s.now - since).total_seconds() / 86400 if since else 0.0


def _idle_since(e: Entry) -> datetime | None:
    times = [t for t in (last_touched(e), e.last_recalled) if t is not None]
    return max(times) if times else None


def _ended(s: State) -> bool:
    return s.layer != ARCHIVE and s.entry.valid_to is not None and s.entry.valid_to <= s.now


def _stale(s: State) -> bool:
    e = s.entry
    limit = STALE_CONTEXT_DAYS if e.effective_type == CONTEXT else STALE_DAYS
    since = _idle_since(e)
    return since is not None and _days(s, since) > limit and importance(e)[0] <= UNIMPORTANT_MAX


def _idle_preference(s: State) -> bool:
    e = s.entry
    since = e.last_recalled or last_touched(e)
    return since is not None and _days(s, since) > DEMOTE_IDLE_DAYS


def _ended_reason(s: State) -> str:
    e = s.entry
    why = {"superseded": "superseded", "merged": "merged into another memory", "forgotten": "forgotten", "expired": "expired"}
    return f"{why.get(e.end, 'no longer valid')} since {e.valid_to:%Y-%m-%d}" if e.valid_to else "no longer valid"


# The table, in order: the first rule whose state and condition hold decides.
RULES: tuple[Rule, ...] = (
    Rule("pinned, or a rule", lambda s: s.entry.pinned or s.entry.type == RULE, KEEP, lambda s: "pinned and rules are never touched"),
    Rule("archived already", lambda s: s.layer == ARCHIVE, KEEP, lambda s: "already in the archive"),
    Rule("superseded or expired", _ended, ARCHIVE_IT, _ended_reason),
    Rule(
        "a near-duplicate of a kept memory",
        lambda s: bool(s.duplicate_of),
        SUPERSEDE,
        lambda s: f"says nothing that `{s.duplicate_of}` does not already say",
    ),
    Rule(
        f"a recall entry recalled at least {PROMOTE_HITS} times",
        lambda s: s.layer == RECALL and s.entry.hits >= PROMOTE_HITS,
        PROMOTE,
        lambda s: f"recalled {s.entry.hits} times",
    ),
    Rule(
        "a recall entry, old and unimportant",
        lambda s: s.layer == RECALL and _stale(s),
        ARCHIVE_IT,
        lambda s: f"untouched for {_days(s, _idle_since(s.entry)):.0f} days and never recalled or marked important",
    ),
    Rule(
        f"a resident preference not recalled for {DEMOTE_IDLE_DAYS} days",
        lambda s: s.layer == RESIDENT and s.entry.type == PREFERENCE and _idle_preference(s),
        DEMOTE,
        lambda s: f"not recalled for {_days(s, s.entry.last_recalled or last_touched(s.entry)):.0f} days",
    ),
)


@dataclass(frozen=True)
class Decision:
    action: str
    state: str
    reason: str


def decide(s: State) -> Decision:
    for rule in RULES:
        if rule.condition(s):
            return Decision(rule.action, rule.state, rule.reason(s))
    return Decision(KEEP, "current", "")


# -- near-duplicates
_ANCHOR = re.compile(r"^(?:[^\W_]+|[\u3400-\u9fff\uf900-\ufaff]{2})$")


@dataclass(frozen=True)
class Candidate:
    """What duplicate grouping needs of an entry (straight from the index, no parsing)."""

    id: str
    text: str
    layer: str
    hits: int
    created: float  # epoch seconds of creation (or start of validity)
    tokens: Sequence[str]  # the entry's index tokens
    protected: bool = False  # pinned or a rule: never superseded, never compared


def _rank(c: Candidate) -> tuple:
    """Which of several duplicates to keep: resident first, then the most recalled, then the
    oldest (the original wording)."""
    return (c.layer != RESIDENT, -c.hits, c.created, c.id)


_CLOSING = " \t!.。！~～"


def said_as(text: str) -> str:
    """A text's words as said: case, width and runs of spaces folded, a closing ! . 。 ~ left out.
    Two texts alike in this say the same (no word, number or question mark differs), so the
    near-duplicate rule needs no closer look."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(_CLOSING)


def duplicates(candidates: Iterable[Candidate], df: Callable[[str], int], prefilter: bool = True) -> dict[str, Candidate]:
    """{id of a redundant entry: the kept entry that says everything it says}.

    An entry is redundant when it is a near-duplicate (bigram similarity above 0.65 and no
    content word of its own, no contradiction signal, the same speaker and both asking or both telling: see model/similarity.py) of another. Entries are taken in rank
    order: one that repeats an entry kept before it is redundant; one that says more than an
    entry kept before it makes that one redundant instead. Either way nothing is lost: a
    line that adds a word is never the redundant one. Candidates come from the rarest
    anchor term of each entry (every duplicate holds it), so the cost is the sum of short
    posting lists, not n squared.

    Before two entries' bigram sets are compared, `prefilter` (on by default; off only to
    check it) looks one entry's bigrams up in the other's normalized text, rarest first, and
    skips the pair as soon as too few can be there for the similarity to pass
    (`_Bigrams.may_pass`): an exact filter (tests/test_light_bulk.py compares the groups with
    and without it), so most entries never need a bigram set of their own. The entry looked
    up is the one compared with many: the entry being placed against the kept entries holding
    its rarest term, a kept entry against each later one holding its rarest term.

    Before either, a pair is skipped when the entry that would go holds a number the other does
    not (`_Bigrams.numbers_in`): a number is a content word, so `new_content` would keep it
    (exact, as the prefilter: the same test compares the groups without it).
    """
    ordered = sorted((c for c in candidates if not c.protected and c.id), key=_rank)
    every = {t for c in ordered for t in c.tokens}
    anchor_set = {t for t in every if _ANCHOR.match(t) and not (len(t) == 1 and is_cjk(t))}
    # Rarest first, ties by the token itself: the same input always gives the same groups (sorted
    # by token, then stably by frequency: the order of (df, token) without a key tuple per token).
    by_rank = sorted(anchor_set)
    by_rank.sort(key=df)
    rank = {t: i for i, t in enumerate(by_rank)}
    # A tuple per entry, not a set: a set of ten strings takes about 700 bytes, its tuple 120.
    anchors_of = [tuple(anchor_set.intersection(c.tokens)) for c in ordered]
    rarest_of = [min(a, key=rank.__getitem__) if a else "" for a in anchors_of]
    looked_up = set(rarest_of)  # the only terms whose kept entries are ever looked up
    kept: dict[str, list[int]] = {}  # anchor term -> kept entries holding it
    by_rarest: dict[str, list[int]] = {}  # anchor term -> kept entries whose rarest anchor it is
    kept_at: list[Candidate] = []
    said_of: list[str | None] = []  # each kept entry's text as `said_as` gives it, made when first compared
    alive: list[bool] = []
    texts = _Bigrams(ordered, prefilter)
    out: dict[str, Candidate] = {}

    def said_of_kept(j: int) -> str:
        s = said_of[j]
        if s is None:
            s = said_of[j] = said_as(kept_at[j].text)
        return s

    losers_of: dict[str, list[str]] = {}
    for c, anchors, rarest in zip(ordered, anchors_of, rarest_of):
        if not anchors:
            continue
        me = len(kept_at)
        texts.add(c)  # its bigrams are made when it is first compared, if ever
        winner = None
        said = None
        for j in kept.get(rarest, ()):
            if not alive[j]:
                continue
            said = said if said is not None else said_as(c.text)
            if said == said_of_kept(j):
                winner = kept_at[j]  # the same words, case, spacing or a closing mark aside
                break
            if texts.numbers_in(me, j) and texts.similar(me, j, me) and not new_content(c.text, kept_at[j].text) and not contradiction(c.text, kept_at[j].text) and not other_act(c.text, kept_at[j].text) and not recombines(c.text, kept_at[j].text):
                winner = kept_at[j]
                break
        if winner is not None:
            texts.drop_last()
            out[c.id] = winner
            losers_of.setdefault(winner.id, []).append(c.id)
            continue
        kept_at.append(c)
        said_of.append(said)
        alive.append(True)
        # Kept entries that this one covers (their rarest term is one of ours) become redundant.
        for t in anchors:
            for j in by_rarest.get(t, ()):
                if not alive[j]:
                    continue
                if texts.numbers_in(j, me) and texts.similar(me, j, j) and not new_content(kept_at[j].text, c.text) and not contradiction(kept_at[j].text, c.text) and not other_act(kept_at[j].text, c.text) and not recombines(kept_at[j].text, c.text):
                    alive[j] = False
                    covered = kept_at[j].id
                    out[covered] = c
                    moved = losers_of.pop(covered, [])
                    for loser in moved:
                        out[loser] = c
                    losers_of.setdefault(c.id, []).extend(moved + [covered])
        for t in anchors:
            if t in looked_up:
                kept.setdefault(t, []).append(me)
        by_rarest.setdefault(rarest, []).append(me)
    return out


PROBE_SAMPLE = 1000  # entries whose bigrams estimate which bigrams are rare (the order the prefilter looks them up in)


class _Bigrams:
    """The texts `duplicates` compares, by their place among the kept entries (the last one
    added is the entry being placed): each normalized once, its bigram set and its probe
    (the bigrams rarest first, and how many another text may share and still not pass) made
    on first need."""

    def __init__(self, ordered: Sequence[Candidate], prefilter: bool) -> None:
        self.prefilter = prefilter
        self.norms: list[str | None] = []
        self.texts: list[str] = []
        self.grams: list[set[str] | None] = []
        self.probes: list[tuple[tuple[str, ...], int] | None] = []
        self.digits: list[tuple[str, ...] | None] = []
        self.common: Counter[str] = Counter()
        if prefilter and ordered:
            step = max(1, len(ordered) // PROBE_SAMPLE)
            for c in ordered[::step]:
                self.common.update(bigrams(c.text))

    def add(self, c: Candidate) -> None:
        self.texts.append(c.text)
        self.norms.append(None)
        self.grams.append(None)
        self.probes.append(None)
        self.digits.append(None)

    def drop_last(self) -> None:
        """The entry just added was not kept."""
        for xs in (self.texts, self.norms, self.grams, self.probes, self.digits):
            xs.pop()

    def numbers_in(self, i: int, j: int) -> bool:
        """Is every number of text i (a token of digits only of its NFKC form, as
        `new_content` cuts it) a number of text j too? If not, `new_content(i, j)` holds that
        number, and the pair need not be compared (always True without `prefilter`)."""
        if not self.prefilter:
            return True
        mine = self.digits_of(i)
        if not mine:
            return True
        theirs = self.digits_of(j)
        return all(d in theirs for d in mine)

    def digits_of(self, i: int) -> tuple[str, ...]:
        """Text i's numbers, as a tuple (a line holds one to three: a frozenset of them took
        about 200 bytes per entry of the first dream's plan, the tuple 50-70)."""
        d = self.digits[i]
        if d is None:
            d = self.digits[i] = tuple(nfkc_number_tokens(self.texts[i]))
        return d

    def norm(self, i: int) -> str:
        s = self.norms[i]
        if s is None:
            s = self.norms[i] = normalize(self.texts[i])
        return s

    def grams_of(self, i: int) -> set[str]:
        g = self.grams[i]
        if g is None:
            g = self.grams[i] = normal_bigrams(self.norm(i))
        return g

    def similar(self, i: int, j: int, probed: int) -> bool:
        """Is the bigram similarity of texts i and j above DEDUP_THRESHOLD (as
        model/similarity.is_duplicate)? `probed` (i or j): the text whose bigrams the prefilter
        looks up in the other's, the one compared with many others (its probe is made once)."""
        if self.prefilter and not self.may_pass(probed, j if probed == i else i):
            return False
        mine, other = self.grams_of(i), self.grams_of(j)
        small, big = len(mine), len(other)
        if small > big:
            small, big = big, small
        if not big or small / big <= DEDUP_THRESHOLD:
            return False  # the Jaccard similarity cannot exceed the ratio of the sizes
        shared = len(mine & other)
        return shared / (len(mine) + len(other) - shared) > DEDUP_THRESHOLD

    def may_pass(self, p: int, o: int) -> bool:
        """False only if texts p and o cannot pass `similar`, found without text o's bigram set.

        With B text p's bigrams and A text o's, `similar` asks shared / (|A| + |B| - shared) >
        DEDUP_THRESHOLD, where shared = |A & B| <= |A|, so the union is at least |B|: a pair
        sharing at most m bigrams, m the largest with m / |B| <= DEDUP_THRESHOLD in floating
        point (division is monotone), cannot pass. A bigram of B is in A exactly when it occurs
        in text o's normalized string, so B's bigrams are looked up there, rarest first, until
        |B| - m of them are missing (skip) or the list ends (compare the sets). Text o has at
        most len - 1 bigrams: no more than m of them, and it cannot pass either."""
        probe, most = self.probe(p)
        if not probe:
            return False  # no bigrams: the similarity is 0
        s = self.norm(o)
        if len(s) < 2:
            return True  # a one-character text's "bigram" is itself: compare the sets
        if len(s) - 1 <= most:
            return False
        misses = len(probe) - most
        for g in probe:
            if g not in s:
                misses -= 1
                if not misses:
                    return False
        return True

    def probe(self, i: int) -> tuple[tuple[str, ...], int]:
        p = self.probes[i]
        if p is None:
            g = self.grams_of(i)
            p = self.probes[i] = (tuple(sorted(g, key=self.common.__getitem__)), _most_shared(len(g)))
        return p


@lru_cache(maxsize=None)
def _most_shared(size: int) -> int:
    """The most bigrams a text can share with one of `size` bigrams and not pass the
    threshold: the largest m with m / size <= DEDUP_THRESHOLD, as floating point computes it."""
    if not size:
        return 0
    m = int(DEDUP_THRESHOLD * size)
    while m < size and (m + 1) / size <= DEDUP_THRESHOLD:
        m += 1
    while m > 0 and m / size > DEDUP_THRESHOLD:
        m -= 1
    return m
