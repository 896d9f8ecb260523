"""A change names its old value: "I switched from Vim to Helix", "we left Leeds", "换工作了，
从美团跳到字节", "把旧手机卖了". Pure: no index, no files.

Most changes are said without a slot cue a rule could read ("Traded in the Mazda and drove
home a Kia"), but they are said with a word of ending bound to the value that ended: a
switch from it, leaving it, a farewell to it, a break-up with it, its breaking down, selling
or replacing it. `old_values` returns those named values; the write path
(engine/write.py) supersedes the user's current memories that name one of them, whatever
their wording, so a change needs no subject to end what it ends.

The markers are the ordinary words of ending in English and Chinese, none tied to a kind of
fact. Conservative on purpose: a text about someone else ("my sister left Leeds", 他和小王
分手了), a speaker's transcript line ("Anna: I quit Acme"), or a negated ending ("I never
left Leeds", 没离开) names no old value of the user's; a bare pronoun or a generic word ("it",
"the old one", 工作) is no value. The write path adds its own guard: a value named by many
memories is a common word, not a value.
"""

from __future__ import annotations

from functools import cache

from memdream.model import lazyre as re
from memdream.model.script import fold_case, holds_any

# ---- English ---------------------------------------------------------------------------------

_DET = r"(?:(?:the|my|our|a|an|old|good old|trusty|beloved|poor)\s+)*"
# A named value: one to four words, up to a comma, a full stop, or a word that starts another part.
_STOP_WORDS = (
    "and|but|so|to|for|into|onto|after|because|since|last|this|that|these|yesterday|today|tonight|"
    "now|then|on|at|in|with|when|while|as|about|once|just|finally|already|anymore|for good|forever|"
    "is|was|were|are|has|had|have|got|and i|i|we|it|which|who"
)
_WORD = r"[\w'’+#&-]+(?:\.[\w'’+#&-]+)*"  # a word may hold a dot inside (Node.js), never end with one
_VALUE = rf"(?P<v>(?:(?!(?:{_STOP_WORDS})\b){_WORD}(?:\s+|(?=[,.;:!?)]|$))){{1,4}})"
_CHANGE_VERB = (
    r"switch(?:ed|ing)?|mov(?:ed|ing|e)|chang(?:ed|ing|e)|went|go(?:ne|ing)?|upgrad(?:ed|ing|e)|downgrad(?:ed|ing|e)|"
    r"migrat(?:ed|ing|e)|transferr?(?:ed|ing)?|swapp?(?:ed|ing)?|convert(?:ed|ing)?|jump(?:ed|ing)?|"
    r"relocat(?:ed|ing|e)|promot(?:ed)?"
)
_CLAUSE = r"(?:^|(?<=[,.;:!?])\s*)"
# The marker, then the old value. `True`: the value may be any word (a switch, a replacement
# says the old one ended); `False`: only a name (capitalised or with a digit), since "left the
# keys in the car" or "done with the report" end nothing the user holds.
_EN_BEFORE = [
    (True, rf"\b(?:{_CHANGE_VERB})\b(?:\s+[\w'’]+){{0,4}}?\s+(?:away\s+)?from\s+{_DET}{_VALUE}"),
    (True, rf"\b(?:ditched|dumped|dropped|replaced|replacing|traded in|trading in|gave up(?: on)?|giving up(?: on)?|"
           rf"moved on from|got rid of|getting rid of|stopped using|no longer (?:use|using|drive|driving|have|eat|eating)|"
           rf"used to (?:be|live in|live|work at|work for|work as|use|drive|have|eat|love|be with))\s+{_DET}{_VALUE}"),
    (True, rf"{_CLAUSE}(?:forget|goodbye(?: to)?|bye(?: bye)?|so long|farewell(?: to)?|rip|r\.i\.p\.)\s+{_DET}{_VALUE}"),
    (True, rf"(?:{_CLAUSE}|\b(?:i'm|i am|we're|we are)\s+)no longer (?:a |an |the )?{_VALUE}"),
    (True, rf"\b(?:uninstalled|deleted my|cancelled my|canceled my)\s+{_DET}{_VALUE}"),
    (False, rf"\b(?:left|leaving|quit|quitting|resigned from|resigning from|handed in (?:my )?notice at|gave (?:my )?notice at|fired from|laid off (?:from|by)|moved out of|"
            rf"sold|selling|retired|rehomed|broke up with|breaking up with|split (?:up )?with|separated from|divorced|"
            rf"ended (?:things )?with|things ended with|said goodbye to|no longer (?:with|at|in|working at|working for|living in))"
            rf"(?:\s+(?:my\s+)?(?:job|position|role|post|work)\s+(?:at|with|in))?\s+{_DET}{_VALUE}"),
]
_EN_AFTER = [  # the old value, then the marker
    (True, r"(?:^|[,.;:!?]\s*|\b(?:my|the|our|old)\s+)(?P<v>[\w'’+#.&-]+(?:\s+[\w'’+#.&-]+){0,3}?)\s+and I\s+"
           r"(?:finally\s+|have\s+|had\s+)?(?:broke up|split(?: up)?|separated|divorced|called it quits|are over|are done|ended it)\b"),
    (True, r"\b(?:my|the|our|old)\s+(?P<v>[\w'’+#.&-]+(?:\s+[\w'’+#.&-]+){0,3}?)\s+(?:finally\s+|just\s+|has\s+|have\s+|is\s+)?"
           r"(?:died|broke|broke down|gave (?:up|out)|stopped working|is dead|is gone|is history|bit the dust)\b"),
    (True, r"(?:^|[,.;:!?]\s*)(?P<v>[\w'’+#.&-]+(?:\s+[\w'’+#.&-]+){0,3}?)\s+(?:is|was)\s+(?:history|a thing of the past|no more)\b"),
]
# Every match of an English marker holds one of its words (in a text folded by script.fold_case,
# as (?i) reads it; tests/test_changes.py generates matches of every pattern to check it): a
# pattern is compiled and run only on a text holding one (compiling all of them was about 6 ms
# of every `memdream remember` of a plain line; issue 21).
_EN_MARKERS: list[tuple[str, ...]] = [
    ("from",),
    ("ditch", "dump", "drop", "replac", "trad", "gave", "giving", "from", "rid", "stopped", "longer", "used"),
    ("forget", "bye", "long", "farewell", "rip", "r.i.p"),
    ("longer",),
    ("uninstall", "deleted", "cancel"),
    ("left", "leaving", "quit", "resign", "notice", "fired", "laid", "moved", "sold", "selling", "retired", "rehomed",
     "broke", "breaking", "split", "separated", "divorced", "ended", "bye", "longer"),
    ("and i",),
    ("died", "broke", "gave", "stopped", "dead", "gone", "history", "dust"),
    ("history", "past", "more"),
]  # fmt: skip
_EN_RES = [(any_word, re.compile(p, re.I), words) for (any_word, p), words in zip(_EN_BEFORE + _EN_AFTER, _EN_MARKERS, strict=True)]
_NAME = re.compile(r"[A-Z0-9]")
_MOVED_ME = re.compile(r"\w+\s+(?:me|us)\b", re.I)
_EN_NEGATED = re.compile(r"\b(?:not|never|didn't|did not|don't|do not|won't|will not|can't|cannot|couldn't|wouldn't|haven't|hasn't|no way)\s+(?:\w+\s+){0,2}$", re.I)
_EN_HYPOTHETICAL = re.compile(r"\b(?:if|whether|might|maybe|thinking about|considering|should i|could|would|want to|wanna|plan(?:ning)? to|going to|gonna)\b[^.!?]*$", re.I)
_EN_OTHER = re.compile(
    r"\b(?:he|she|they|his|her|their|him|them)\b|\b(?:my|our) (?:sister|brother|mother|father|mom|mum|dad|parents?|friends?|"
    r"colleagues?|coworkers?|neighbou?rs?|cousins?|aunt|uncle|grand(?:ma|mother|pa|father)|boss|manager|son|daughter|kids?)\b",
    re.I,
)
_SPEAKER = re.compile(r"^\s*[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}:\s")

# ---- Chinese ---------------------------------------------------------------------------------

# "旧车X": the old one of a generic kind of thing, then its name.
_ZH_OLD = r"旧(?:车|手机|电脑|笔记本|房子|家|工作|公司|单位)?"
_ZH_V = r"(?P<v>[\u4e00-\u9fffA-Za-z0-9 +#.-]{1,12}?)"
# A clause that starts with the thing itself, maybe pointed at ("我那台", "旧手机"): what the
# markers said after the value (坏了, 再见, 卖掉了) follow.
_ZH_THIS = rf"(?:^|[，。,.!！?？；;])(?:我的|我那|那台|那部|那个)?(?:旧的|{_ZH_OLD})?"
_ZH_RES = [
    re.compile(p)
    for p in (
        rf"从{_ZH_V}(?:(?:换|改|搬|跳槽|跳|转|调|升|迁|切换)(?:到|成|去|为|回)|离职|辞职)",
        rf"(?:离开|告别|辞掉|辞了|退掉|卖掉|卖了|换掉|甩了|不再(?:用|开|住|吃|养|去)|戒掉|戒了|退出|搬离|搬出|送走|卸载|卸掉)了?{_ZH_V}(?=$|[，。,.!！?？；;、了的])",
        rf"不(?:用|做|干|搞){_ZH_V}了",
        rf"不再是{_ZH_V}(?=$|[，。,.!！?？；;、了的])",
        rf"(?:^|[，。,.!！?？；;])(?:再见|拜拜|永别)(?:了[，,]?|[，,]){_ZH_V}(?=$|[，。,.!！?？；;])",
        rf"把{_ZH_V}(?:卖|换|置换|送|退|辞|扔|甩|处理|戒|淘汰|送人|转手|卸)",
        rf"(?:和|跟|与){_ZH_V}(?:分手|离婚|分开|散了|分了|结束了)",
        rf"{_ZH_THIS}{_ZH_V}(?:终于|已经|彻底|也)?(?:坏了|报废|退役|靠边站|送人了|被偷了|寿终正寝)",
        rf"{_ZH_THIS}{_ZH_V}(?:再见|拜拜|永别)",
        rf"{_ZH_THIS}{_ZH_V}(?:[这上]周|上个?月|去年|昨天|今天|前几天|前阵子|最近|终于|已经)?(?:卖掉了|卖了|转手了|出掉了)",
        rf"以前(?:住在|住|在|用|开|是|养|吃|喜欢|最爱|爱){_ZH_V}(?:，|,|。|现在|如今|后来|但)",
    )
]
# Every match of a Chinese marker holds one of its words (tests/test_changes.py generates matches
# of every pattern to check it): a pattern is compiled and run only on a text holding one
# (compiling all eleven was about 12 ms of every `memdream remember` of a Chinese line; issue 21).
_ZH_MARKERS: list[tuple[str, ...]] = [
    ("从",),
    ("离开", "告别", "辞掉", "辞了", "退掉", "卖掉", "卖了", "换掉", "甩了", "不再", "戒掉", "戒了", "退出", "搬离", "搬出", "送走", "卸载", "卸掉"),
    ("不用", "不做", "不干", "不搞"),
    ("不再是",),
    ("再见", "拜拜", "永别"),
    ("把",),
    ("分手", "离婚", "分开", "散了", "分了", "结束了"),
    ("坏了", "报废", "退役", "靠边站", "送人了", "被偷了", "寿终正寝"),
    ("再见", "拜拜", "永别"),
    ("卖掉了", "卖了", "转手了", "出掉了"),
    ("以前",),
]  # fmt: skip
_ZH_GATED = list(zip(_ZH_RES, _ZH_MARKERS, strict=True))
# The words of taking leave of a conversation: "那就这样拜拜", "拜拜，明天聊" end no value.
_ZH_CLOSING = re.compile(r"这样|先|聊|见|说|走|睡|晚安|回头|下次|改天|明天|谢谢|好的|大家|各位|你们")
_ZH_FAREWELL = re.compile(r"再见|拜拜|永别")
_ZH_FOR_NOW = re.compile(r"今天|今晚|明天|这次|这回|暂时|先")  # "今天不用电脑了" stops nothing for good
_ZH_NEGATED = re.compile(r"(?:不|没|没有|别|未|不会|不想|不打算|不能)$")
_ZH_HYPOTHETICAL = re.compile(r"(?:如果|要是|假如|打算|准备|想要|考虑|可能|也许|要不要|该不该|是否)")
_ZH_OTHER = re.compile(r"(?<![吉其])他|她|我[哥姐弟妹爸妈]|妹妹|姐姐|哥哥|弟弟|朋友|同事|妈妈|爸爸|父母|邻居|表[哥姐弟妹]|堂[哥姐弟妹]|领导|老板|儿子|女儿")
_ZH_TRIM = re.compile(r"^(?:了|的|我的|我们的|我家的|我那|[那这][个辆台部只条家位件款]|旧的|原来的|之前的|以前的)+|(?:了|的|终于|已经|彻底|也|啦|吧)+$")

# Words that point or are generic: never a value on their own.
GENERIC_VALUES = frozenset(
    """it this that one thing things stuff them him her there here home work job place old new everything something
    a an the my our me us you all way idea plan habit life time day week month year
    工作 公司 家 那里 这里 那儿 这儿 它 他 她 东西 一切 以前 原来 之前 老 旧 新""".split()
)



@cache
def generic_terms(cjk: bool = True) -> frozenset[str]:
    """The index terms of GENERIC_VALUES: never what names a value. Worked out on first use,
    not at import. The Chinese words only with `cjk` (for a value that has Chinese in it): a
    Latin value's terms are never Chinese ones, and tokenizing Chinese imports the segmenter,
    ~0.1 s in a new process (issue 21)."""
    from memdream.model.tokens import tokens

    return frozenset(t for w in GENERIC_VALUES if cjk or w.isascii() for t in tokens(w))


def about_someone_else(text: str) -> bool:
    """Does the text speak of another person (he, my sister, 她, 同事...)? Such a memory is not
    the user's own value, and no change of the user's ends it."""
    return bool(_SPEAKER.match(text) or _EN_OTHER.search(text) or _ZH_OTHER.search(text))


def _clean_en(value: str) -> str:
    words = value.strip(" ,.;:!?'\"’").split()
    while words and words[0].lower() in ("the", "my", "our", "a", "an", "old"):
        words = words[1:]
    return " ".join(words)


def old_values(text: str) -> list[str]:
    """The values `text` says ended (see the module docstring), in order, without repeats."""
    if _SPEAKER.match(text):
        return []  # a speaker's transcript line: someone's words, not the user's change
    out: list[str] = []
    folded = fold_case(text)
    for any_word, pattern, words in _EN_RES:
        if not holds_any(folded, words):
            continue  # no match can be there: the pattern is not even compiled
        for m in pattern.finditer(text):
            before = text[: m.start()]
            sentence = re.split(r"[.!?;]\s", before)[-1]
            moved_me = bool(_MOVED_ME.match(m.group(0)))  # "they moved me from X": the user is the one moved
            if _EN_NEGATED.search(before) or _EN_HYPOTHETICAL.search(sentence) or (_EN_OTHER.search(sentence) and not moved_me):
                continue
            v = _clean_en(m.group("v"))
            if not any_word and not _NAME.search(v):
                continue
            if v and v.lower() not in GENERIC_VALUES and not _EN_OTHER.fullmatch(v):
                out.append(v)
    for pattern, words in _ZH_GATED:
        if not holds_any(text, words):
            continue  # no match can be there: the pattern is not even compiled
        for m in pattern.finditer(text):
            before = text[: m.start()]
            clause = re.split(r"[，。,.!！?？；;]", before)[-1]
            if m.group(0).startswith("不") and _ZH_FOR_NOW.search(clause + m.group(0)):
                continue
            if _ZH_NEGATED.search(before) or _ZH_HYPOTHETICAL.search(clause) or _ZH_OTHER.search(clause + m.group(0)[: m.start("v") - m.start()]):
                continue
            v = m.group("v").strip()
            for _ in range(3):
                v = _ZH_TRIM.sub("", v).strip()
            # 把 marks what follows as the object ("上周把那辆捷达卖了"): a value is never read across it
            if v and v not in GENERIC_VALUES and not _ZH_OTHER.search(v) and len(v) >= 2 and "把" not in v and not (_ZH_FAREWELL.search(m.group(0)) and _ZH_CLOSING.search(v)):
                out.append(v)
    return list(dict.fromkeys(out))
