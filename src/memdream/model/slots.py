"""Personal slots: which memories state the same thing about the user (home, employer, ...).

A slot is a question with one current answer ("where do I live?"). Two texts state the same
slot when the same cue matches both (zh and en), or when a text names an existing subject
("Dr. Patel is the dentist" states the subject "dentist"). Within a slot, a text says the
same value again (a restatement: refresh, no new line) or another value (a change: the new
line supersedes every current line of the subject). Pure: no index, no files.

Conservative on purpose: a wrong slot would supersede an unrelated memory, a missed one only
adds a line. A slot with several true answers at once (allergies, children, pets, tools,
languages) is `multi`: a text there only joins an entry stating the same value, unless it
names its main answer ("I mostly write Python", 我主要写 Java).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memdream.model import lazyre as re
from memdream.model.script import has_han_or_ext_a, has_latin
from memdream.model.similarity import contradiction, is_duplicate, plain, plain_words, swapped_parts

MAX_VALUE_WORDS = 6  # a text whose value takes more words than this is a story, not a slot value
# Words that qualify a slot, not its value ("my usual coffee order", "the current project").
GENERIC = frozenset("usual current favourit favorit main regular daili normal typic new old one now 现在 目前 平时 每天".split())


@dataclass(frozen=True)
class SlotDef:
    key: str
    cue: re.Pattern[str]
    frame: frozenset[str]  # words that belong to the slot, not to its value (stemmed / zh words)
    multi: bool = False
    # The English cue alone, for an ASCII text: every Chinese alternative holds a Chinese
    # character, so it cannot match one, and its character ranges cost a new process about
    # 1 ms each to compile.
    cue_en: re.Pattern[str] | None = None
    # The Chinese cue alone, for a text without a Latin letter: every English alternative is
    # made of Latin words, so it cannot match one, and compiling it cost a new process's
    # `remember` of a Chinese line about 1 ms a slot (issue 21).
    cue_zh: re.Pattern[str] | None = None


def _slot(key: str, en: str, zh: str, frame: str, multi: bool = False) -> SlotDef:
    pattern = "|".join(p for p in (rf"\b(?:{en})\b" if en else "", zh) if p)
    return SlotDef(
        key, re.compile(pattern, re.I), frozenset(frame.split()), multi,
        re.compile(rf"\b(?:{en})\b", re.I) if en else None,
        re.compile(zh) if zh else None,  # no letter to fold: without re.I its CJK classes compile 3x faster
    )  # fmt: skip


SLOTS: tuple[SlotDef, ...] = (
    _slot("home", r"(?:i|we) (?:now )?(?:live|reside|am living|'m living|am based|'m based) in|lives? in|living in|moved to|home base|the city i live in",
          r"住在|家在|我在[\u4e00-\u9fff]{1,8}[区市县镇村]\W*$|搬到了?|现在住|住的地方",
          "live resid base home citi move move now day 住 住在 家 家在 在 地方 现在 搬到 城市"),
    _slot("employer", r"(?:i|we) work (?:at|for)|works (?:at|for)|employed (?:at|by)|the company i work (?:for|at)|company i work for",
          r"在[\u4e00-\u9fff\w]{1,10}(?:上班|工作)|上班的公司|现在的公司",
          "work employ compani full time 上班 工作 公司 现在 在"),
    _slot("job", r"job title|(?:i|she|he) works? as|my role|current role|my job is|official job",
          r"我的职位|职位是|我的岗位|我的工作是|我的职业",
          "job titl role work current offici 职位 岗位 工作 职业"),
    _slot("breakfast", r"for breakfast|breakfast is|(?:have|eat|eats|has) (?:\w+ )?breakfast", r"早餐|早饭|早上吃|早上一般吃",
          "breakfast have eat morn 早餐 早饭 早上 吃 一般 每天"),
    _slot("exercise", r"(?:my|for) exercise|exercise is|my workout",
          r"每周.{0,4}(?:游泳|跑步|健身|打球|打羽毛球|瑜伽)|一周.{0,4}(?:游泳|跑步|健身|打球|打羽毛球|瑜伽)|的运动",
          "exercis workout week 每周 一周 去 次 运动 周 打"),
    _slot("manager", r"my (?:manager|boss)|reports? to|the boss at work|is the manager", r"我的(?:领导|上司|经理)|向.{1,6}汇报",
          "manag boss report work 领导 上司 经理 汇报"),
    _slot("partner", r"my (?:wife|husband|partner|girlfriend|boyfriend|spouse|fianc[eé]e?)",
          r"我(?:的)?(?:老婆|老公|妻子|丈夫|太太|女朋友|男朋友|对象|爱人)",
          "wife husband partner girlfriend boyfriend spous fianc call name 老婆 老公 妻子 丈夫 太太 女朋友 男朋友 对象 爱人 叫 名字"),
    _slot("children", r"my (?:son|daughter|kids?|children)|we have \w+ (?:kids|children)",
          r"我(?:的)?(?:儿子|女儿|孩子|小孩)|我家孩子", "son daughter kid child children 儿子 女儿 孩子 小孩", multi=True),
    _slot("pets", r"my (?:cat|dog|pet|puppy|kitten)|has a (?:cat|dog)|the (?:cat|dog) at home|name of the (?:cat|dog)",
          r"养了|养着|我家(?:的)?(?:猫|狗)|宠物", "cat dog pet puppi kitten call name home 养 养了 养着 宠物 家里 猫 狗 一只", multi=True),
    _slot("diet", r"(?:vegetarian|vegan|pescatarian|keto|halal|kosher) (?:diet|food)|(?:on|follows?) an? \w+ diet|i eat an? \w+ diet",
          r"吃素|素食|饮食", "diet eat follow 饮食 吃"),
    _slot("allergies", r"allergic to|allergy to|allergies", r"过敏", "allerg allergi 过敏 对", multi=True),
    _slot("editor", r"my (?:code )?editor|editor is|(?:i|we) (?:code|write code) in (?:vim|neovim|emacs|vs ?code)",
          r"编辑器|用[\s\w]{1,12}写代码", "editor code write 编辑器 写 代码 用"),
    _slot("language", r"the language i am learning|i am learning|i'm learning|learning \w+ at the moment|taking \w+ lessons|i (?:mostly )?(?:write|code in|program in)",
          r"我在学|正在学|最近在学|我主要写|主要用.{1,8}写", "languag learn moment studi write mostli code program take lesson 学 在学 正在 最近 主要 写", multi=True),
    _slot("dentist", r"my dentist|dentist is|dental|for (?:my )?teeth", r"牙医|看牙", "dentist dental checkup teeth see 牙医 看牙"),
    _slot("project", r"(?:my|the) (?:current )?project|busy with .{1,40} at work|working on the .{1,40} project",
          r"我的项目|在做的项目|手上的项目", "project current busi work 项目 在做 手上"),
    _slot("schedule", r"go(?:es)? to bed|bedtime|asleep by|wake up at|get up at|start work at", r"起床|睡觉|几点睡|上班时间",
          "go bed bedtim asleep night wake get start work 起床 睡觉 点"),
    _slot("vehicle", r"i drive|drives an?|the car i drive|my car is|the car, driven", r"我开|开的车|开一辆|我的车", "drive car driven day 开 车 一辆 的车"),
    _slot("laptop", r"my laptop|laptop is|as the laptop|\w+ laptop", r"笔记本|我的电脑|电脑是", "laptop work use 笔记本 电脑"),
    _slot("phone", r"my phone|the phone in use|as a phone|phone(?=:)", r"我的手机|手机是|手机用", "phone use day 手机"),
    _slot("commute", r"commute|commuting|goes to work by|to work every day", r"通勤|上班的交通|坐[\u4e00-\u9fff]{1,4}上班", "commut work go goe take offic day 通勤 上班 坐"),
)
_BY_KEY = {s.key: s for s in SLOTS}
# The runs `plain_words` gives the segmenter (model/wording._WORDS, after NFKC).
_HAN_RUN = re.compile(r"[\u3400-\u9fff]+")


def _han(text: str) -> bool:
    """Would `plain_words` hand part of this text to the Chinese segmenter?"""
    return not text.isascii() and has_han_or_ext_a(unicodedata.normalize("NFKC", text))


@lru_cache(maxsize=1)
def _stop_chars() -> frozenset[str]:
    """Every character of a Chinese stop character or stop word (made once, on first need)."""
    from memdream.model.tokens import CJK_STOP_CHARS, CJK_STOPWORDS

    return CJK_STOP_CHARS.union(*CJK_STOPWORDS)


def _han_word_in(text: str) -> bool:
    """Is one of `plain_words(text)` Chinese, known without the segmenter? A character that is
    no stop character and in no stop word is in a word of its own that neither list drops."""
    stop = _stop_chars()
    return any(ch not in stop for run in _HAN_RUN.findall(unicodedata.normalize("NFKC", text)) for ch in run)


@dataclass(frozen=True)
class Slot:
    key: str
    value: frozenset[str]
    multi: bool = False


def _value(text: str, frame: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in plain_words(plain(text)) if w not in frame and w not in GENERIC)


# Someone else is the one who lives, works, drives there: "My sister Anna lives in Lyon",
# "Caroline: I moved to Boston" (a speaker's own words), 我妹妹住在上海. Not the user's slot.
_SPEAKER = re.compile(r"^\s*[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}:\s")
_VERB_CUE = re.compile(r"(?:lives?|living|works?|working|drives?|moved|goes|reports?|commut\w*|trains?|uses?|eats?|follows?)\b", re.I)
_OTHER_PERSON_ZH = re.compile(r"(?<![吉其])他|她|妹妹|姐姐|哥哥|弟弟|朋友|同事|妈妈|爸爸|父母|邻居|表[哥姐弟妹]|堂[哥姐弟妹]|领导|老板|舅|姨|叔|姑")
_FIRST_PERSON_SLOTS = frozenset({"partner", "children", "pets"})  # relations: the other person is the slot


def _someone_else(text: str, start: int, key: str, cue: str = "I", own: frozenset[str] = frozenset()) -> bool:
    """Is the text about someone other than the user? (`cue`: the words that matched, `start`
    where; `own`: the subject's words. "Caroline: ..." is a speaker's own words, but "Phone: a
    Pixel 8" and "Football: cheers for Arsenal" are a label naming the slot.)"""
    speaker = _SPEAKER.match(text)
    if speaker and start > 0 and not (plain_words(speaker.group(0)) & own):
        return True
    if key in _FIRST_PERSON_SLOTS:
        return False
    before = text[:start]
    if key != "subject" and _VERB_CUE.match(cue) and re.search(r"\b(?!(?:I|We|My|Our|Me|Us)\b)[A-Z][a-z]+", before):
        return True  # "Caroline lives in", "Anna works at": the actor is named before the verb (not "We moved to")
    return bool(
        re.search(r"\b(?:he|she|they|his|her|their)\b", before, re.I)
        or re.search(r"\b(?:my|our) (?:sister|brother|mother|father|mom|mum|dad|parents?|friends?|colleagues?|neighbou?rs?|cousins?|aunt|uncle|grand(?:ma|mother|pa|father)|boss|manager)\b", before, re.I)
        or _OTHER_PERSON_ZH.search(before)
    )


def slot_of(text: str) -> Slot | None:
    """The personal slot the text states and its value words, or None."""
    found = _cue(text)
    if found is None:
        return None
    s, m = found
    if _someone_else(text, m.start(), s.key, m.group(0)):
        return None
    value = _value(text, s.frame)
    if not value or len(value) > MAX_VALUE_WORDS:
        return None
    return Slot(s.key, value, s.multi and not _MAINLY.search(text))


def _cue(text: str) -> tuple[SlotDef, re.Match[str]] | None:
    """The first slot whose cue the text holds, and the match (the slot `slot_of` looks at)."""
    # An ASCII text can match only the English cue, a text without a Latin letter only the Chinese.
    en_only = text.isascii()
    zh_only = not en_only and not has_latin(text)
    for s in SLOTS:
        cue = s.cue_en if en_only else s.cue_zh if zh_only else s.cue
        m = cue.search(text) if cue is not None else None
        if m:
            return s, m
    return None


# A slot with several answers has one main answer when the text says so: "I mostly write
# Python", 我主要写 Java. Two such texts state one answer, and the newer supersedes the older;
# "I am learning Japanese" beside them is still one more answer.
_MAINLY = re.compile(r"\b(?:mostly|mainly|primarily|chiefly)\b|主要|大多", re.I)


def named_slot(text: str, subject: str, partial: bool = False) -> Slot | None:
    """The slot `subject` when the text names it ("Dr. Patel is the dentist" names `dentist`):
    the subject's words are then the frame, the rest the value. `partial`: one of the
    subject's words is enough ("Football: cheers for Arsenal" for `football team`), used only
    to find a restatement (the same value), never a change."""
    if _han(subject) and not _han(text):
        # A text without Chinese holds none of the subject's Chinese words, so only its other
        # words can count, and the segmenter is not loaded to cut the Chinese ones (about 0.1 s
        # in a new process: an English `remember` in a vault holding a subject such as 所在地).
        if partial:
            subject = _HAN_RUN.sub(" ", unicodedata.normalize("NFKC", subject))
        elif _han_word_in(subject):
            return None  # every word of the subject must be in the text, and one is Chinese
    words = plain_words(subject)
    if not words or _someone_else(text, len(text), "subject", own=frozenset(words)):
        return None
    mine = plain_words(plain(text))
    if not (words & mine - GENERIC if partial else words <= mine):
        return None
    value = _value(text, frozenset(words) | GENERIC)
    return Slot("subject:" + subject, value) if value and len(value) <= MAX_VALUE_WORDS else None


def subject_slot(text: str, subject: str) -> Slot | None:
    """The slot of an entry with `subject`: its cue slot, or the subject when the text names it."""
    return slot_of(text) or named_slot(text, subject)


_FIRST = frozenset({"i", "my", "we", "our", "我", "我们"})


def _opening(text: str, part: list[str]) -> bool:
    return plain(text).lower().lstrip(" \"'([").startswith(part[0]) if part else False


def same_value(new: str, old: str, new_slot: Slot, old_slot: Slot) -> bool:
    """Does `new` give the value `old` gives (a restatement), rather than another one? The same
    value when nothing says they differ (no contradiction signal, not one frame with a short
    part replaced) and their value words meet ("Trains at Riverside" / "I train at the
    Riverside gym": Riverside)."""
    if contradiction(new, old) or contradiction(old, new):
        return False
    if is_duplicate(new, old) or is_duplicate(old, new):
        return True
    parts = swapped_parts(new, old)
    # One frame with a short part replaced is another value, unless the part is the frame or
    # the opening "I train" / "Works out" (the user's words and an agent's note on the user).
    if parts is not None and not (_opening(new, parts[0]) and _FIRST.intersection(parts[0] + parts[1])):
        frame = _BY_KEY[new_slot.key].frame if new_slot.key in _BY_KEY else frozenset(plain_words(new_slot.key.removeprefix("subject:")))
        replaced = plain_words(" ".join(parts[0] + parts[1])) - frame - GENERIC
        if replaced:
            return False
    return bool((new_slot.value - GENERIC) & (old_slot.value - GENERIC))


def states_slot(new: str, new_slot: Slot | None, old: str, old_subject: str, partial: bool = False) -> Slot | None:
    """If `new` states the slot of the entry (`old`, `old_subject`), that slot as `new` gives it
    (`partial`: see `named_slot`)."""
    if new_slot is None:  # only the subject can be named: the old line's slot matters only if it is
        if not old_subject:
            return None
        named = named_slot(new, old_subject, partial)
        if named is None:
            return None  # (the old line's slot, and its words, are not needed: no segmenter for them)
        return named if subject_slot(old, old_subject) is not None else None
    if _han(old) and not _han(new) and not (old_subject and named_slot(new, old_subject, partial)):
        # The old line's slot can only be new_slot's own, and only if its cue is new_slot's
        # (its value words, which need the segmenter, are read only then).
        found = _cue(old)
        if found is None or found[0].key != new_slot.key:
            return None
    old_slot = subject_slot(old, old_subject) if old_subject else slot_of(old)
    if old_slot is None:
        return None
    if not old_slot.key.startswith("subject:"):
        return new_slot if new_slot.key == old_slot.key else None
    return named_slot(new, old_subject, partial) if old_subject else None


def default_subject(text: str) -> str:
    """The subject of a text stating a one-answer slot when no entry states it yet: the slot's
    name (home, employer, ...), so the next value finds it; "" otherwise."""
    found = slot_of(text)
    return found.key if found is not None and not found.multi else ""
