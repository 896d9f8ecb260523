"""The deep phase: a model merges clusters of related, redundant recall entries into one line
each, inside the cage (DESIGN section 9; the first source document's dreaming.go):

- only recall-layer entries; never rules, identity, pinned, often recalled (hc >= 3) or young
  (< 4.5 days) ones;
- at most 4 clusters per run and 8 entries per cluster;
- the model sees short integer ids and answers JSON operations; every operation is checked
  (dream/validate.py) and a merge supersedes its sources, which stay in the files.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from datetime import timedelta
from typing import TYPE_CHECKING

from memdream.model.script import is_cjk
from memdream.model.secrets import shown_entry
from memdream.dream.ask import ask, list_schema
from memdream.dream.plan import UNCHANGED, Merge, Plan, Rejected
from memdream.dream.validate import Ids, Invalid, check_text, common_subject, operations
from memdream.llm.client import LLM
from memdream.model.entry import IDENTITY, RECALL, RULE, Entry
from memdream.model.lifecycle import PROMOTE_HITS
from memdream.model.similarity import contradiction
from memdream.store.format import parse_line


if TYPE_CHECKING:
    from memdream.core import Core

MAX_CLUSTERS = 4  # clusters per run: a night's dream never rewrites the whole memory
MAX_CLUSTER_SIZE = 8  # entries per cluster shown to the model
MIN_AGE = timedelta(days=4.5)  # younger entries are still evolving: never folded
PROTECTED_HITS = PROMOTE_HITS  # entries recalled this often are never folded
POOL = 3000  # the newest eligible entries considered for clustering per run
RELATED = 0.4  # share of the shorter entry's tokens two entries must share to count as related ...
RELATED_MIN_SHARED = 2  # ... and at least this many tokens
COMMON_DF = 200  # tokens in more pool entries than this are too common to relate anything
GROUP_COSINE = 0.6  # with an embedder: entries this close (and no contradiction signal) are likely one fact; the model decides
DENSE_WEIGHT = 4.0  # a dense link weighs like two or three shared rare words (measured: dense links that
# outrank every word link gave the oracle far fewer groups to merge in bench/dream_life.py --embedder use)
MAX_DENSE_NEIGHBOURS = MAX_CLUSTER_SIZE - 1

SYSTEM = """You consolidate a person's memory. You get groups of related memories, each memory with a short integer id.
For each group, decide whether some of its memories are redundant fragments of one fact or topic that read better as a single memory.
Rules:
- Merge only memories that really belong together. Leave the others alone.
- Keep every fact: every name, number, date, place and preference of the merged memories must be in the merged text.
- Invent nothing: use only words and facts found in the memories you merge. No guesses, no interpretation.
- Write the merged text in the language of the memories, as one short line.
Answer with JSON only: {"operations": [{"op": "merge", "ids": [1, 2], "text": "the merged memory"}]}
Use only ids you were shown, each at most once. Answer {"operations": []} when nothing should be merged."""
SCHEMA = list_schema("operations", {
    "type": "object",
    "properties": {"op": {"type": "string", "enum": ["merge"]}, "ids": {"type": "array", "items": {"type": "integer"}}, "text": {"type": "string"}},
    "required": ["op", "ids", "text"],
})  # fmt: skip
TOKENS_PER_GROUP = 250  # max_tokens of the answer: a merged line and its ids per group, and some slack


def eligible(e: Entry, layer: str, now) -> bool:  # type: ignore[no-untyped-def]
    born = e.created_at or e.valid_from
    return (
        layer == RECALL
        and e.valid_to is None
        and e.type not in (RULE, IDENTITY)
        and not e.pinned
        and e.hits < PROTECTED_HITS
        and born is not None
        and now - born >= MIN_AGE
    )


def fingerprint(entries: list[Entry]) -> str:
    return hashlib.sha256(",".join(sorted(e.id for e in entries)).encode()).hexdigest()[:12]


def clusters(
    items: list[tuple[Entry, set[str]]], declined: frozenset[str] = frozenset(), dense: dict[int, list[tuple[float, int]]] | None = None
) -> list[list[int]]:
    """Groups (indexes into `items`) of related entries: same subject, or sharing at least
    RELATED_MIN_SHARED tokens and RELATED of the shorter one's tokens. Greedy from the
    entry with the strongest link; at most MAX_CLUSTERS groups of 2 to MAX_CLUSTER_SIZE.

    With `dense` ({i: [(cosine, j), ...]}, from the embedder), an entry that has a vector is
    also linked to its nearest entries at a cosine of at least GROUP_COSINE with no
    contradiction signal between them (restatements that share few words), weighted
    DENSE_WEIGHT x cosine beside its word links; the model still decides, the cage checks."""
    df = Counter(t for _, toks in items for t in toks)
    postings: dict[str, list[int]] = {}
    for i, (_, toks) in enumerate(items):
        for t in toks:
            if df[t] <= COMMON_DF:
                postings.setdefault(t, []).append(i)
    by_subject: dict[str, list[int]] = {}
    for i, (e, _) in enumerate(items):
        if e.subject:
            by_subject.setdefault(e.subject, []).append(i)
    n = len(items)
    idf = {t: math.log(1 + n / d) for t, d in df.items()}
    # (strength, j): related neighbours, strongest first. Whether two lines are related is the
    # share of tokens above; how strongly is the weight of what they share (rare words weigh
    # more), so "adopted a rescue dog named Biscuit" pairs with its restatement before lines
    # of small talk that share only common words.
    neighbours: list[list[tuple[float, int]]] = []
    for i, (e, toks) in enumerate(items):
        near: dict[int, float] = {}
        for t in toks:
            for j in postings.get(t, ()):
                if j != i and j not in near:
                    other = items[j][1]
                    shared = toks & other
                    related = len(shared) >= RELATED_MIN_SHARED and len(shared) / min(len(toks), len(other)) >= RELATED
                    near[j] = sum(idf[x] for x in shared) if related else -1.0
        if dense is not None:
            for cos, j in dense.get(i, ()):
                near[j] = max(near.get(j, 0.0), DENSE_WEIGHT * cos)
        for j in by_subject.get(e.subject, []) if e.subject else []:
            if j != i:
                near[j] = max(near.get(j, 0.0), sum(idf[x] for x in toks & items[j][1]), 1.0)
        neighbours.append(sorted(((s, j) for j, s in near.items() if s > 0), key=lambda sj: (-sj[0], sj[1])))
    # Seed from the strongest links first: two lines that say nearly the same thing are the
    # likeliest merge, while the best-connected lines are often generic small talk (measured
    # in bench/dream_life.py).
    order = sorted(range(n), key=lambda i: (-(neighbours[i][0][0] if neighbours[i] else 0.0), -len(neighbours[i]), i))
    taken: set[int] = set()
    out: list[list[int]] = []
    for i in order:
        if len(out) >= MAX_CLUSTERS:
            break
        if i in taken:
            continue
        group = [i] + [j for _, j in neighbours[i] if j not in taken][: MAX_CLUSTER_SIZE - 1]
        if len(group) < 2:
            continue
        if fingerprint([items[k][0] for k in group]) in declined:
            taken.update(group)  # a group the model already left alone, unchanged since: not asked again
            continue
        taken.update(group)
        out.append(group)
    return out


def dense_links(mem: "Core", items: list[tuple[Entry, set[str]]], rowids: list[int], plan: Plan) -> dict[int, list[tuple[float, int]]] | None:
    """{i: [(cosine, j), ...]}: each item's nearest items that say the same fact, by the
    embedder (None without one, or when it fails: the token links then stand)."""
    vectors = mem.vectors
    if vectors is None or not items:
        return None
    try:
        import numpy as np

        vectors.embed_pending(mem.scope)
        have, mat = vectors.matrix(mem.scope)
    except Exception as exc:  # noqa: BLE001 - the groups fall back to shared words
        plan.notes.append(f"groups by shared words: the embedder failed ({exc})")
        return None
    pos = {r: k for k, r in enumerate(have)}
    idx = [i for i, r in enumerate(rowids) if r in pos]
    if len(idx) < 2:
        return None
    sub = mat[[pos[rowids[i]] for i in idx]]
    sims = sub @ sub.T
    out: dict[int, list[tuple[float, int]]] = {}
    for a, i in enumerate(idx):
        order = np.argsort(-sims[a])
        near: list[tuple[float, int]] = []
        for b in order:
            cos = float(sims[a, b])
            if cos < GROUP_COSINE or len(near) >= MAX_DENSE_NEIGHBOURS:
                break
            j = idx[int(b)]
            if j != i and not contradiction(items[i][0].text, items[j][0].text) and not contradiction(items[j][0].text, items[i][0].text):
                near.append((cos, j))
        out[i] = near
    return out


def plan_deep(mem: "Core", llm: LLM, last: str = "", declined: frozenset[str] = frozenset()) -> Plan:
    plan = Plan("deep")
    now = mem.clock.now()
    rows = mem.index.mergeable(mem.scope, RECALL, PROTECTED_HITS, (RULE, IDENTITY))
    items: list[tuple[Entry, set[str]]] = []
    item_rows: list[int] = []
    for layer, line, tok, rowid in rows:
        e = parse_line(line, layer)
        if shown_entry(e) is not e:
            continue  # holds a credential typed by hand: never sent to a model, never merged
        if eligible(e, layer, now):
            # Single Chinese characters are index tokens (for one-character queries), not words
            # two memories share: leave them out of relatedness.
            items.append((e, {t for t in tok.split() if not (len(t) == 1 and is_cjk(t))}))
            item_rows.append(rowid)
            if len(items) >= POOL:
                break
    plan.seen = len(items)
    groups = clusters(items, declined, dense_links(mem, items, item_rows, plan))
    if not groups:
        plan.status = f"Nothing to consolidate: no group of related memories among the {len(items)} that may be merged (older than 4.5 days, not pinned, rarely recalled)."
        return plan
    shown: dict[int, Entry] = {}
    group_of: dict[int, int] = {}
    payload_groups = []
    n = 0
    for g, group in enumerate(groups):
        mems = []
        for i in group:
            n += 1
            shown[n] = items[i][0]
            group_of[n] = g
            mems.append({"id": n, "text": items[i][0].text})
        payload_groups.append({"group": g + 1, "memories": mems})
    plan.inputs = hashlib.sha256("\n".join(f"{e.id}:{e.text}" for e in shown.values()).encode()).hexdigest()[:16]
    if last and plan.inputs == last:
        plan.status = UNCHANGED
        return plan
    reply = ask(llm, SYSTEM, {"groups": payload_groups}, plan, max_tokens=100 + TOKENS_PER_GROUP * len(groups), schema=SCHEMA)
    ids = Ids(shown)
    merged_groups: set[int] = set()
    try:
        ops = operations(reply)
    except Invalid as exc:
        plan.rejected.append(Rejected("the model's answer", str(exc)))
        return plan
    for k, op in enumerate(ops, 1):
        what = f"operation {k}"
        try:
            if not isinstance(op, dict):
                raise Invalid("it is not a JSON object")
            kind = op.get("op")
            if kind in ("keep", "skip", "none"):
                continue
            if kind != "merge":
                raise Invalid(f"unknown operation {kind!r} (only merge is allowed)")
            chosen = ids.take(op.get("ids"), at_least=2)
            what = f"merge of {', '.join(str(i) for i in chosen)}"
            if len({group_of[i] for i in chosen}) > 1:
                raise Invalid("the ids come from different groups")
            sources = [shown[i] for i in chosen]
            texts = [s.text for s in sources]
            subject = common_subject(s.subject for s in sources)
            text = check_text(op.get("text"), texts, mem.config.max_text_chars, keep_numbers_of=texts)
        except Invalid as exc:
            plan.rejected.append(Rejected(what, str(exc)))
            continue
        ids.commit(chosen)
        merged_groups.add(group_of[chosen[0]])
        types = Counter(s.effective_type for s in sources)
        plan.ops.append(Merge(tuple(sources), text, types.most_common(1)[0][0], subject, f"merged {len(sources)} related memories"))
    plan.declined = [fingerprint([items[i][0] for i in group]) for g, group in enumerate(groups) if g not in merged_groups]
    return plan
