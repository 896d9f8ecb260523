"""Profile (the first source document's profile.go): scattered preferences and habits
distilled into one pinned profile line, which supersedes the previous profile."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from memdream.dream.ask import ask
from memdream.dream.plan import UNCHANGED, Plan, Rejected, Remember
from memdream.dream.validate import Invalid, check_text
from memdream.llm.client import LLM
from memdream.model.entry import IDENTITY, INSTRUCTION, PREFERENCE, RECALL, RESIDENT

if TYPE_CHECKING:
    from memdream.core import Core

PROFILE_SUBJECT = "profile"  # the subject of the profile line: a new profile supersedes the old
MIN_INPUTS = 3  # fewer preferences and habits than this: too little to describe anyone
MAX_INPUTS = 60
MAX_CHARS = 300
# A profile names what the memories describe ("an engineer", 一个工程师): that many words need
# not occur in them. Everything else must, and every number.
FREE_WORDS = 2

SYSTEM = """From the person's preferences and habits below, write their profile: one sentence that describes who they are and how they like to work,
for example "an engineer who often works until 5 am, writes Go and prefers dark themes".
Use only what the memories say; never guess or add anything beyond one word for what the person is. Write in the language most of the memories use.
Answer JSON only: {"profile": "..."}"""
SCHEMA = {"type": "object", "properties": {"profile": {"type": "string"}}, "required": ["profile"]}


def plan_profile(mem: "Core", llm: LLM, last: str = "") -> Plan:
    plan = Plan("profile")
    rows = [
        r for r in mem.index.entries(mem.scope, (RESIDENT, RECALL), current_only=True)
        if r.type in (PREFERENCE, INSTRUCTION) or (r.type == "context" and r.hits > 0)
    ]  # fmt: skip
    rows.sort(key=lambda r: (-r.hits, -(r.ca or 0.0)))
    entries = [r.entry() for r in rows[:MAX_INPUTS]]
    entries = [e for e in entries if e.subject != PROFILE_SUBJECT]
    if len(entries) < MIN_INPUTS:
        plan.status = f"Skipped: {len(entries)} preferences and habits are too few to draw a profile from (at least {MIN_INPUTS})."
        return plan
    plan.seen = len(entries)
    texts = [e.text for e in entries]
    plan.inputs = hashlib.sha256("\n".join(sorted(f"{e.id}:{e.text}" for e in entries)).encode()).hexdigest()[:16]
    if last and plan.inputs == last:
        plan.status = UNCHANGED
        return plan
    reply = ask(llm, SYSTEM, {"memories": texts}, plan, max_tokens=300, schema=SCHEMA)
    try:
        if not isinstance(reply, dict):
            raise Invalid("the reply is not a JSON object")
        text = check_text(reply.get("profile"), texts, MAX_CHARS, free_words=FREE_WORDS)
    except Invalid as exc:
        plan.rejected.append(Rejected("the profile", str(exc)))
        return plan
    plan.ops.append(Remember(text, f"distilled from {len(entries)} preferences and habits", type=IDENTITY, subject=PROFILE_SUBJECT, pin=True, source="dream"))
    return plan
