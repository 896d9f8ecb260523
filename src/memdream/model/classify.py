"""Deterministic, bilingual heuristics of the write path (DESIGN section 5): type, subject, salience.

The caller (an agent's own LLM in a tool call) may give the type and subject; these
functions fill them in otherwise. They are pure and cheap, and err on the side of "fact".
"""

from __future__ import annotations


from functools import lru_cache

from memdream.model.entry import FACT, IDENTITY, INSTRUCTION, PREFERENCE, RULE
from memdream.model import lazyre as re

# Ordered: the first matching cue wins. Chinese cues are substrings; English ones are words.
# A rule or an instruction is something the agent is told to do: its cue counts only where it
# gives an order (below, `_orders`), not wherever the word appears. "I don't mind meeting up",
# "I'm always here for you", 我记得小时候, 我总是用 VS Code tell about the speaker; typed by
# the word alone, 190 rules and 291 instructions of LoCoMo's 5,882 chat turns were such lines,
# filed into the resident layer and lifted by a rule's importance prior.
_TYPE_CUES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        RULE,
        ("不要", "不许", "不准", "禁止", "务必", "绝不", "绝对不", "永远不", "千万不要", "别再"),
        (r"never", r"do not", r"don't", r"must not", r"mustn't", r"under no circumstances"),
    ),
    (
        INSTRUCTION,
        ("以后都", "以后请", "以后要", "今后", "每次都", "请总是", "总是用", "一律", "记得", "千万记得", "请用", "回答时"),
        (r"always", r"from now on", r"in the future", r"every time", r"make sure to", r"remember to", r"please use"),
    ),
    (
        IDENTITY,
        ("我是", "我叫", "我的名字", "本人是", "我的职业"),
        (r"i am a", r"i'm a", r"i am an", r"i'm an", r"my name is", r"call me", r"i work as"),
    ),
    (
        PREFERENCE,
        ("我喜欢", "我爱", "我偏好", "我更喜欢", "我讨厌", "我不喜欢", "喜欢用", "偏好", "习惯用", "爱吃", "不爱"),
        (r"i prefer", r"i like", r"i love", r"i hate", r"i dislike", r"i enjoy", r"my favou?rite", r"i'd rather",
         r"i(?: am|'m) an? (?:(?:big|huge|great) )?fan of"),
    ),
)
_ORDERS = (RULE, INSTRUCTION)
_EN_CUE_RE = {
    t: re.compile(r"\b(?:" + "|".join(en) + r")\b", re.IGNORECASE) for t, _, en in _TYPE_CUES if t not in _ORDERS
}
# An English order opens its clause, after at most a few words that leave it an order ("please
# never ...", "and always ...", "you must never ...", "I want you to always ...").
_EN_LEAD = r"(?:(?:please|pls|and|but|so|also|just|then|oh|ok|okay|now|you should|you must|you need to|you have to|we should|we must|i want you to|i need you to)\s+)*"
_EN_ORDER_RE = {
    t: re.compile(r"^" + _EN_LEAD + r"(?:" + "|".join(en) + r")\b", re.IGNORECASE) for t, _, en in _TYPE_CUES if t in _ORDERS
}
# ... and a time phrase ("from now on", "every time") gives an order only when no one but the
# listener does what follows ("From now on, use metric units"; not "From now on I'll work remotely").
_EN_TIME_CUE = re.compile(r"^" + _EN_LEAD + r"(?:from now on|in the future|every time)\b[\s,]*(\w+(?:'\w+)?)?", re.IGNORECASE)
_EN_NOT_LISTENER = frozenset(
    "i i'm i'll i've i'd me my we we're we'll we've our he he's his she she's her they they're their it it's its there this that".split()
)
# A Chinese order has no one but the listener before its cue in the clause (我不要香菜, 他说不要
# and 我记得 tell about someone; 上线前务必备份, 你千万不要, 以后都用中文回我 give orders).
_ZH_NOT_LISTENER = ("我", "他", "她", "它", "咱", "俺")
# A negative order about a feeling is comfort, not a standing rule: "Don't worry", "Don't
# hesitate to ask", "never mind", 不要担心, 别客气, 不要太难过 (an assistant's reassurance, typed a
# rule by its cue, was filed into the resident layer with a rule's prior).
_ZH_COMFORT = re.compile(r"^(?:太|过于|那么|这么|再)?(?:担心|着急|难过|害怕|紧张|客气|灰心|气馁|沮丧|伤心|自责|介意|在意|慌|急)")
_EN_COMFORT = re.compile(
    r"^\s*(?:(?:be|feel|get)\s+)?(?:too\s+|so\s+)?(?:worry|worried|hesitate|mind|mention it|sorry|afraid|scared|shy|nervous|sad|upset|bad|stress|panic)\b",
    re.IGNORECASE,
)
# "I'm a" tells who someone is, but not before a degree ("I'm a bit tired", "I am a little
# nervous") or a liking ("I'm a big fan of jazz": a preference); 我是说 / 我是不是 / 我是觉得 are ways
# of speaking, not who the speaker is.
_EN_NOT_IDENTITY = re.compile(r"\s*(?:bit|little|tad|lot|kind of|sort of|(?:(?:big|huge|great)\s+)?fan\b)", re.IGNORECASE)
_ZH_NOT_IDENTITY = ("我是说", "我是不是", "我是觉得", "我是想", "我是有点")
# Sentences end at these; a sentence that asks gives no standing order (还记得那次吗？).
_SENTENCE = re.compile(r"[^.。!！?？\n]+[.。!！?？]*")
_CLAUSE = re.compile(r"[^,，;；:：、…()（）\[\]【】\"“”]+")
_ASKS = ("?", "？", "吗", "呢")


# "Never" and "always" give an order only before a verb in its base form ("Never push to
# main", "Always use metric units"); a chat line drops its "I'm" or "I've" before them ("Never
# been there", "Never tried it", "Always here to help!", "Always happy to help", "always there
# for me"): typed as rules and instructions by the cue alone, 35 of LoCoMo's 104 were such lines.
_ADVERB_CUES = ("never", "always")
_NEXT_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


@lru_cache(maxsize=1)
def _verbs() -> frozenset[str]:
    from memdream.model.verbs_en import VERBS

    return frozenset(VERBS.split())


def _adverb_cue_orders(cue: str, rest: str) -> bool:
    """Does the matched English cue give an order, judged by what follows it? Only "never" and
    "always" are judged: a verb in its base form must come next ("never ever" counts once)."""
    if cue.split()[-1].lower() not in _ADVERB_CUES:
        return True
    words = _NEXT_WORD.findall(rest.lower())
    if words and words[0] == "ever":
        words = words[1:]
    return bool(words) and words[0] in _verbs()


def _order_clauses(text: str) -> list[str]:
    """The clauses of the text's sentences that do not ask (the places an order can be given)."""
    out: list[str] = []
    for m in _SENTENCE.finditer(text):
        s = m.group(0).strip()
        if not s or s.rstrip(".。!！ ").endswith(_ASKS):
            continue
        out.extend(c.strip() for c in _CLAUSE.findall(s) if c.strip())
    return out


def _orders(type_: str, zh: tuple[str, ...], clauses: list[str]) -> list[str]:
    """The clauses in which a rule's or an instruction's cue gives an order."""
    en = _EN_ORDER_RE[type_]
    found: list[str] = []
    for i, c in enumerate(clauses):
        hit = False
        for cue in zh:
            at = c.find(cue)
            if at >= 0 and not any(p in c[:at] for p in _ZH_NOT_LISTENER) and not _ZH_COMFORT.match(c[at + len(cue) :]):
                hit = True
                break
        m = None if hit else en.search(c)
        if m is not None:
            hit = _adverb_cue_orders(m.group(0), c[m.end() :]) and not (type_ == RULE and _EN_COMFORT.match(c[m.end() :]))
            if hit and type_ == INSTRUCTION:
                m = _EN_TIME_CUE.search(c)
                if m:  # "from now on" alone in its clause: the next clause says who does what follows
                    nxt = m.group(1) or (clauses[i + 1].split(" ", 1)[0] if i + 1 < len(clauses) else "")
                    hit = nxt.lower() not in _EN_NOT_LISTENER
        if hit:
            found.append(c)
    return found


def classify_type(text: str) -> str:
    """rule / instruction / identity / preference by zh and en cues; default fact."""
    clauses: list[str] | None = None
    for type_, zh, _en in _TYPE_CUES:
        if type_ in _ORDERS:
            if clauses is None:
                clauses = _order_clauses(text)
            if _orders(type_, zh, clauses):
                return type_
        elif type_ == IDENTITY:
            if _says_who(text, zh):
                return type_
        elif any(cue in text for cue in zh) or _EN_CUE_RE[type_].search(text):
            return type_
    return FACT


def _says_who(text: str, zh: tuple[str, ...]) -> bool:
    """Does an identity cue say who the speaker is (see _EN_NOT_IDENTITY, _ZH_NOT_IDENTITY)?"""
    for cue in zh:
        at = text.find(cue)
        while at >= 0:
            if not any(text.startswith(no, at) for no in _ZH_NOT_IDENTITY):
                return True
            at = text.find(cue, at + 1)
    return any(not _EN_NOT_IDENTITY.match(text, m.end()) for m in _EN_CUE_RE[IDENTITY].finditer(text))


# Words that make a memory important the first time it is said (DESIGN section 5).
SALIENCE_WORDS_ZH = ("过敏", "务必", "千万", "一定", "切记", "重要", "紧急", "绝对", "永远", "必须")
SALIENCE_WORDS_EN = ("allergic", "allergy", "must", "never", "always", "critical", "important", "urgent", "vital")
# These three emphasise an order ("you must never ...", "always back up first"), and say little
# elsewhere ("I must say", "I'm always here for you"): they count only in a clause giving one.
SALIENCE_IN_ORDERS_EN = ("must", "never", "always")
SALIENCE_PER_WORD = 0.3  # each distinct cue adds this much importance ...
SALIENCE_MAX = 0.6  # ... up to this bonus (importance itself is capped at 2.0 in scoring)
_SAL_EN = re.compile(r"\b(?:" + "|".join(SALIENCE_WORDS_EN) + r")\b", re.IGNORECASE)


def salience(text: str) -> float:
    """The salience bonus: how many distinct emphasis words the text carries, times a step."""
    hits = {w for w in SALIENCE_WORDS_ZH if w in text}
    en = {m.group(0).lower() for m in _SAL_EN.finditer(text)}
    if en & set(SALIENCE_IN_ORDERS_EN):
        clauses = _order_clauses(text)
        ordered = " ".join(c for t, zh, _ in _TYPE_CUES if t in _ORDERS for c in _orders(t, zh, clauses))
        en = {w for w in en if w not in SALIENCE_IN_ORDERS_EN or re.search(rf"\b{w}\b", ordered, re.IGNORECASE)}
    hits |= en
    return round(min(SALIENCE_MAX, SALIENCE_PER_WORD * len(hits)), 2)


# Subjects that can be read off a sentence without a model. Conservative on purpose: a
# wrong subject would supersede an unrelated memory, a missing one only adds a line.
_PLACE_SUFFIX = "区市县省镇村州岛"
_SUBJECT_PATTERNS_ZH: tuple[tuple[re.Pattern[str], str | None], ...] = (  # each starts with 我: none can match an ASCII text
    (re.compile(rf"^(?:我(?:现在|目前|住)?(?:在|住在))[\u4e00-\u9fff]{{1,8}}[{_PLACE_SUFFIX}]\W*$"), "所在地"),
    (re.compile(r"^我(?:的)?(?:名字)?叫[\u4e00-\u9fffA-Za-z ]{1,20}\W*$"), "名字"),
    (re.compile(r"^我的([\u4e00-\u9fff]{1,8})是.+$"), None),
)
_SUBJECT_PATTERNS_EN: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"^(?:i live in|i'm living in|i am living in|i'm based in|i am based in|i moved to)\b.+$", re.I), "location"),
    (re.compile(r"^my name is\b.+$", re.I), "name"),
    (re.compile(r"^my ((?:[a-z]+ ){0,2}[a-z]+) (?:is|are)\b.+$", re.I), None),
)


def extract_subject(text: str) -> str:
    """A subject key for "the same thing with a new value", or "" when unsure."""
    t = text.strip()
    # An ASCII text skips the Chinese patterns (their character ranges cost a new process
    # about 1 ms each to compile).
    for pattern, fixed in _SUBJECT_PATTERNS_EN if t.isascii() else _SUBJECT_PATTERNS_ZH + _SUBJECT_PATTERNS_EN:
        m = pattern.match(t)
        if m:
            return fixed if fixed is not None else m.group(1).strip().lower()
    return ""
