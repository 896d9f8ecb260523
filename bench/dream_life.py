"""Benchmark: a 90-day simulated life, with and without dreaming.

    .venv/bin/python bench/dream_life.py [--quick] [--data ../shared/bench/locomo/locomo10.json]
                                         [--days 90] [--convs 2] [--canaries 50] [--seed 7]
                                         [--no-greedy] [--no-diagnostics] [--diagnose]
                                         [--report docs/benchmarks.md] [--note TEXT]

One input stream, built once from a seed, is played into one fresh vault per run; the dream
runs every night as the scheduler runs it (``mem.dream(phases, force=False)``, so a group the
deep phase's model declined is not shown again):

- A: no dreaming;
- B: the light phase (``["light"]``, no model);
- C: light + deep (``["light", "deep"]``), the model being ``memdream.llm.fake.FakeLLMServer``
  (a real OpenAI-compatible server on loopback, reached through the production client)
  answering with a scripted oracle (see `oracle`) that knows the ground truth: in each group it
  merges the memories that say the same fact (restatements of it), never two facts;
- D (a diagnostic, ``--no-greedy`` or ``--no-diagnostics`` to skip): as C, but the model joins
  every group it is shown (as far as the text fits): the most the deep phase's cage lets any
  model fold;
- E (a diagnostic, ``--no-diagnostics`` to skip): as C, with ``memdream.dream.deep.clusters``
  replaced in this process by `strongest_first_clusters` (seeds by their strongest link).

The stream, on a FrozenClock, one simulated day at a time:

- 09:00: that day's slice of LoCoMo turns (the turns of ``--convs`` conversations, each spread
  evenly over the days, in order), one memory per turn, ``Memory.write(turn.memory(),
  type="fact")``, 5 s apart;
- 12:00: on about a quarter of the days, 1-3 earlier turns said again: verbatim, with a
  trailing "!", lower-cased or upper-cased (the write path folds these); and restatements of
  earlier turns in other words (below);
- 13:00: scripted personal facts with a subject (22 English, 8 Chinese) whose value changes
  over time (``remember("I live in Shanghai", subject="home city")`` after "I live in
  Hangzhou"; 我在西湖区 after 我在余杭区), on some days the current value said again, and
  restatements of the current value in other words;
- 20:00: recalls as an agent would make them (``Memory.recall(q, k=10)``, hits folded into the
  files at once with ``hit_flush_after = 1``): 3 LoCoMo questions whose evidence is already
  remembered (never a canary question) and one question about a personal fact;
- 23:00: the dream (B to E).

Restatements (paraphrases) are what bigram dedup cannot fold: `PARAPHRASED_TURN_SHARE` of the
turns (among those holding a first-person statement) are said again 1-3 times on later days,
in the third person with synonyms, as "X mentioned that ...", or as a terse note
(`turn_restatements`); each personal-fact value 1-3 times while it holds, through scripted
templates in its language (`FACT_RESTATE`). All are written without a subject, and only
wordings with bigram similarity <= 0.65 to the source and to each other are kept (`distinct`).
A ground-truth map (text -> the stream keys it says) scores them and guides the oracle. The
entry reduction any dream can show depends on this share: the report states it and the
ceiling it sets (A's live entries less the distinct facts they hold).

Measured at the end of days 30, 60 and 90 (the last is the table): live entries (resident +
recall, currently valid: ``Memory.list()``), lines in MEMORY.md and memory/recall/ with ended
ones, near-duplicates (``is_duplicate`` in either direction, all pairs) and redundant entries
by ground truth, the resident layer, the characters held by live entries, and turn recall@10
on ~50 canary LoCoMo questions (set aside, never asked during the life), ranked by relevance
and by the default score. An entry stands for the stream keys written into it (a folded
repeat or a restatement adds its source's) and, after a merge (deep) or a near-duplicate fold
(light), for every key of the entries whose ``superseded_by`` names it. Measurement recalls
do not count hits (the journal is emptied after each), so measuring does not change the life.
At the last day, each personal fact is asked with ``recall(q, k=5)`` (the current value there
and no superseded one, a restatement counting as its value) and ``k=1``.

Entry ids come from a seeded generator (``memdream.core._random`` is replaced in this
process only), so a run is deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locomo  # noqa: E402
from remember_latency import cpu_name, write_report  # noqa: E402

import memdream.dream.deep as deep_module  # noqa: E402
import memdream.core as core_module  # noqa: E402
from memdream.clock import FrozenClock  # noqa: E402
from memdream.config import load_config  # noqa: E402
from memdream.errors import RefusedInput, SecretRefused  # noqa: E402
from memdream.llm.client import OpenAICompatLLM  # noqa: E402
from memdream.llm.fake import FakeLLMServer  # noqa: E402
from memdream.memory import Memory  # noqa: E402
from memdream.model.classify import extract_subject  # noqa: E402
from memdream.model.similarity import DEDUP_THRESHOLD, bigrams, content_words, is_duplicate, similarity  # noqa: E402
from memdream.model.tokens import EN_STOPWORDS  # noqa: E402
from memdream.dream.validate import numbers  # noqa: E402

REPORT_START = "<!-- bench:dream-life:start -->"
REPORT_END = "<!-- bench:dream-life:end -->"
START = datetime(2026, 1, 5, tzinfo=timezone.utc)  # day 1, 00:00
K = 10
RUNS = {"A": (), "B": ("light",), "C": ("light", "deep"), "D": ("light", "deep"), "E": ("light", "deep")}
DIAGNOSTICS = ("D", "E")
RUN_LABEL = {
    "A": "A: no dreaming",
    "B": "B: light nightly",
    "C": "C: light + deep nightly (oracle model)",
    "D": "D (diagnostic): light + deep, greedy model",
    "E": "E (diagnostic): C, deep groups seeded from the strongest link",
}
REPEAT_DAY_SHARE = 0.25  # days on which some earlier turns are said again
FACT_REPEAT_DAY_SHARE = 0.15  # days on which a personal fact's current value is said again
RECALLS_PER_DAY = 3  # LoCoMo questions asked each evening (plus one personal-fact question)
# Restatements: the same fact said again later in other words (what bigram dedup cannot fold).
# The entry reduction a dream can reach depends directly on these two numbers.
PARAPHRASED_TURN_SHARE = 0.20  # share of the remembered LoCoMo turns restated later (only turns with a first-person statement qualify)
RESTATEMENTS = (1, 3)  # restatements per paraphrased turn and per personal-fact value (uniform; fewer when not enough wordings or days)

# (subject, question, values in the order they become true). English then Chinese.
FACTS: list[tuple[str, str, list[str]]] = [
    ("home city", "Where do I live now?", ["I live in Hangzhou", "I live in Shanghai", "I live in Singapore"]),
    ("employer", "Which company do I work at?", ["I work at Alibaba", "I work at ByteDance"]),
    ("job title", "What is my job title?", ["My job title is data analyst", "My job title is product manager"]),
    ("car", "What car do I drive?", ["I drive a Honda Civic", "I drive a Tesla Model 3"]),
    ("phone", "What phone do I have?", ["My phone is an iPhone 12", "My phone is a Pixel 8"]),
    ("gym", "Which gym do I train at?", ["I train at the Riverside gym", "I train at the Harbor Fitness gym"]),
    ("coffee order", "What is my usual coffee order?", ["My usual coffee order is a latte", "My usual coffee order is a flat white", "My usual coffee order is an americano"]),
    ("diet", "What diet do I eat?", ["I eat a vegetarian diet", "I eat a pescatarian diet"]),
    ("football team", "What is my favourite football team?", ["My favourite football team is Arsenal", "My favourite football team is Liverpool"]),
    ("cat", "What is my cat called?", ["My cat is called Mochi", "My cat is called Tofu"]),
    ("manager", "Who is my manager?", ["My manager is Alice Wong", "My manager is Brian Lee"]),
    ("commute", "How do I commute to work?", ["I commute to work by bus", "I commute to work by bike", "I commute to work by metro"]),
    ("weekly run", "How many km do I run a week?", ["I run 10 km a week", "I run 25 km a week"]),
    ("language course", "Which language am I learning?", ["The language I am learning is Spanish", "The language I am learning is Japanese"]),
    ("dentist", "Who is my dentist?", ["My dentist is Dr. Patel", "My dentist is Dr. Nguyen"]),
    ("bedtime", "What time do I go to bed?", ["I go to bed at 11 pm", "I go to bed at 10 pm"]),
    ("book", "Which book am I reading?", ["The book I am reading is Dune", "The book I am reading is Middlemarch"]),
    ("laptop", "What laptop do I use?", ["My laptop is a ThinkPad X1", "My laptop is a MacBook Air"]),
    ("rent", "How much is my rent?", ["My rent is 4500 yuan a month", "My rent is 5200 yuan a month"]),
    ("project", "What is my current project?", ["My current project is the billing migration", "My current project is the search revamp"]),
    ("shoe size", "What is my shoe size?", ["My shoe size is 42", "My shoe size is 43"]),
    ("next trip", "Where is my next trip?", ["My next trip is to Kyoto", "My next trip is to Lisbon", "My next trip is to Chengdu"]),
    ("所在地", "我在哪个区？", ["我在余杭区", "我在西湖区", "我在滨江区"]),
    ("公司", "我在哪家公司上班？", ["我在阿里巴巴上班", "我在网易上班"]),
    ("宠物", "我养了什么宠物？", ["我养了一只橘猫", "我养了一只柯基犬"]),
    ("早餐", "我早餐吃什么？", ["我早餐吃包子", "我早餐吃燕麦粥"]),
    ("车", "我开什么车？", ["我开比亚迪", "我开蔚来"]),
    ("运动", "我每周做什么运动？", ["我每周去游泳两次", "我每周去打羽毛球三次"]),
    ("手机", "我的手机是什么牌子？", ["我的手机是华为", "我的手机是小米"]),
    ("乐器", "我在学什么乐器？", ["我在学吉他", "我在学钢琴"]),
]

_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def memory_text(turn: locomo.Turn) -> str:
    """`Turn.memory()` on one line (the write path refuses line breaks; 37 LoCoMo turns hold some)."""
    return _BREAKS.sub(" ", turn.memory()).strip()



# ---- restatements: the same fact in other words ------------------------------------------

# Personal facts: (regex over a value, templates filled from its groups). No "I"/"my" opening
# (a fragment an agent writes), each keeps the value's words and numbers.
FACT_RESTATE: dict[str, tuple[str, list[str]]] = {
    "home city": (r"I live in (?P<v>.+)", ["Lives in {v} now", "{v} is the city I live in", "Home base these days: {v}, where I live"]),
    "employer": (r"I work at (?P<v>.+)", ["Works at {v}", "{v} is the company I work for", "Employed at {v}, working there full time"]),
    "job title": (r"My job title is (?P<v>.+)", ["Works as {v} (that is the job title)", "{v} is the official job title", "Current role: {v}"]),
    "car": (r"I drive a (?P<v>.+)", ["Drives a {v}", "The car I drive is a {v}", "{v} is the car, driven every day"]),
    "phone": (r"My phone is (?P<v>.+)", ["Uses {v} as a phone", "The phone in use is {v}", "Phone: {v}, used every day"]),
    "gym": (r"I train at the (?P<v>.+) gym", ["Trains at {v}", "The {v} gym is where training happens", "Works out at the {v} gym"]),
    "coffee order": (r"My usual coffee order is (?P<v>.+)", ["Usually orders {v} at the coffee shop", "Coffee: {v}, the usual order", "The usual order at the cafe is {v}"]),
    "diet": (r"I eat a (?P<v>.+) diet", ["Eats {v} food", "Follows a {v} diet", "On a {v} diet these days"]),
    "football team": (r"My favourite football team is (?P<v>.+)", ["Supports {v} in football", "{v} is the football team to cheer for", "Football: cheers for {v}"]),
    "cat": (r"My cat is called (?P<v>.+)", ["Has a cat named {v}", "{v} is the name of the cat", "The cat at home is {v}"]),
    "manager": (r"My manager is (?P<v>.+)", ["Reports to {v} at work", "{v} is the manager", "The boss at work is {v}, the manager"]),
    "commute": (r"I commute to work by (?P<v>.+)", ["Goes to work by {v}", "Takes the {v} to work every day", "Commuting by {v} to the office"]),
    "weekly run": (r"I run (?P<n>\d+) km a week", ["Runs {n} km every week", "{n} km of running a week", "Weekly running distance: {n} km"]),
    "language course": (r"The language I am learning is (?P<v>.+)", ["Learning {v} at the moment", "Studies {v} as a new language", "Taking {v} lessons"]),
    "dentist": (r"My dentist is (?P<v>.+)", ["Sees {v} for teeth", "{v} is the dentist", "Dental checkups with {v}"]),
    "bedtime": (r"I go to bed at (?P<n>\d+) pm", ["Goes to bed at {n} pm", "Bedtime is {n} pm", "Asleep by {n} pm most nights"]),
    "book": (r"The book I am reading is (?P<v>.+)", ["Reading {v} at the moment", "Currently reading the book {v}", "{v} is the book on the nightstand"]),
    "laptop": (r"My laptop is a (?P<v>.+)", ["Works on a {v} laptop", "Uses a {v} as the laptop", "Laptop: {v}"]),
    "rent": (r"My rent is (?P<n>\d+) yuan a month", ["Pays {n} yuan a month in rent", "Rent comes to {n} yuan monthly", "Monthly rent: {n} yuan"]),
    "project": (r"My current project is the (?P<v>.+)", ["Working on the {v} project now", "The {v} is the current project", "Busy with the {v} at work"]),
    "shoe size": (r"My shoe size is (?P<n>\d+)", ["Wears size {n} shoes", "Shoes: size {n}", "Buys shoes in size {n}"]),
    "next trip": (r"My next trip is to (?P<v>.+)", ["Travelling to {v} next", "The next trip will be to {v}", "Planning a trip to {v}, the next one"]),
    "所在地": (r"我在(?P<v>.+区)", ["住在{v}", "{v}是我现在住的地方", "家在{v}"]),
    "公司": (r"我在(?P<v>.+)上班", ["上班的公司是{v}", "在{v}工作", "{v}是我现在的公司"]),
    "宠物": (r"我养了一只(?P<v>.+)", ["家里养着一只{v}", "{v}是家里的宠物", "养的宠物是一只{v}"]),
    "早餐": (r"我早餐吃(?P<v>.+)", ["早餐一般吃{v}", "{v}是每天的早餐", "早上吃{v}"]),
    "车": (r"我开(?P<v>.+)", ["平时开的车是{v}", "{v}是我开的车", "开一辆{v}"]),
    "运动": (r"我每周去(?P<a>.+?)(?P<n>[两三])次", ["每周{a}{n}次", "{a}是每周的运动，一周{n}次", "一周去{a}{n}次"]),
    "手机": (r"我的手机是(?P<v>.+)", ["用的是{v}手机", "手机用{v}", "{v}手机用了挺久"]),
    "乐器": (r"我在学(?P<v>.+)", ["最近在学{v}", "正在学的乐器是{v}", "{v}是现在学的乐器"]),
}

# LoCoMo turns: one informative sentence of the turn, restated in the third person.
_SENT = re.compile(r"(?<=[.!?])\s+")
_IMAGE = re.compile(r"\s*\[image:[^\]]*\]")
_LEAD = re.compile(
    r"^(?:(?:wow|hey|hi|hello|oh|ah|aw+|yeah|yep|yes|haha+|hah|lol|ok(?:ay)?|sure(?: thing)?|totally|thanks(?: a (?:ton|lot|bunch))?|thank you|"
    r"no way|cool|great|awesome|omg|btw|by the way|well|so|hmm|whoa|nice|absolutely|definitely|true|right|indeed)\b[\s,!.:;-]*)+",
    re.I,
)
_SECOND = re.compile(r"\b(?:you|your|yours|you're|you've|you'll|you'd|yourself|u)\b", re.I)
_FIRST = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|me|myself|mine)\b")
_PAST = set("""was were had did went got made took saw found felt met thought told said left came became began bought brought caught
    taught built kept knew read ran won lost gave sent spent wrote drove heard held paid put set sat stood understood
    chose spoke wore drew grew threw fell rode sang swam woke forgot hid shook led fed""".split())
_ADVERBS = set("""really just also always never still finally recently actually usually often totally even already definitely truly
    sometimes absolutely""".split())
_MODAL = set("can can't could couldn't will won't would wouldn't should shouldn't must might may had did didn't".split())
# Word swaps that keep the meaning (a paraphrase in other words); applied once, case kept.
SYNONYMS = {
    "really": "truly", "great": "wonderful", "amazing": "incredible", "awesome": "fantastic", "loved": "adored",
    "loves": "adores", "happy": "glad", "kids": "children", "yesterday": "the day before", "recently": "lately",
    "started": "began", "start": "begin", "bought": "purchased", "went": "headed", "big": "large", "tough": "hard",
    "hard": "difficult", "fun": "enjoyable", "pic": "photo", "photo": "picture", "picture": "photo", "excited": "thrilled",
    "thrilled": "excited", "nice": "lovely", "beautiful": "lovely", "lots": "plenty",
    "tried": "attempted", "try": "attempt", "want": "wish", "wanted": "wished", "think": "believe", "thought": "believed",
    "help": "assist", "helped": "assisted", "helps": "assists", "important": "significant", "grateful": "thankful",
    "glad": "happy", "scary": "frightening", "cool": "neat", "finished": "completed", "finish": "complete",
    "enjoy": "like", "enjoyed": "liked", "lately": "recently", "huge": "enormous", "gonna": "going to",
    "wanna": "want to", "kinda": "kind of", "mom": "mother", "dad": "father", "fam": "family", "pics": "photos",
}
_SYN = re.compile(r"\b(" + "|".join(sorted(map(re.escape, SYNONYMS), key=len, reverse=True)) + r")\b", re.I)


def _swap(text: str) -> str:
    def one(m: re.Match) -> str:
        w = m.group(1)
        s = SYNONYMS[w.lower()]
        return s[0].upper() + s[1:] if w[0].isupper() else s
    return _SYN.sub(one, text)


def _third(verb: str) -> str:
    """The third-person singular of a present-tense verb after a named subject."""
    v = verb.lower()
    irregular = {"am": "is", "have": "has", "haven't": "hasn't", "don't": "doesn't", "do": "does", "go": "goes", "was": "was"}
    if v in irregular:
        return irregular[v]
    if v in _PAST or v in _MODAL or v.endswith("ed") or v.endswith("n't"):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", v):
        return verb + "es"
    if re.search(r"[^aeiou]y$", v):
        return verb[:-1] + "ies"
    return verb + "s"


_I = re.compile(r"\bI('m|'ve|'ll|'d)?\b")
_THEY = {"": "they", "'m": "they're", "'ve": "they've", "'ll": "they'll", "'d": "they'd"}


def _they_form(s: str) -> str:
    """Every first-person word said as "they"/"them"/"their" (plural agreement: no conjugation)."""
    s = re.sub(r"\bmyself\b", "themselves", s)
    s = re.sub(r"\bmine\b", "theirs", s)
    s = re.sub(r"\bme\b", "them", s)
    s = re.sub(r"\b[Mm]y\b", "their", s)
    s = re.sub(r"\bI am\b", "they are", s)
    s = re.sub(r"\bI was\b", "they were", s)
    return _I.sub(lambda m: _THEY[(m.group(1) or "").lower()], s)


def third_person(sentence: str, name: str) -> str:
    """The sentence with its first "I" replaced by the speaker's name (verb conjugated), the
    other first-person words by they/them/their; "" when the sentence has no "I"."""
    m = _I.search(sentence)
    if not m:
        return ""
    head, tail = sentence[: m.start()], sentence[m.end():]
    c = (m.group(1) or "").lower()
    if c:
        named = name + {"'m": " is", "'ve": " has", "'ll": " will", "'d": " would"}[c]
    else:
        words = tail.split(" ")  # tail starts with " "
        i = 1
        while i < len(words) and words[i].lower() in _ADVERBS:
            i += 1
        if i < len(words):
            w = re.match(r"^([A-Za-z'-]+)(.*)$", words[i])
            if w:
                words[i] = _third(w.group(1)) + w.group(2)
        named, tail = name, " ".join(words)
    s = _they_form(head) + named + _they_form(tail)
    return s[0].upper() + s[1:]


_FILLER = set("just really very so totally also too actually super quite pretty kinda gonna lot lots".split())
_PRONOUNS = set("they they're they've they'll they'd them their themselves theirs".split())


def note_form(sentence: str, name: str) -> str:
    """A terse note of the sentence: its content words in order, after the speaker's name."""
    words = [w.strip(",;:.!–-") for w in _they_form(sentence).split()]
    keep = [w for w in words if w and w.lower() not in EN_STOPWORDS and w.lower() not in _FILLER and w.lower() not in _PRONOUNS]
    return f"{name} - " + " ".join(keep)


def fact_sentence(text: str) -> str:
    """The turn's most informative first-person statement ("" when it has none)."""
    best = ""
    for sent in _SENT.split(_IMAGE.sub("", text)):
        sent = _LEAD.sub("", sent.strip()).strip(" ,-")
        if not sent or sent.endswith("?") or _SECOND.search(sent) or not _FIRST.search(sent):
            continue
        if len(sent.split()) < 5 or len(content_words(sent)) < 3:
            continue
        if len(sent) > len(best):
            best = sent
    return best


def turn_restatements(text: str, speaker: str) -> list[str]:
    """Candidate restatements of a LoCoMo turn ("Speaker: text"): one of its first-person
    statements said by someone else, in three wordings."""
    body = text[len(speaker) + 2 :] if text.startswith(speaker + ": ") else text
    sent = fact_sentence(body)
    if not sent:
        return []
    core = sent.rstrip(".!").strip()
    named = third_person(core, speaker)
    if not named:
        return []
    they = _they_form(core)
    out = [_swap(named), f"{speaker} mentioned that {they[0].lower() + they[1:]}", note_form(_swap(core), speaker)]
    return [re.sub(r"\s+", " ", o).strip() for o in out]


def fact_restatements(subject: str, value: str) -> list[str]:
    pattern, templates = FACT_RESTATE[subject]
    m = re.fullmatch(pattern, value)
    if not m:
        raise ValueError(f"{value!r} does not fit the restatement pattern of {subject!r}")
    return [t.format(**m.groupdict()) for t in templates]


def distinct(candidates: list[str], source: str, others: list[str] = ()) -> list[str]:
    """The candidates that the write path and the light phase would not fold: bigram similarity
    at most the dedup threshold with the source and with each other."""
    kept: list[str] = []
    for c in candidates:
        if not c or extract_subject(c):
            continue
        if all(similarity(c, x) <= DEDUP_THRESHOLD for x in [source, *others, *kept]):
            kept.append(c)
    return kept


# ---- the stream ----------------------------------------------------------------------------


@dataclass
class Event:
    kind: str  # turn | repeat | paraphrase | fact | fact-repeat | fact-paraphrase
    key: str  # "conv/D1:3" or "fact:subject#i"
    text: str
    subject: str = ""
    variant: str = ""


@dataclass
class Day:
    events: list[Event] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)  # the evening's recalls


@dataclass
class Canary:
    question: str
    category: int
    evidence: list[str]  # namespaced keys
    ready_day: int  # the day its last evidence turn is written


@dataclass
class Stream:
    days: list[Day]
    canaries: list[Canary]
    facts: dict[str, list[int]]  # subject -> the day each value was said
    n_turns: int
    n_repeats: Counter
    n_fact_repeats: int
    convs: list[str]
    truth: dict[str, frozenset[str]] = field(default_factory=dict)  # text (spaces folded) -> the stream keys (facts) it says
    paraphrased_turns: int = 0  # LoCoMo turns with at least one restatement
    n_paraphrases: int = 0  # restatements of LoCoMo turns
    n_fact_paraphrases: int = 0  # restatements of personal-fact values
    paraphrase_sim: list[float] = field(default_factory=list)  # bigram similarity of each restatement to its source
    examples: list[tuple[str, str]] = field(default_factory=list)  # (source, restatement)


def fold(text: str) -> str:
    return " ".join(text.split())


def hour_of(kind: str) -> int:
    return {"turn": 9, "repeat": 12, "paraphrase": 12}.get(kind, 13)


def build_stream(convs: list[locomo.Conversation], n_days: int, n_canaries: int, seed: int) -> Stream:
    rng = random.Random(seed)
    days = [Day() for _ in range(n_days)]
    written_on: dict[str, int] = {}
    turn_text: dict[str, str] = {}
    for conv in convs:
        n = len(conv.turns)
        for i, turn in enumerate(conv.turns):
            d = i * n_days // n
            key = f"{conv.sample_id}/{turn.dia_id}"
            written_on[key] = d
            turn_text[key] = memory_text(turn)
            days[d].events.append(Event("turn", key, turn_text[key]))
    # Interleave the conversations within a day, keeping each one's order.
    for day in days:
        by_conv: dict[str, list[Event]] = defaultdict(list)
        for ev in day.events:
            by_conv[ev.key.split("/")[0]].append(ev)
        merged: list[Event] = []
        queues = list(by_conv.values())
        while any(queues):
            for q in queues:
                if q:
                    merged.append(q.pop(0))
        day.events = merged
    # Repeats of earlier turns.
    n_repeats: Counter = Counter()
    variants = ("verbatim", "exclaim", "lower", "upper")
    for d in range(1, n_days):
        if rng.random() >= REPEAT_DAY_SHARE:
            continue
        earlier = sorted(k for k, w in written_on.items() if w < d)
        for key in rng.sample(earlier, min(len(earlier), rng.randint(1, 3))):
            v = rng.choice(variants)
            t = turn_text[key]
            text = {"verbatim": t, "exclaim": t.rstrip() + "!", "lower": t.lower(), "upper": t.upper()}[v]
            days[d].events.append(Event("repeat", key, text, variant=v))
            n_repeats[v] += 1
    # Personal facts: the first value early, each change later, the last one by day ~85.
    facts: dict[str, list[int]] = {}
    last_change = max(2, n_days - max(1, n_days // 18))
    for subject, _q, values in FACTS:
        first = rng.randint(0, max(0, n_days // 6))
        rest = sorted(rng.sample(range(first + 3, last_change + 1), len(values) - 1)) if len(values) > 1 else []
        facts[subject] = [first, *rest]
        for i, (d, text) in enumerate(zip(facts[subject], values)):
            days[d].events.append(Event("fact", f"fact:{subject}#{i}", text, subject=subject))
    n_fact_repeats = 0
    for d in range(n_days):
        if rng.random() >= FACT_REPEAT_DAY_SHARE:
            continue
        said = [(s, max(i for i, x in enumerate(facts[s]) if x < d)) for s, _, _ in FACTS if facts[s][0] < d]
        if not said:
            continue
        subject, i = rng.choice(said)
        text = next(v for s, _, v in FACTS if s == subject)[i]
        if rng.random() < 0.5:
            text = text.lower()
        days[d].events.append(Event("fact-repeat", f"fact:{subject}#{i}", text, subject=subject, variant="fact"))
        n_fact_repeats += 1
    # Restatements, from their own generator (the rest of the stream does not depend on them).
    prng = random.Random(seed * 7919 + 1)
    truth: dict[str, set[str]] = defaultdict(set)
    sims: list[float] = []
    examples: list[tuple[str, str]] = []
    speaker_of = {f"{conv.sample_id}/{t.dia_id}": t.speaker for conv in convs for t in conv.turns}
    eligible = sorted(k for k, d in written_on.items() if d < n_days - 1 and turn_restatements(turn_text[k], speaker_of[k]))
    chosen = prng.sample(eligible, min(len(eligible), round(PARAPHRASED_TURN_SHARE * len(turn_text))))
    n_para = 0
    paraphrased = 0
    for key in sorted(chosen, key=lambda k: (written_on[k], k)):
        src = turn_text[key]
        wordings = distinct(turn_restatements(src, speaker_of[key]), src)
        later = range(written_on[key] + 1, n_days)
        k = min(prng.randint(*RESTATEMENTS), len(wordings), len(later))
        if not k:
            continue
        paraphrased += 1
        for d, text in zip(sorted(prng.sample(later, k)), wordings[:k]):
            days[d].events.append(Event("paraphrase", key, text, variant="paraphrase"))
            sims.append(similarity(text, src))
            n_para += 1
            if len(examples) < 3 and text == wordings[0]:
                examples.append((src, text))
    n_fact_para = 0
    for subject, _q, values in FACTS:
        for i, value in enumerate(values):
            wordings = distinct(fact_restatements(subject, value), value)
            end = facts[subject][i + 1] if i + 1 < len(values) else n_days
            window = range(facts[subject][i] + 1, end)  # while the value holds: said of what is true
            k = min(prng.randint(*RESTATEMENTS), len(wordings), len(window))
            picks = prng.sample(wordings, k)
            for d, text in zip(sorted(prng.sample(window, k)), picks):
                days[d].events.append(Event("fact-paraphrase", f"fact:{subject}#{i}", text, variant="paraphrase"))
                sims.append(similarity(text, value))
                n_fact_para += 1
                if subject in ("home city", "所在地") and len(examples) < 6 and not any(s == value for s, _ in examples):
                    examples.append((value, text))
    for day in days:
        day.events.sort(key=lambda ev: hour_of(ev.kind))  # stable: the hour slots in order
        for ev in day.events:
            truth[fold(ev.text)].add(ev.key)
    # Canaries: set aside, never asked during the life; the rest feed the evening recalls.
    pool = [(conv, q) for conv in convs for q in conv.questions]
    rng.shuffle(pool)
    per_conv = max(1, n_canaries // len(convs))
    canaries: list[Canary] = []
    taken: Counter = Counter()
    rest: list[tuple[int, str]] = []
    for conv, q in pool:
        ev = [f"{conv.sample_id}/{e}" for e in q.evidence]
        ready = max(written_on[e] for e in ev)
        if taken[conv.sample_id] < per_conv and len(canaries) < n_canaries:
            canaries.append(Canary(q.question, q.category, ev, ready))
            taken[conv.sample_id] += 1
        else:
            rest.append((ready, q.question))
    fact_q = [(s, q) for s, q, _ in FACTS]
    for d, day in enumerate(days):
        ready = [q for r, q in rest if r < d]
        day.questions = rng.sample(ready, min(RECALLS_PER_DAY, len(ready)))
        said = [q for s, q in fact_q if facts[s][0] <= d]
        if said:
            day.questions.append(rng.choice(said))
    return Stream(days, canaries, facts, len(turn_text), n_repeats, n_fact_repeats, [c.sample_id for c in convs],
                  {t: frozenset(k) for t, k in truth.items()}, paraphrased, n_para, n_fact_para, sims, examples)


# ---- the scripted model ----------------------------------------------------------------------

_SPEAKER = re.compile(r"^([^\W\d_][\w .'-]{0,30}?): (.*)$", re.S)


def split_speaker(text: str) -> tuple[str, str]:
    m = _SPEAKER.match(text)
    return (m.group(1), m.group(2)) if m else ("", text)


def merged_text(texts: list[str], max_chars: int) -> str | None:
    """A text made only of the sources' words: the longest source if it holds every content word
    and number of the others, else the sources joined with "; " (one speaker prefix if shared)."""
    want_words = set().union(*(content_words(t) for t in texts))
    want_nums = set().union(*(numbers(t) for t in texts))
    for t in sorted(texts, key=lambda t: (-len(t), t)):
        if content_words(t) >= want_words and numbers(t) >= want_nums:
            return t
    parts = [split_speaker(t) for t in texts]
    speakers = {s.casefold() for s, _ in parts}
    if len(speakers) == 1 and parts[0][0]:
        text = f"{parts[0][0]}: " + "; ".join(r.strip() for _, r in parts)
    else:
        text = "; ".join(t.strip() for t in texts)
    return text if len(text) <= max_chars else None


_NAME = re.compile(r"(?<=[\s(,;:])[A-Z][\w.'-]+")


def restatement_text(texts: list[str], max_chars: int) -> str | None:
    """One text for restatements of one fact, made only of the sources' words: the longest
    source, then any number or capitalised name another source has and it lacks, in brackets."""
    base = sorted(texts, key=lambda t: (-len(t), t))[0]
    have_nums, have_words = numbers(base), {w.casefold() for w in re.findall(r"[\w.'-]+", base)}
    extra: list[str] = []
    for t in texts:
        for x in sorted(numbers(t) - have_nums) + [w for w in _NAME.findall(t) if w.casefold() not in have_words and w.casefold() not in EN_STOPWORDS]:
            if x not in extra:
                extra.append(x)
    text = base if not extra else f"{base} ({', '.join(extra)})"
    return text if len(text) <= max_chars else None


def oracle(stats: Counter, max_chars: int, truth: dict[str, frozenset[str]], greedy: bool = False):  # type: ignore[no-untyped-def]
    """The deep phase's model. The oracle (run C) knows the ground truth (`Stream.truth`: which
    fact each text says): in each group it is shown, it merges the memories that say the same
    fact (restatements of it) into `restatement_text`, and never joins two facts. `greedy` (a
    diagnostic, run D) joins every group it is shown instead, as far as the text fits: the most
    the deep phase's cage lets a model fold."""

    seen: set[tuple[str, ...]] = set()
    known = dict(truth)  # grows with the texts of the merges it proposes

    def answer(req: dict) -> str:
        msgs = req.get("messages") or []
        if len(msgs) < 2 or "consolidate" not in str(msgs[0].get("content", ""))[:80]:
            stats["other requests"] += 1
            return json.dumps({"operations": []})
        payload = json.loads(msgs[1]["content"])
        ops = []
        stats["requests"] += 1
        for g in payload.get("groups", []):
            mems = [(m["id"], m["text"]) for m in g.get("memories", [])]
            stats["groups"] += 1
            stats["memories shown"] += len(mems)
            sig = tuple(sorted(t for _, t in mems))
            stats["groups shown before"] += sig in seen
            seen.add(sig)
            group_ops = 0
            if greedy:
                comp = list(mems)
                text = None
                while len(comp) >= 2 and (text := merged_text([t for _, t in comp], max_chars)) is None:
                    comp = comp[:-1]  # drop the last members until the text fits
                if len(comp) >= 2 and text is not None:
                    ops.append({"op": "merge", "ids": [i for i, _ in comp], "text": text})
                    group_ops += 1
            else:
                # Classes of memories sharing a fact (a text may say two facts only if two stream
                # events had the same words: then it is both).
                keys = []
                for _, t in mems:
                    k = known.get(fold(t))
                    if k is None:
                        stats["texts unknown to the oracle"] += 1
                    keys.append(k or frozenset({f"?{t}"}))
                parent = list(range(len(mems)))

                def find(i: int) -> int:
                    while parent[i] != i:
                        parent[i] = parent[parent[i]]
                        i = parent[i]
                    return i

                for i in range(len(mems)):
                    for j in range(i + 1, len(mems)):
                        if keys[i] & keys[j]:
                            parent[find(j)] = find(i)
                classes: dict[int, list[int]] = defaultdict(list)
                for i in range(len(mems)):
                    classes[find(i)].append(i)
                for members in classes.values():
                    if len(members) < 2:
                        continue
                    text = restatement_text([mems[i][1] for i in members], max_chars)
                    if text is None:
                        stats["declined: too long"] += 1
                        continue
                    known[fold(text)] = frozenset().union(*(keys[i] for i in members))
                    ops.append({"op": "merge", "ids": [mems[i][0] for i in members], "text": text})
                    stats["sources proposed"] += len(members)
                    group_ops += 1
            if not group_ops:
                stats["groups left alone"] += 1
        stats["merges proposed"] += len(ops)
        return json.dumps({"operations": ops}, ensure_ascii=False)

    return answer


def strongest_first_clusters(items, declined=frozenset()):  # type: ignore[no-untyped-def]
    """Run E's stand-in for `memdream.dream.deep.clusters` (patched in this process for that run
    only): the same neighbours, group size and declined groups, but the seeds taken by the
    strength of their best link (then their size) instead of by how many neighbours they have.
    A diagnostic of the library's seed order, not a proposal of its code."""
    df = Counter(t for _, toks in items for t in toks)
    postings: dict[str, list[int]] = {}
    for i, (_, toks) in enumerate(items):
        for t in toks:
            if df[t] <= deep_module.COMMON_DF:
                postings.setdefault(t, []).append(i)
    by_subject: dict[str, list[int]] = {}
    for i, (e, _) in enumerate(items):
        if e.subject:
            by_subject.setdefault(e.subject, []).append(i)
    neighbours: list[list[tuple[float, int]]] = []
    for i, (e, toks) in enumerate(items):
        near: dict[int, float] = {}
        for t in toks:
            for j in postings.get(t, ()):
                if j != i and j not in near:
                    other = items[j][1]
                    shared = len(toks & other)
                    near[j] = shared / min(len(toks), len(other)) if shared >= deep_module.RELATED_MIN_SHARED else 0.0
        for j in by_subject.get(e.subject, []) if e.subject else []:
            if j != i:
                near[j] = max(near.get(j, 0.0), 1.0)
        neighbours.append(sorted(((sc, j) for j, sc in near.items() if sc >= deep_module.RELATED), key=lambda sj: (-sj[0], sj[1])))
    order = sorted(range(len(items)), key=lambda i: (-(neighbours[i][0][0] if neighbours[i] else 0.0), -len(items[i][1]), i))
    taken: set[int] = set()
    out: list[list[int]] = []
    for i in order:
        if len(out) >= deep_module.MAX_CLUSTERS:
            break
        if i in taken:
            continue
        group = [i] + [j for _, j in neighbours[i] if j not in taken][: deep_module.MAX_CLUSTER_SIZE - 1]
        if len(group) < 2:
            continue
        taken.update(group)
        if deep_module.fingerprint([items[k][0] for k in group]) in declined:
            continue
        out.append(group)
    return out


# ---- one run -------------------------------------------------------------------------------


@dataclass
class Snapshot:
    day: int
    entries: int
    resident: int
    dup_ratio: float
    dups: int
    chars: int
    archive: int
    lines: int  # lines in MEMORY.md and memory/recall/, ended ones included (what a person reads)
    resident_chars: int
    redundant: int  # live entries that could go without losing a fact (ground truth: each of their keys held by another)
    out_of_reach: int  # live entries the deep phase never folds: resident, or recalled PROTECTED_HITS times
    subject_lines: tuple[int, int]  # current lines with a subject: out of deep's reach / all
    canary: dict[str, tuple[float, int, float]]  # ranking -> (mean R@10, n questions, mean turns the top 10 stand for)
    per_question: dict[tuple[str, str], tuple[float, list[str]]] = field(default_factory=dict)  # (ranking, q) -> (R@10, hits)


@dataclass
class RunResult:
    name: str
    snapshots: list[Snapshot] = field(default_factory=list)
    write: Counter = field(default_factory=Counter)  # added / duplicate / superseded / refused
    dream_s: float = 0.0
    dreams: int = 0
    light: Counter = field(default_factory=Counter)  # what the light phase did (from before/after diffs)
    deep_merged: int = 0
    deep_sources: int = 0
    deep_rejected: int = 0
    rolled_back: int = 0
    phase_status: Counter = field(default_factory=Counter)
    rejected_examples: list[str] = field(default_factory=list)
    oracle: Counter = field(default_factory=Counter)
    current_k1: int = 0
    current_ok5: int = 0  # the current value in the top 5 and no superseded value there
    cross_fact_merges: int = 0  # deep merges whose sources share no fact (ground truth)
    current_k5: int = 0
    stale_k5: int = 0
    current_misses: list[str] = field(default_factory=list)
    top5_misses: list[str] = field(default_factory=list)
    stale_hits: list[str] = field(default_factory=list)
    current_rel_k1: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


_META = re.compile(r"(?:<!--m:|;)(end|src)=([^;>\s]+)")


def entry_states(mem: Memory) -> dict[str, tuple[str, bool, str, str]]:
    """id -> (layer, currently valid, end, source); a live copy wins over an archived one.
    Read straight from the index (parsing every line through `Memory.list` each night would
    cost more than the dream)."""
    mem.sync()
    order = {"resident": 0, "recall": 1, "archive": 2}
    out: dict[str, tuple[str, bool, str, str]] = {}
    rows = mem.index.db.execute("SELECT id, layer, vt IS NULL, line FROM entries WHERE scope = ? AND id != ''", (mem.scope.key,))
    for eid, layer, cur, line in rows:
        meta = dict(_META.findall(line))
        st = (layer, bool(cur), meta.get("end", ""), meta.get("src", ""))
        if eid not in out or order.get(layer, 3) < order.get(out[eid][0], 3):
            out[eid] = st
    return out


def diff_light(before: dict, after: dict) -> Counter:
    c: Counter = Counter()
    for eid, (layer, cur, _end, _src) in before.items():
        a = after.get(eid)
        if a is None:
            c["vanished"] += 1
            continue
        if layer == "recall" and a[0] == "resident":
            c["promoted"] += 1
        elif layer == "resident" and a[0] == "recall":
            c["demoted"] += 1
        elif layer != "archive" and a[0] == "archive":
            if not cur:
                c["archived (already ended)"] += 1
            elif a[2] == "merged":
                c["archived (near-duplicate)"] += 1
            else:
                c["archived (stale)"] += 1
        elif cur and not a[1] and a[2] == "merged":
            c["merged away (deep)"] += 1
    c["new (deep merge)"] += sum(1 for eid, a in after.items() if eid not in before and a[3] == "dream")
    return c


def children_of(mem: Memory) -> dict[str, set[str]]:
    """Entry id -> the ids of the entries whose `superseded_by` names it (merged into it)."""
    children: dict[str, set[str]] = defaultdict(set)
    for e in mem.list(include_ended=True):
        if e.superseded_by and e.superseded_by != e.id:
            children[e.superseded_by].add(e.id)
    return children


def origins(mem: Memory, own: dict[str, set[str]], children: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Entry id -> the stream keys it stands for: its own, and those of every entry whose
    `superseded_by` names it (a merge, or a near-duplicate folded by the light phase)."""
    if children is None:
        children = children_of(mem)
    memo: dict[str, set[str]] = {}

    def keys(eid: str, seen: frozenset = frozenset()) -> set[str]:
        if eid in memo:
            return memo[eid]
        out = set(own.get(eid, ()))
        for c in children.get(eid, ()):
            if c not in seen:
                out |= keys(c, seen | {eid})
        memo[eid] = out
        return out

    for eid in set(own) | set(children):
        keys(eid)
    return memo


def duplicate_count(texts: list[str]) -> int:
    """How many texts are a near-duplicate (either direction) of another one (all pairs)."""
    bg = [bigrams(t) for t in texts]
    n = len(texts)
    dup = [False] * n
    for i in range(n):
        bi = bg[i]
        li = len(bi)
        if not li:
            continue
        for j in range(i + 1, n):
            bj = bg[j]
            lj = len(bj)
            if not lj or min(li, lj) / max(li, lj) <= 0.65:
                continue  # Jaccard cannot exceed the ratio of the sizes
            inter = len(bi & bj)
            if inter / (li + lj - inter) <= 0.65:
                continue
            if is_duplicate(texts[i], texts[j]) or is_duplicate(texts[j], texts[i]):
                dup[i] = dup[j] = True
    return sum(dup)


def quiet_recall(mem: Memory, query: str, k: int, rank_by: str = "score"):  # type: ignore[no-untyped-def]
    """`Memory.recall` without counting the hits: measuring must not change the life."""
    mem.hit_flush_after = 10**9
    try:
        return mem.recall(query, k=k, rank_by=rank_by)
    finally:
        mem.hit_journal.path.unlink(missing_ok=True)
        mem.hit_flush_after = 1


def canary_recall(mem: Memory, canaries: list[Canary], keys_of: dict[str, set[str]], own: dict, day: int, rank_by: str,
                  detail: dict | None = None) -> tuple[float, int, float]:
    ready = [c for c in canaries if c.ready_day < day]
    if not ready:
        return float("nan"), 0, float("nan")
    total, turns = 0.0, 0
    for c in ready:
        hits = quiet_recall(mem, c.question, K, rank_by)
        flat = [k for h in hits for k in sorted(keys_of.get(h.entry.id, own.get(h.entry.id, ()))) if not k.startswith("fact:")]
        r = locomo.turn_recall(flat, c.evidence, len(flat)) if flat else 0.0
        total += r
        turns += len(flat)
        if detail is not None:
            gold = set(c.evidence)
            detail[(rank_by, c.question)] = (r, [
                f"{'*' if gold & keys_of.get(h.entry.id, set()) else ' '} {h.score:.3f} {h.entry.source or '-':5} "
                f"{h.entry.created_at:%m-%d} {h.text[:90]}" for h in hits
            ])
    return total / len(ready), len(ready), turns / len(ready)


def snapshot(mem: Memory, day: int, stream: Stream, own: dict) -> Snapshot:
    live = mem.list()
    texts = [e.text for e in live]
    keys_of = origins(mem, own)

    def reach(e) -> bool:  # type: ignore[no-untyped-def]
        return e.layer != "recall" or e.hits >= deep_module.PROTECTED_HITS

    dups = duplicate_count(texts)
    holders = Counter(k for e in live for k in keys_of.get(e.id, own.get(e.id, ())))
    # Greedy, fewest keys first: an entry is redundant when every fact it says is still said by
    # another live entry once the redundant ones before it are gone.
    left = Counter(holders)
    redundant = 0
    for e in sorted(live, key=lambda e: (len(keys_of.get(e.id, own.get(e.id, ()))), e.id)):
        ks = keys_of.get(e.id, own.get(e.id, set()))
        if ks and all(left[k] > 1 for k in ks):
            redundant += 1
            for k in ks:
                left[k] -= 1
    (lines,) = mem.index.db.execute(
        "SELECT count(*) FROM entries WHERE scope = ? AND layer IN ('resident', 'recall')", (mem.scope.key,)
    ).fetchone()
    detail: dict = {}
    canary = {rb: canary_recall(mem, stream.canaries, keys_of, own, day, rb, detail) for rb in ("relevance", "score")}
    return Snapshot(
        day,
        len(live),
        sum(1 for e in live if e.layer == "resident"),
        dups / len(live) if live else 0.0,
        dups,
        sum(len(t) for t in texts),
        len(mem.list("archive", include_ended=True)),
        int(lines),
        sum(len(e.text) for e in live if e.layer == "resident"),
        redundant,
        sum(1 for e in live if reach(e)),
        (sum(1 for e in live if e.subject and reach(e)), sum(1 for e in live if e.subject)),
        canary,
        detail,
    )


EMBEDDER = None  # --embedder: every run's Memory gets this embedder (dense recall, restatement folds)


def write_day(mem: Memory, clock: FrozenClock, d: int, day: Day):  # type: ignore[no-untyped-def]
    """Write day `d`'s events at their hours, 5 s apart; yields (event, outcome), the outcome
    None for a refused write (bench/restatement_cosine.py replays the writes the same way)."""
    base = START + timedelta(days=d)
    for n, ev in enumerate(day.events):
        clock.set(base + timedelta(hours=hour_of(ev.kind), seconds=5 * n))
        try:
            # Restatements carry no subject (subject=None: as an agent's fragment; none of them
            # has one the write path could read off, see `distinct`).
            yield ev, mem.write(ev.text, type="fact" if ev.kind in ("turn", "repeat", "paraphrase") else None, subject=ev.subject or None)
        except (SecretRefused, RefusedInput):
            yield ev, None


def run_life(name: str, stream: Stream, root: Path, seed: int, checkpoints: set[int], server: FakeLLMServer | None) -> RunResult:
    res = RunResult(name)
    t_run = time.perf_counter()
    core_module._random = random.Random(seed)  # deterministic entry ids (this process only)
    phases = list(RUNS[name])
    clock = FrozenClock(START)
    llm = OpenAICompatLLM(server.base_url, "fake", retries=1) if server is not None else None
    mem = Memory(load_config(root, "me", "main", env={}), clock, llm=llm, embedder=EMBEDDER)
    mem.vault.init()
    mem.hit_flush_after = 1
    if server is not None:
        server.default = oracle(res.oracle, mem.config.max_text_chars, stream.truth, greedy=name == "D")
    own: dict[str, set[str]] = defaultdict(set)
    for d, day in enumerate(stream.days):
        base = START + timedelta(days=d)
        for ev, out in write_day(mem, clock, d, day):
            if out is None:
                res.write[f"{ev.kind}: refused"] += 1
                continue
            res.write[f"{ev.kind}: {out.action}"] += 1
            own[out.entry.id].add(ev.key)
        clock.set(base + timedelta(hours=20))
        for q in day.questions:
            mem.recall(q, k=K)
            clock.advance(seconds=30)
        if phases:
            clock.set(base + timedelta(hours=23))
            before = entry_states(mem)
            t0 = time.perf_counter()
            rep = mem.dream(phases, force=False)  # as the scheduler runs it (dream/schedule.py): declined groups are not shown again
            res.dream_s += time.perf_counter() - t0
            res.dreams += 1
            res.light += diff_light(before, entry_states(mem))
            for p in rep.phases:
                res.phase_status[f"{p.phase}: {p.status}"] += 1
                if p.status == "rolled back":
                    res.rolled_back += 1
                if p.phase == "deep":
                    if p.status == "applied":
                        res.deep_merged += p.changes
                    res.deep_rejected += len(p.rejected)
                    res.rejected_examples += [f"{r['what']}: {r['why']}" for r in p.rejected][: max(0, 5 - len(res.rejected_examples))]
        if d + 1 in checkpoints:
            clock.set(base + timedelta(hours=23, minutes=45))
            res.snapshots.append(snapshot(mem, d + 1, stream, own))
            s = res.snapshots[-1]
            print(f"[life] {name} day {d + 1}: {s.entries} live entries, {s.resident} resident, dup {s.dup_ratio:.1%}, "
                  f"canary R@10 rel {s.canary['relevance'][0]:.3f} score {s.canary['score'][0]:.3f} (n={s.canary['score'][1]})",
                  file=sys.stderr, flush=True)
    res.light["new (deep merge)"] = res.light.get("new (deep merge)", 0)
    res.deep_sources = res.light.get("merged away (deep)", 0)
    # Current values, at the end of the last day.
    children = children_of(mem)
    keys_of = origins(mem, own, children)
    # Deep merges that joined different facts: no stream key common to all their sources.
    for e in mem.list(include_ended=True):
        if e.source == "dream" and children.get(e.id):
            sets = [keys_of.get(c, own.get(c, set())) for c in children[e.id]]
            res.cross_fact_merges += not set.intersection(*map(set, sets))
    for subject, question, values in FACTS:
        latest = f"fact:{subject}#{len(values) - 1}"
        stale = {f"fact:{subject}#{i}" for i in range(len(values) - 1)}
        top = quiet_recall(mem, question, 1)
        top5 = quiet_recall(mem, question, 5)
        rel1 = quiet_recall(mem, question, 1, "relevance")
        k_of = lambda h: keys_of.get(h.entry.id, own.get(h.entry.id, set()))  # noqa: E731
        ok1 = bool(top) and latest in k_of(top[0])
        res.current_k1 += ok1
        res.current_rel_k1 += bool(rel1) and latest in k_of(rel1[0])
        res.current_k5 += any(latest in k_of(h) for h in top5)
        res.stale_k5 += any(k_of(h) & stale for h in top5)
        res.current_ok5 += any(latest in k_of(h) for h in top5) and not any(k_of(h) & stale for h in top5)
        if not any(latest in k_of(h) for h in top5):
            res.top5_misses.append(question)
        for h in top5:
            for key in sorted(k_of(h) & stale):
                value = values[int(key.rsplit("#", 1)[1])]
                res.stale_hits.append(f"\"{question}\" finds \"{h.text[:80]}\" (subject {h.entry.subject!r}, source {h.entry.source!r}), "
                                      f"which says the superseded \"{value}\"")
        if not ok1:
            res.current_misses.append(f"{question} -> {top[0].text[:70] if top else '(nothing)'}")
    res.stats = mem.stats()
    mem.close()
    res.seconds = time.perf_counter() - t_run
    return res


# ---- report --------------------------------------------------------------------------------


def goal(ok: bool) -> str:
    return "met" if ok else "**not met**"


def render(results: dict[str, RunResult], stream: Stream, args: argparse.Namespace, cmd: str, seconds: float) -> str:
    A = results["A"]
    last = {n: r.snapshots[-1] for n, r in results.items()}
    a = last["A"]
    n_facts = len(FACTS)
    n_values = sum(len(v) for _, _, v in FACTS)
    n_zh = sum(1 for s, _, _ in FACTS if re.search(r"[\u4e00-\u9fff]", s))
    n_rest = stream.n_paraphrases + stream.n_fact_paraphrases
    n_rep = sum(stream.n_repeats.values()) + stream.n_fact_repeats
    n_writes = stream.n_turns + n_values + n_rep + n_rest
    ceiling = a.redundant / a.entries
    sims = stream.paraphrase_sim

    def red(x: Snapshot) -> float:
        return x.redundant / x.entries if x.entries else 0.0

    def pct(n: str, x: float, y: float) -> str:
        return "" if n == "A" else f" ({x / y - 1:+.1%})"

    lines = [
        REPORT_START,
        "## A 90-day simulated life, with and without dreaming (issue: dreaming)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}; run on {datetime.now():%Y-%m-%d}, {seconds:.0f} s in all." + (f" {args.note}" if args.note else ""),
        "",
        f"Method: one seeded stream (seed {args.seed}) played into fresh vaults (one per run) on a frozen clock, {len(stream.days)} simulated days. "
        f"09:00: the {stream.n_turns} turns of LoCoMo {', '.join(stream.convs)} spread evenly over the days (one memory per turn, "
        f"`write(turn.memory(), type=\"fact\")`, conversations interleaved). 12:00: {sum(stream.n_repeats.values())} earlier turns said again on about "
        f"{REPEAT_DAY_SHARE:.0%} of the days (verbatim, trailing \"!\", lower- or upper-cased: the write path folds these), and the "
        "restatements of turns (below). 13:00: "
        f"{n_facts} personal facts with a subject ({n_facts - n_zh} English, {n_zh} Chinese) taking {n_values} values over time (each change "
        f"`remember(text, subject=S)` supersedes the old value), the current value said again {stream.n_fact_repeats} times, and the restatements "
        f"of facts. 20:00: {RECALLS_PER_DAY} LoCoMo questions whose evidence is already remembered plus one personal-fact question, recalled with "
        "k=10, hits folded into the files at once (`hit_flush_after = 1`). 23:00: the dream, as the scheduler runs it "
        "(`dream(phases, force=False)`: a group the model declined is not shown again). "
        "A never dreams; B runs `[\"light\"]`; C runs `[\"light\", \"deep\"]` against `FakeLLMServer` through the production client, "
        "answered by a scripted oracle that knows the ground truth (which fact each text says): in each group it is shown it merges the "
        "memories that say the same fact into the longest of them (plus, in brackets, any number or name another one has and it lacks, so the "
        "engine's grounding check passes) and never joins two facts. D, a diagnostic, is C with a greedy model that joins every group it is "
        "shown (dropping the last members until the text fits in 2,000 characters): the most the deep phase's limits (4 groups of at most 8 "
        "entries a night, recall-layer entries older than 4.5 days and recalled fewer than 3 times) let any model fold. E, a diagnostic, is C "
        "with the deep phase's grouping replaced in this process: groups seeded by the unweighted strength of their best link (the share "
        "of tokens two lines share; `strongest_first_clusters`), to compare with the library's own grouping (seeded by the strongest link "
        "weighted by the rarity of the shared words).",
        "",
        f"Restatements (the share of paraphrases; the reduction measured below depends on it): agents say the same fact again in other "
        f"words, which bigram dedup (similarity > 0.65) does not fold. `PARAPHRASED_TURN_SHARE = {PARAPHRASED_TURN_SHARE:.2f}` of the "
        f"remembered turns (drawn among the turns holding a first-person statement) are restated "
        f"{RESTATEMENTS[0]}-{RESTATEMENTS[1]} times on later days: {stream.paraphrased_turns} turns ({stream.paraphrased_turns / stream.n_turns:.1%}), "
        f"{stream.n_paraphrases} restatements; and each personal-fact value {RESTATEMENTS[0]}-{RESTATEMENTS[1]} times while it holds: "
        f"{stream.n_fact_paraphrases} restatements. In all {n_rest} restatements, {n_rest / n_writes:.1%} of the {n_writes:,} memories written. "
        "They are built without a model (seeded): a turn's longest first-person statement in the third person with the speaker named, some "
        "words swapped for synonyms; the same as \"Speaker mentioned that they ...\"; or a terse note of its content words; a fact value "
        "through scripted templates in its language (\"I live in Hangzhou\" -> \"Hangzhou is the city I live in\", \"Lives in Hangzhou now\"; "
        "我在余杭区 -> 住在余杭区, 余杭区是我现在住的地方). Only wordings with bigram similarity at most 0.65 to the source and to each other are kept "
        f"(mean {sum(sims) / len(sims):.2f}, max {max(sims):.2f}), and none carries a subject (written with `subject=None`; none has one the write "
        "path can read off). A ground-truth map (text -> fact) scores them. Examples: "
        + "; ".join(f"\"{src[:90]}\" -> \"{r}\"" for src, r in stream.examples[:2] + stream.examples[3:4]) + ". "
        f"The ceiling: {a.redundant} of A's {a.entries:,} live entries only say again what another one says, so folding every restatement into "
        f"its source would leave {ceiling:.1%} fewer entries: that ceiling, and any reduction a dream can show here, scales with the share of restatements.",
        "",
        f"Measures, at the end of days {', '.join(str(s.day) for s in A.snapshots)}: live entries (current, resident + recall: `Memory.list()`); lines in MEMORY.md and "
        "memory/recall/ including ended ones (what a person reads there: the light phase moves ended lines to the archive); near-duplicates "
        "(live entries that are `is_duplicate` of another, either direction, all pairs) and redundant entries (ground truth: entries that "
        "could go without losing a fact, every fact they say being said by another live entry, counted greedily); canary turn recall@10 on "
        f"{len(stream.canaries)} LoCoMo questions (categories 1-4) set aside and never asked during the life, ranked by relevance and by the "
        "default score, over the turns the top 10 hits stand for (a restatement stands for its turn; a merged entry for every turn of its "
        "sources); measurement recalls do not count hits. Current values at day "
        f"{len(stream.days)}, per subject: `recall(question, k=5)` holds the latest value and no superseded one (a restatement counts as its "
        "value); also the top hit (`k=1`). Entry ids are seeded: the run is deterministic.",
        "",
        f"| at day {a.day} | {' | '.join(RUN_LABEL[n] for n in results)} |",
        "| --- | " + " | ".join("---:" for _ in results) + " |",
    ]

    def row(label: str, fn) -> None:  # type: ignore[no-untyped-def]
        lines.append(f"| {label} | " + " | ".join(fn(n, r) for n, r in results.items()) + " |")

    deep_runs = [n for n in results if "deep" in RUNS[n]]
    row("live entries (resident + recall)", lambda n, r: f"{last[n].entries:,}{pct(n, last[n].entries, a.entries)}")
    row("lines in MEMORY.md + memory/recall/, ended ones included", lambda n, r: f"{last[n].lines:,}{pct(n, last[n].lines, a.lines)}")
    row("near-duplicate share of live entries (`is_duplicate`)", lambda n, r: f"{last[n].dup_ratio:.2%} ({last[n].dups})")
    row("redundant live entries (ground truth: every fact they say said by another)", lambda n, r: f"{red(last[n]):.1%} ({last[n].redundant})")
    row(f"live entries deep never folds (resident or recalled >= {deep_module.PROTECTED_HITS} times)", lambda n, r: f"{last[n].out_of_reach}")
    row("resident entries / characters", lambda n, r: f"{last[n].resident} / {last[n].resident_chars:,}")
    row("characters held by live entries", lambda n, r: f"{last[n].chars:,}{pct(n, last[n].chars, a.chars)}")
    row("archive layer (entries)", lambda n, r: f"{last[n].archive:,}")
    row(f"current value in the top 5, no superseded one there ({n_facts} subjects)", lambda n, r: f"{r.current_ok5}/{n_facts}")
    row("... subjects with a superseded value in the top 5", lambda n, r: f"{r.stale_k5}")
    row("... current value in the top 5 / at k=1 / at k=1 by relevance", lambda n, r: f"{r.current_k5} / {r.current_k1} / {r.current_rel_k1}")
    row(f"canary turn R@10, relevance (n={a.canary['relevance'][1]})", lambda n, r: f"{last[n].canary['relevance'][0]:.3f}" + ("" if n == "A" else f" ({last[n].canary['relevance'][0] - a.canary['relevance'][0]:+.3f})"))
    row(f"canary turn R@10, default score (n={a.canary['score'][1]})", lambda n, r: f"{last[n].canary['score'][0]:.3f}" + ("" if n == "A" else f" ({last[n].canary['score'][0] - a.canary['score'][0]:+.3f})"))
    row("turns the top 10 hits stand for (mean, default score)", lambda n, r: f"{last[n].canary['score'][2]:.1f}")
    row(f"restatements written as new entries (of {n_rest})", lambda n, r: f"{r.write['paraphrase: added'] + r.write['fact-paraphrase: added']}")
    row(f"repeats folded by the write path (of {n_rep})", lambda n, r: f"{r.write['repeat: duplicate'] + r.write['fact-repeat: duplicate']}")
    row(f"fact changes superseding the old value at write (of {n_values - n_facts})", lambda n, r: f"{r.write['fact: superseded']}")
    row("dream time, all nights (s)", lambda n, r: "-" if not r.dreams else f"{r.dream_s:.1f} ({r.dream_s / r.dreams * 1000:.0f} ms/night)")
    row("promoted to resident / demoted", lambda n, r: "-" if not r.dreams else f"{r.light['promoted']} / {r.light['demoted']}")
    row("archived: ended (superseded, merged) / near-duplicate / stale", lambda n, r: "-" if not r.dreams else f"{r.light['archived (already ended)']} / {r.light['archived (near-duplicate)']} / {r.light['archived (stale)']}")
    row("deep merges proposed / accepted (sources) / rejected", lambda n, r: "-" if n not in deep_runs else f"{r.oracle['merges proposed']} / {r.deep_merged} ({r.deep_sources}) / {r.deep_rejected}")
    row("deep merges joining different facts (ground truth)", lambda n, r: "-" if n not in deep_runs else f"{r.cross_fact_merges}")
    row("deep: groups shown to the model / left alone / shown before", lambda n, r: "-" if n not in deep_runs else f"{r.oracle['groups']} / {r.oracle['groups left alone']} / {r.oracle['groups shown before']}")
    row("phases rolled back", lambda n, r: "-" if not r.dreams else f"{r.rolled_back}")
    lines += ["", "Over the life (canary R@10 on the canaries whose evidence was written by then):", "",
              "| day | " + " | ".join(f"{n}: entries / lines / redundant / R@10 rel / R@10 score" for n in results) + " |",
              "| ---: | " + " | ".join("---:" for _ in results) + " |"]
    for i, s in enumerate(A.snapshots):
        cells = []
        for n, r in results.items():
            x = r.snapshots[i]
            cells.append(f"{x.entries:,} / {x.lines:,} / {red(x):.1%} / {x.canary['relevance'][0]:.3f} / {x.canary['score'][0]:.3f}")
        lines.append(f"| {s.day} (n={s.canary['score'][1]}) | " + " | ".join(cells) + " |")
    # Goals: B and C against A (D is a diagnostic).
    B, C = last["B"], last["C"]
    Br, Cr = results["B"], results["C"]
    never_lower = {
        n: all(results[n].snapshots[i].canary[rb][0] >= A.snapshots[i].canary[rb][0] - 1e-9 for i in range(len(A.snapshots)) for rb in ("relevance", "score"))
        for n in ("B", "C")
    }
    cut = {n: 1 - last[n].entries / a.entries for n in results}
    cut_lines = {n: 1 - last[n].lines / a.lines for n in results}
    d_never_lower = "D" in results and all(
        results["D"].snapshots[i].canary[rb][0] >= A.snapshots[i].canary[rb][0] - 1e-9 for i in range(len(A.snapshots)) for rb in ("relevance", "score")
    )
    lines += [
        "",
        "Goals (B and C against A; D is a diagnostic, not a goal run):",
        "",
        f"- >= 30% fewer entries: live entries B {cut['B']:.1%}, C {cut['C']:.1%}" + (f" (D {cut['D']:.1%})" if "D" in cut else "")
        + f"; lines in the live files B {cut_lines['B']:.1%}, C {cut_lines['C']:.1%}; ceiling with this paraphrase share {ceiling:.1%}: "
        + f"{goal(max(cut['B'], cut['C']) >= 0.30)}" + (" (out of reach at this share even for a dream that folded every restatement)" if ceiling < 0.30 else "") + ".",
        f"- < 2% duplicates: near-duplicates A {a.dup_ratio:.2%}, B {B.dup_ratio:.2%}, C {C.dup_ratio:.2%}: {goal(max(B.dup_ratio, C.dup_ratio) < 0.02)} "
        f"as measured by `is_duplicate`, which by construction does not see restatements; by ground truth, redundant live entries are "
        f"A {red(a):.1%}, B {red(B):.1%}, C {red(C):.1%}: {goal(max(red(B), red(C)) < 0.02)}.",
        f"- 100% current values (the latest value in the top 5 and no superseded one there): A {A.current_ok5}/{n_facts}, "
        f"B {Br.current_ok5}/{n_facts}, C {Cr.current_ok5}/{n_facts} (at k=1: {A.current_k1}, {Br.current_k1}, {Cr.current_k1}): "
        f"{goal(all(results[n].current_ok5 == n_facts for n in ('B', 'C')))}.",
        f"- canary recall never lower than A (both rankings, days {', '.join(str(s.day) for s in A.snapshots)}): "
        + ", ".join(f"{n} {goal(ok)}" for n, ok in never_lower.items()) + ".",
    ]
    # What drives the results (figures from this run).
    rest_added = A.write["paraphrase: added"] + A.write["fact-paraphrase: added"]
    lines += [
        "",
        "What drives these figures:",
        "",
        f"- Entries: the write path folds {A.write['repeat: duplicate'] + A.write['fact-repeat: duplicate']} of the {n_rep} verbatim/case "
        f"repeats, but {rest_added} of the {n_rest} restatements become entries of their own"
        + ("" if rest_added == n_rest else f" ({n_rest - rest_added} met a near-duplicate among other entries)") + ", so A's "
        f"redundant share is {red(a):.1%}. The light phase folds none of them (they are not near-duplicates; it folded "
        f"{Br.light['archived (near-duplicate)']} in B) and its stale rule needs 180 idle days for a fact, longer than the life: B holds as "
        f"many live entries as A, and only its lines fall ({cut_lines['B']:.1%}: ended lines move to the archive). C's oracle folds every "
        f"restatement it is shown next to its source, without error ({Cr.cross_fact_merges} merges joined different facts, "
        f"{Cr.deep_rejected} rejected by the engine), but it is shown few: {Cr.oracle['groups']} groups over the life, "
        f"{Cr.oracle['groups left alone']} of them holding no two memories of one fact, hence {Cr.deep_merged} merges ({Cr.deep_sources} sources) "
        f"and {cut['C']:.1%} fewer entries against a ceiling of {ceiling:.1%}. The deep phase picks its 4 groups a night greedily, from the "
        "strongest links weighted by rare words; even so most groups it shows hold no two memories of one fact (two lines of small talk "
        "naming the same person link strongly too), and at 4 groups a night it cannot reach the 326 restatements. Entries recalled 3 times or more are out of its reach too: at the last day "
        f"{C.out_of_reach} of C's {C.entries:,} live entries, {C.subject_lines[0]} of its {C.subject_lines[1]} personal-fact lines with a subject "
        "(each is asked about every few evenings)."
        + ("" if "D" not in results else (
            f" D, which joins whatever the deep phase groups, reaches {cut['D']:.0%} fewer entries by concatenation: characters held "
            f"{last['D'].chars / a.chars - 1:+.1%}, {results['D'].cross_fact_merges} merges joining different facts, each top-10 hit standing for "
            f"{last['D'].canary['score'][2]:.0f} turns on average, canary recall "
            + ("never below A" if d_never_lower else "below A at some checkpoints")
            + f", current values {results['D'].current_ok5}/{n_facts}."
        )),
        f"- Current values: every change supersedes the subject's line at write time ({A.write['fact: superseded']} of {n_values - n_facts}), "
        f"and a restatement written without a subject takes the subject of the entry stating its slot (or is folded into it), so the "
        f"next change supersedes it too, unless the write path does not recognise the slot: in A {A.stale_k5} of the {n_facts} subjects "
        f"return a superseded value in the top 5 (B {Br.stale_k5}, C {Cr.stale_k5})"
        + (f"; e.g. in A {A.stale_hits[0]}." if A.stale_hits else "."),
    ]
    if Br.rolled_back or Cr.rolled_back:
        lines.append(f"- Rollbacks: the light phase was rolled back on {Br.rolled_back} nights in B and {Cr.rolled_back} in C.")
    e_check = ""
    if "E" in results:
        Er = results["E"]
        e_check = (
            f"Run E, seeded by the unweighted strength of the best link instead, makes {Er.deep_merged} merges "
            f"({Er.deep_sources} sources, {Er.cross_fact_merges} joining different facts): {cut['E']:.1%} fewer live entries, redundant share "
            f"{red(last['E']):.1%}, current values {Er.current_ok5}/{n_facts}, canary R@10 {last['E'].canary['relevance'][0]:.3f} by relevance and "
            f"{last['E'].canary['score'][0]:.3f} by score (A {a.canary['relevance'][0]:.3f}, {a.canary['score'][0]:.3f}); {Er.oracle['groups left alone']} "
            f"of its {Er.oracle['groups']} groups still hold no two memories of one fact (a strongest link is often two short lines sharing two words)."
        )
    lines += [
        "",
        "Library issues this run exposes:",
        "",
        "1. Grouping (`clusters`, `src/memdream/dream/deep.py`): the first version of this benchmark found the groups seeded from the "
        "entries with the most related neighbours, so hubs of small talk took the 4 groups a night (12 merges over the life). The library "
        "now seeds from the strongest link weighted by rare words (run C). "
        + e_check,
        "2. Supersession is by subject only: `remember(\"I live in Shanghai\", subject=\"home city\")` ends the subject's line, but a "
        "restatement written earlier without a subject (\"Lives in Hangzhou now\") stays current and is recalled with the new value "
        "(ranked above it in a vault holding just these lines). The light phase has no rule for it and deep only merges what it is shown, before the change.",
    ]
    lines.append(REPORT_END)
    return "\n".join(lines) + "\n"


def diagnose(results: dict[str, RunResult]) -> None:
    """Every canary a dreaming run answers worse than A at some checkpoint, with both top-10 lists
    (* = a hit holding an evidence turn; score, source, creation date, text)."""
    A = results["A"]
    for n, r in results.items():
        if n == "A":
            continue
        for sa, sx in zip(A.snapshots, r.snapshots):
            for key, (ra, hits_a) in sa.per_question.items():
                rx, hits_x = sx.per_question.get(key, (ra, []))
                if rx < ra - 1e-9:
                    print(f"\n[diagnose] {n} day {sx.day} {key[0]}: R@10 {ra:.2f} -> {rx:.2f}: {key[1]}", file=sys.stderr)
                    for label, hits in (("A", hits_a), (n, hits_x)):
                        for h in hits:
                            print(f"    {label} {h}", file=sys.stderr)


# ---- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    ap.add_argument("--quick", action="store_true", help="one conversation, 45 days, 25 canaries, no run D")
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--convs", type=int, default=2, help="LoCoMo conversations spread over the days (the first N)")
    ap.add_argument("--canaries", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--diagnose", action="store_true", help="print (stderr) every canary a dreaming run answers worse than A, with its hits")
    ap.add_argument("--no-greedy", action="store_true", help="skip the diagnostic run D (a model that joins every group)")
    ap.add_argument("--no-diagnostics", action="store_true", help="skip the diagnostic runs D and E")
    ap.add_argument("--report", default="", help="Markdown file to write the section into (between the dream-life markers)")
    ap.add_argument("--note", default="", help="A sentence about the conditions of this run, printed in the report.")
    ap.add_argument("--embedder", default="", help="give every run this embedder (e.g. use); the report goes between the dream-life-embed markers")
    args = ap.parse_args(argv)
    if args.quick:
        args.convs, args.canaries, args.days, args.no_diagnostics = 1, 25, 45, True
    global EMBEDDER
    if args.embedder:
        from memdream.embed.embedder import load_embedder

        EMBEDDER = load_embedder(args.embedder)
    t_start = time.perf_counter()
    convs = locomo.load(args.data)[: args.convs]
    stream = build_stream(convs, args.days, args.canaries, args.seed)
    checkpoints = {d for d in (args.days // 3, 2 * args.days // 3, args.days) if d > 0}
    print(f"[life] {args.days} days, {stream.n_turns} turns of {', '.join(stream.convs)}, {sum(stream.n_repeats.values())} repeats, "
          f"{sum(len(v) for _, _, v in FACTS)} fact values, {len(stream.canaries)} canaries", file=sys.stderr, flush=True)
    results: dict[str, RunResult] = {}
    with tempfile.TemporaryDirectory(prefix="memdream-life-") as tmp:
        for name in RUNS:
            if (name == "D" and args.no_greedy) or (name in DIAGNOSTICS and args.no_diagnostics):
                continue
            if "deep" in RUNS[name]:
                library_clusters = deep_module.clusters
                if name == "E":
                    deep_module.clusters = strongest_first_clusters
                try:
                    with FakeLLMServer() as srv:
                        results[name] = run_life(name, stream, Path(tmp) / name, args.seed, checkpoints, srv)
                finally:
                    deep_module.clusters = library_clusters
            else:
                results[name] = run_life(name, stream, Path(tmp) / name, args.seed, checkpoints, None)
            r = results[name]
            print(f"[life] {name}: {r.seconds:.1f} s (dreams {r.dream_s:.1f} s); writes {dict(r.write)}; light {dict(r.light)}; "
                  f"phases {dict(r.phase_status)}; oracle {dict(r.oracle)}; current k1 {r.current_k1}/{len(FACTS)}",
                  file=sys.stderr, flush=True)
            for m in r.current_misses:
                print(f"[life] {name} current-value miss: {m}", file=sys.stderr)
            for m in r.top5_misses:
                print(f"[life] {name} current value not in the top 5: {m}", file=sys.stderr)
            for m in r.stale_hits:
                print(f"[life] {name} superseded value in the top 5: {m}", file=sys.stderr)
            for x in r.rejected_examples:
                print(f"[life] {name} rejected: {x}", file=sys.stderr)
    if args.diagnose:
        diagnose(results)
    seconds = time.perf_counter() - t_start
    cmd = "python bench/dream_life.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("--note") and a != args.note
    )
    section = render(results, stream, args, cmd.strip(), seconds)
    start, end = REPORT_START, REPORT_END
    if args.embedder:
        start, end = REPORT_START.replace("dream-life", "dream-life-embed"), REPORT_END.replace("dream-life", "dream-life-embed")
        section = section.replace(REPORT_START, start).replace(REPORT_END, end).replace(
            "## A 90-day simulated life, with and without dreaming (issue: dreaming)",
            f"## The same life with the embedder `{EMBEDDER.model_id}` in every run (issue: one fact, one current memory)",
        )
    print(section)
    if args.report:
        write_report(Path(args.report), section, start, end)
    print(f"[life] done in {seconds:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
