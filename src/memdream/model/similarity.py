"""When is a new memory "the same thing said again"? (DESIGN section 5)

Character-bigram similarity above 0.65 is the spec's rule. On its own it would swallow a
changed value that shares most characters ("my favourite colour is blue" / "... green"),
and the new value would be lost. So a text is a duplicate only if it is that similar AND
brings no content word (a number, a Latin word, a Chinese word) the old text lacks.

The words compared come from model/wording.py, the signals that two texts differ from
model/contradiction.py; both are imported here too, where the rest of the code finds them.
"""

from __future__ import annotations

from collections.abc import Callable
import unicodedata
from functools import lru_cache

from memdream.model.contradiction import contradiction, numbers, without_negation
from memdream.model.scoring import asks
from memdream.model import lazyre as re
from memdream.model.tokens import CJK_STOP_CHARS, EN_STOPWORDS, tokens
from memdream.model.script import starts_cjk
from memdream.model.wording import INFORMAL_EN, SYNONYMS_EN, SYNONYMS_ZH, normalize, plain, plain_words, stem

DEDUP_THRESHOLD = 0.65  # bigram Jaccard similarity above which two texts may be the same memory


def bigrams(text: str) -> set[str]:
    return normal_bigrams(normalize(text))


def normal_bigrams(s: str) -> set[str]:
    """`bigrams` of a text already `normalize`d."""
    if len(s) < 2:
        return {s} if s else set()
    return {s[i : i + 2] for i in range(len(s) - 1)}


# A swapped frame (who owes whom, from A to B, 五月三日 / 三月五日) trades parts and keeps its words:
# the shorter text's index tokens lie 0.67-1.0 inside the other's over the corpus's 59 swapped
# pairs (tests/data/fact_pairs.py), where two unrelated lines naming one person share about a
# quarter ("Things ended with Lena. I met Priya ..." / "My partner Lena keeps stealing my
# hoodies": 0.25). Half tells them apart.
SWAP_SHARE = 0.5


def one_frame(a: str, b: str) -> bool:
    """Could a swap signal between `a` and `b` mean parts traded in one frame? At least
    SWAP_SHARE of the shorter text's index tokens are the other's too."""
    x, y = set(tokens(a, unigrams=True)), set(tokens(b, unigrams=True))
    if not x or not y:
        return False
    return len(x & y) >= SWAP_SHARE * min(len(x), len(y))


# Two texts that look alike enough for a contradiction signal between them to be a conflict:
# half of the longer one's index tokens shared once negation cues are set aside. Over the
# contradiction corpus's look-alikes (tests/data/fact_pairs.py) the share is 0.5 or more for
# 90%; over the conflicts the looser `one_frame` opened while the recall suite's MemoryBank
# chats were written, it was 0.24-0.35 at the median ("Thank you for your advice, I will try
# it" / "Reading is a great way to learn ..."). A later text whose words nearly all come from
# the earlier one (a part said again with a change: "Anna got the job at Meta" after "Anna got
# the job at Google, and Ben got the one at Meta") looks alike too.
LOOK_ALIKE_SHARE, LOOK_ALIKE_INSIDE, LOOK_ALIKE_MIN_TOKENS = 0.5, 0.85, 2


def looks_alike(new: str, old: str) -> bool:
    """Does `new` look like `old` closely enough that a contradiction signal between them means
    one of the two says otherwise (see LOOK_ALIKE_SHARE)? Negations and Chinese aspect words
    (已经, 还, 了) are set aside."""
    new, old = _unsaid(new, old)
    x, y = _token_set(new, True), _token_set(old, True)
    if not x or not y:
        return False
    shared = len(x & y)
    if shared >= LOOK_ALIKE_SHARE * max(len(x), len(y)):
        return True
    return words_inside(new, old) >= LOOK_ALIKE_INSIDE


def words_inside(new: str, old: str) -> float:
    """The share of `new`'s index tokens that `old` holds (0 for a text of fewer than
    LOOK_ALIKE_MIN_TOKENS: "不用谢！" is inside every thanks)."""
    new, old = _unsaid(new, old)
    mine = _token_set(new, False)
    if len(mine) < LOOK_ALIKE_MIN_TOKENS:
        return 0.0
    return len(mine & _token_set(old, False)) / len(mine)


# Chinese aspect words say when, not what: 合同已经签了 and 合同还未签 are one frame once they and the
# negation are set aside (a comparison's view only, as the negation's).
_ASPECT_ZH = ("已经", "已", "还", "尚", "了")


@lru_cache(maxsize=512)  # a new text is compared with several candidates, sentence by sentence
def _token_set(text: str, negation_aside: bool) -> frozenset[str]:
    if negation_aside:
        text = without_negation(text)
        for w in _ASPECT_ZH:
            text = text.replace(w, "")
    return frozenset(tokens(text, unigrams=True))


def _unsaid(a: str, b: str) -> tuple[str, str]:
    """Two messages of one speaker without the speaker they open with ("Jon: Bye!" says
    "Bye!"); other texts as they are (in "Tom: My brother fixed my bike", Tom is the "my")."""
    ma, mb = _SPEAKER.match(a), _SPEAKER.match(b)
    if ma and mb and plain_words(ma.group(1)) == plain_words(mb.group(1)):
        return a[ma.end() :], b[mb.end() :]
    return a, b


def in_one_sentence(a: str, b: str, differs: Callable[[str, str], bool]) -> bool:
    """Do a sentence of `a` and a sentence of `b` that look alike (`looks_alike`) differ as
    `differs` says? A fact changed is changed within a sentence ("Long day. Leo gave Mia the
    keys." / "Mia gave Leo the keys"; "好消息！这周六我们不加班。" / "这周六我们加班"); small talk of
    several sentences trades parts and negations between sentences freely ("Thanks, Dave! Your
    support means a lot." / "I appreciate your support ..."; "You're welcome, Leo. ... you're
    not alone." / "You're welcome, my friend!"). A text of one sentence is its own sentence."""
    xs, ys = message_sentences(a) or [a], message_sentences(b) or [b]
    return any(differs(x, y) and looks_alike(x, y) for x in xs for y in ys)


def only_asks(text: str) -> bool:
    """Is every sentence of the text a question? A question states no fact to contradict."""
    said = _sentences(_unsaid(text, text)[0])
    return bool(said) and all(asks(t) for t in said)


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' character-bigram sets, in [0, 1]."""
    x, y = bigrams(a), bigrams(b)
    if not x or not y:
        return 0.0
    return len(x & y) / len(x | y)


def content_words(text: str) -> set[str]:
    return {
        t
        for t in tokens(unicodedata.normalize("NFKC", text))
        if t not in EN_STOPWORDS and t not in CJK_STOP_CHARS
    }


def new_content(new: str, old: str) -> set[str]:
    """Content words of `new` that `old` lacks (a Chinese word also counts if it is inside old's text)."""
    old_words = content_words(old)
    old_norm = normalize(old)
    return {w for w in content_words(new) if w not in old_words and not (starts_cjk(w) and normalize(w) in old_norm)}


COVERAGE = 0.5  # a text adding nothing, holding this share of the other's content words, says it again


# A sentence, for telling a question from a statement: up to its end mark (or the text's end).
_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")


def _sentences(text: str) -> list[str]:
    return [t for t in (m.group(0).strip() for m in _SENTENCE.finditer(text)) if any(ch.isalnum() for ch in t)]


def other_act(new: str, old: str) -> str:
    """Why `new` cannot be `old` said again, whatever words they share: "speaker" when both
    open with a speaker and not the same one (a message by Gina is not one by Jon, though
    Gina's "Remember Jon, just do it!" holds only words of Jon's "Thanks, Gina! ... I remember
    it!"); "asking" when one asks and the other tells: `new` holds a question and `old` none
    (Gina's "When are you opening the studio?" is not her "You're so inspiring ... opening your
    own studio!"), or `old` only asks and `new` states something (an answer is not its
    question). "" when neither: a question said again, or a statement restating the telling
    part of a longer text, may still fold."""
    sa, sb = speaker_words(new), speaker_words(old)
    if sa and sb and sa != sb:
        return "speaker"
    xs, ys = _sentences(new), _sentences(old)
    x_asks = [asks(t) for t in xs]
    y_asks = [asks(t) for t in ys]
    if any(x_asks) and not any(y_asks):
        return "asking"
    if ys and all(y_asks) and not all(x_asks):
        return "asking"
    return ""


def is_duplicate(new: str, old: str, threshold: float = DEDUP_THRESHOLD) -> bool:
    """Does `new` say again what `old` says (so no new line is needed)?

    Never when a contradiction signal separates them (`contradiction`). Otherwise, once both
    are put in plain words (`plain`: filler dropped, common synonyms made one): `new` brings no
    content word `old` lacks, each of its clauses says what one clause of `old` says (`_justified`:
    no recombining parts of two clauses), and either the bigram similarity is above `threshold`,
    or `new` holds at least `COVERAGE` of `old`'s content words (a reordering, a shorter
    version), or of one clause of a longer `old` (a restatement of one thing it said).
    """
    if other_act(new, old):
        return False
    # A contradiction signal between the whole texts rules a fold out. A negation alone does
    # not when one of them has several clauses: then each clause of `new` is judged against the
    # clause of `old` it draws on (`_justified`), so a negation in a clause it does not restate
    # ("Gina: I don't know. I launched an ad campaign for my store." / "Gina launched an ad
    # campaign for her store") says nothing about it. Order, roles and numbers stay signals
    # of the whole texts (a sequence runs across clauses: "Upgrade, then deploy").
    speaker = speaker_words(old)
    why = contradiction(_as_speaker(new) if speaker and speaker & plain_words(new) else new, old)
    if why and (why != "negation" or not (_CLAUSE_END.search(new) or _CLAUSE_END.search(old))):
        return False
    against = bool(why)
    a, b = plain(new), plain(old)
    if normalize(a) == normalize(b):
        return bool(normalize(a)) and not against  # the same characters: case, spacing, punctuation, width
    mine, theirs = plain_words(a), plain_words(b)
    if not mine or _missing(mine, theirs, b):
        return False
    parts = _clause_words(b)
    several = len(parts) > 1 or len(clauses(a)) > 1
    if (against and not several) or _recombines(new, a, b, parts, speaker, several):
        return False
    if similarity(a, b) > threshold or _covers(mine, theirs, a):
        return True
    # A restatement of one clause of a longer text ("Caroline is learning the piano" after
    # "Caroline: Wow! I'm getting creative too, just learning the piano. What made you try
    # pottery?"): it covers that clause as it would cover the clause said alone.
    return len(mine) >= CLAUSE_MIN_WORDS and len(parts) > 1 and any(_covers(mine, w, a) for _, w in parts)


# Clause ends: sentence ends, commas, colons and semicolons (not a decimal point or a
# thousands separator between digits).
_CLAUSE_END = re.compile(r"[!?。！？；;，、：\n]+|[.,:](?!\d)")
CLAUSE_MIN_WORDS = 3  # a restatement of one clause of a longer text says at least this much
# A message opening with its speaker: a capitalized name of up to three words ("Caroline: ...",
# "Dr. Mary Lee: ...") or two to four Chinese characters ("小美：...").
_SPEAKER = re.compile(r"^\s*((?:[A-Z][\w'.-]*)(?: [A-Z][\w'.-]*){0,2}|[\u4e00-\u9fff]{2,4})\s*[:：]")


def recombines(new: str, old: str) -> bool:
    """Might `new`, though it holds only words of `old`, say something `old` does not, by
    binding its parts otherwise: a number kept while another is left out, or a clause that
    joins parts of two clauses of `old` (see `_justified`)? The light phase's near-duplicate
    rule asks this too (model/lifecycle.py)."""
    a, b = plain(new), plain(old)
    parts = _clause_words(b)
    return _recombines(new, a, b, parts, speaker_words(b), len(parts) > 1 or len(clauses(a)) > 1)


def _recombines(new: str, a: str, b: str, parts: list[tuple[str, set[str]]], speaker: set[str], several: bool) -> bool:
    """`recombines` for plain texts `a` (of `new`) and `b`, `b`'s clauses and their words
    `parts`, and whether either text has several clauses."""
    return _rebinds_numbers(new, b) or (several and not _justified(a, parts, speaker))


def _rebinds_numbers(new: str, old: str) -> bool:
    """Does `new` keep some of `old`'s numbers and leave others out? Then each number it keeps
    may be bound to another thing than in `old`: "Bob owes me 300" after "Alice owes me 300
    and Bob 500" (the lexical rule cannot tell which noun a number belongs to)."""
    mine = set(numbers(new))
    return bool(mine) and len(set(numbers(old)) - mine) > 0


def clauses(text: str) -> list[str]:
    """The text's clauses (its sentences cut at commas, colons and semicolons too)."""
    return [c for c in (x.strip() for x in _CLAUSE_END.split(text)) if c]


def _clause_words(text: str) -> list[tuple[str, set[str]]]:
    """The text's clauses that hold a content word, each with its plain words."""
    return [(c, w) for c in clauses(text) if (w := plain_words(c))]


def speaker_words(text: str) -> set[str]:
    """The plain words of the speaker a message opens with ("Caroline: ..."), if any."""
    m = _SPEAKER.match(text)
    return plain_words(m.group(1)) if m else set()


def _justified(text: str, parts: list[tuple[str, set[str]]], speaker: set[str]) -> bool:
    """Does each clause of `text` say what one of the clauses `parts` says: its words found in
    that clause (the speaker's name aside: "Caroline is learning the piano" restates "Caroline:
    ... I'm learning the piano"), with no contradiction signal between the two? "Bob owes me
    300" is not justified by "Alice owes me 500. I owe Bob 300." (roles swapped in the clause
    it draws on), "Sam drives a Kia" not by "Sam drives a Volvo. His wife drives a Kia." (two
    clauses recombined)."""
    for clause in clauses(text):
        words = plain_words(clause)
        said = _as_speaker(clause) if speaker and speaker & words else clause
        if words and not any(
            not (_missing(words, w, p) - (speaker if _I.search(p) else set()))
            and not contradiction(said, p)
            and not _rebinds_numbers(clause, p)
            for p, w in parts
        ):
            return False
    return True


# The speaker's name stands in a restatement for their "I" only: "Tom fixed his bike" does not
# restate "Tom: My brother fixed my bike." (no "I" there, someone else did it).
# Chinese: 我 as the doer, not one's kin (我哥, 我妈) or the object of 把/给/让/和 (把我的车).
_I = re.compile(r"\bI\b|\bI'|(?<![把给让带和跟叫被])我(?![的们哥姐弟妹爸妈儿女家])")


_THIRD_EN = {"he": "I", "she": "I", "they": "I", "him": "me", "them": "me", "his": "my", "her": "my", "their": "my"}
_THIRD = re.compile(r"\b(?:he|she|they|him|them|his|her|their)\b", re.I)


def _as_speaker(clause: str) -> str:
    """A restatement that names the speaker, said in the speaker's own words (for the
    contradiction signals only): "Gina launched a campaign for her store" is what "Gina: I
    launched a campaign for my store" says, not another owner."""
    return _THIRD.sub(lambda m: _THIRD_EN[m.group(0).lower()], clause).replace("他", "我").replace("她", "我")


def _covers(mine: set[str], theirs: set[str], mine_text: str) -> bool:
    """Does a text with words `mine` hold at least COVERAGE of `theirs`?"""
    return bool(theirs) and len(theirs) - len(_missing(theirs, mine, mine_text)) >= COVERAGE * len(theirs)


def _missing(words: set[str], other: set[str], other_text: str) -> set[str]:
    """Words not said by the other text (a Chinese word also counts as said inside a longer one)."""
    flat = normalize(other_text)
    return {w for w in words if w not in other and not (starts_cjk(w) and w in flat)}


def anchor_terms(text: str) -> list[str]:
    """Index terms every duplicate of `text` must hold: its Latin words and numbers, and the
    character bigrams of its Chinese words (longer segmenter words may be cut differently)."""
    out = []
    for t in dict.fromkeys(content_words(text)):
        if not starts_cjk(t) or len(t) == 2:
            out.append(t)
    return out


@lru_cache(maxsize=1)
def _reworded() -> tuple[frozenset[str], frozenset[str]]:
    """Words the other text may say otherwise (stemmed English; Chinese): a synonym, or an
    informal spelling's words (gonna / going to: the index holds the text's own words, `plain`
    compares the spelled-out ones). Made once, on first use (the stemmer loads lazily)."""
    from memdream.model.tokens import stem as index_stem

    words = [*SYNONYMS_EN, *SYNONYMS_EN.values(), *(w for phrase in (*INFORMAL_EN, *INFORMAL_EN.values()) for w in phrase.split())]
    en = {f(w) for w in words for f in (stem, index_stem)}  # compared with plain words and with index terms
    return frozenset(en), frozenset(SYNONYMS_ZH) | frozenset(SYNONYMS_ZH.values())


def dedup_anchors(text: str) -> list[str]:
    """Index terms every entry `is_duplicate` could fold `text` into must hold: the plain
    words of the text (filler and synonyms left out, since the other text may word them
    differently), English stemmed, Chinese words as their character pairs."""
    synonyms, zh_syn = _reworded()
    out: list[str] = []
    for w in sorted(plain_words(plain(text), index_terms=True)):
        if starts_cjk(w):
            if any(x in w or w in x for x in zh_syn):
                continue
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        elif w not in synonyms:
            out.append(w)
    return list(dict.fromkeys(out))


_SWAP_TOKEN = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+")
_ARTICLES = frozenset({"a", "an", "the"})
SWAP_MAX_WORDS, SWAP_MAX_CHARS = 2, 4  # a replaced part this short (en words, zh characters) is a value


OWN_CJK_CHARS = 1  # Chinese characters of its own (beyond particles) that make a text say something else


def each_says_its_own(a: str, b: str) -> bool:
    """Does each text hold a word the other lacks: an English content word, or OWN_CJK_CHARS
    Chinese characters that are no particles? Read on texts with their signals set aside
    (`without_signals`), that is two facts ("... 莫干山，走了 5 公里" / "... 千岛湖，走了 7 公里"), not
    one said with another number; a swap keeps its words (小王欠我 / 我欠小王), and 已经 / 还
    are one side's particles at most."""
    x = _SWAP_TOKEN.findall(unicodedata.normalize("NFKC", plain(a)).lower())  # gonna = going to
    y = _SWAP_TOKEN.findall(unicodedata.normalize("NFKC", plain(b)).lower())

    def own(mine: list[str], theirs: list[str]) -> bool:
        other = set(theirs)
        left = [t for t in mine if t not in other and t not in EN_STOPWORDS and t not in CJK_STOP_CHARS and t not in _ARTICLES]
        return any(not starts_cjk(t) and stem(t) not in {stem(o) for o in other} for t in left) or sum(1 for t in left if starts_cjk(t)) >= OWN_CJK_CHARS

    return own(x, y) and own(y, x)


def value_swap(a: str, b: str) -> bool:
    """Are the two texts the same frame with one short part replaced ("My editor is Vim" /
    "... Emacs", 我在学吉他 / 我在学钢琴)? That is a slot given another value, however close
    an embedder finds them; a synonym swap looks the same, so only the word lists (`plain`)
    fold those."""
    return swapped_parts(a, b) is not None


def swapped_parts(a: str, b: str) -> tuple[list[str], list[str]] | None:
    """The short parts replaced between two texts of one frame (see `value_swap`), or None."""
    # Articles are no part of a value: "... is an americano" / "... is a flat white" is one frame.
    x = [t for t in _SWAP_TOKEN.findall(unicodedata.normalize("NFKC", plain(a)).lower()) if t not in _ARTICLES]
    y = [t for t in _SWAP_TOKEN.findall(unicodedata.normalize("NFKC", plain(b)).lower()) if t not in _ARTICLES]
    p = 0
    while p < min(len(x), len(y)) and x[p] == y[p]:
        p += 1
    s = 0
    while s < min(len(x), len(y)) - p and x[-1 - s] == y[-1 - s]:
        s += 1
    mx, my = x[p : len(x) - s], y[p : len(y) - s]
    if not mx or not my or p + s < max(1, min(len(mx), len(my))):
        return None
    if "".join(mx) == "".join(my) or (numbers(" ".join(mx)) and numbers(" ".join(mx)) == numbers(" ".join(my))):
        return None  # the same word spaced otherwise (VS Code), the same number written otherwise (三 / 3)

    def short(part: list[str]) -> bool:
        cjk = sum(1 for t in part if starts_cjk(t))
        return (cjk <= SWAP_MAX_CHARS) and (len(part) - cjk <= SWAP_MAX_WORDS)

    return (mx, my) if short(mx) and short(my) else None


MEANING_OVERLAP = 0.5  # an embedder's fold needs this share of the shorter text's plain words in the other
# ... and a text restating one sentence of a message this share of its own words (the
# speaker's name aside) in that sentence: a short sentence is close to many texts, so the words
# must carry more of the match. In the 90-day life with `use` the sentence folds keep 0.80-1.00
# of their words (a synonym or two swapped); e5's folds of another turn kept 0.60 and 0.67 ("Your
# store looks great - your customers will be so comfy" into "Whoa, your store looks great!").
RESTATED_OVERLAP = 0.75
# With an embedder: two texts whose cosine reaches this, and that `may_fold_by_meaning`, say one
# fact (measured on tests/data/fact_pairs.py with the default local embedder `use`:
# bench/fact_pairs.py, docs/benchmarks.md). The write path and the light phase use it.
RESTATEMENT_COSINE = 0.80


def restatement_cosine(embedder: object, options: "dict | None" = None) -> float:
    """The cosine at which `embedder` takes two texts for one fact: `[embedder]
    restatement_cosine` when set, else the embedder's own measured figure (cosines live in
    ranges of their own: e5 puts two facts of one topic at 0.8-0.9, `use` at 0.5-0.7), else
    RESTATEMENT_COSINE (an endpoint's model, unmeasured)."""
    set_ = (options or {}).get("restatement_cosine")
    if set_ is not None:
        return float(set_)
    return float(getattr(embedder, "restatement_cosine", RESTATEMENT_COSINE))


SENTENCE_MIN_WORDS = 3  # a sentence of a message compared on its own says at least this much


def message_sentences(text: str) -> list[str]:
    """The sentences of a message of several, each said by the message's speaker if it opens
    with one ("Gina: Since I lost my job at Door Dash, things have been tough."); none for a
    text of one sentence. Sentences saying fewer than SENTENCE_MIN_WORDS plain words
    ("Thanks, Jon!") are left out."""
    m = _SPEAKER.match(text)
    body = text[m.end():] if m else text
    who = f"{m.group(1)}: " if m else ""
    found = _sentences(body)
    if len(found) < 2:
        return []
    return [who + t for t in found if len(plain_words(plain(t))) >= SENTENCE_MIN_WORDS]


def restated_among(text: str, sentences: list[str], cosines: list[float], floor: float) -> int | None:
    """The place of the sentence, of cosine at least `floor` with `text`, that `text` says
    again (`may_fold_by_meaning(text, sentence, restates=True)`), the closest first; None if
    none (the write path's rule for one sentence of a message, index/slots.py)."""
    for i in sorted(range(len(sentences)), key=lambda i: -cosines[i]):
        if cosines[i] < floor:
            break
        if may_fold_by_meaning(text, sentences[i], restates=True):
            return i
    return None


def word_count(text: str) -> int:
    """How much a text says: its plain words (to keep the one that says more)."""
    return len(plain_words(plain(text)))


def may_fold_by_meaning(a: str, b: str, restates: bool = False) -> bool:
    """May an embedder's high cosine fold `a` and `b` into one line? Only when nothing says
    they differ: no contradiction signal either way, not a value swap, and at least
    MEANING_OVERLAP of the shorter one's plain words in the other (a restatement keeps most
    of its words; two facts on one topic do not). With `restates`, `a` is taken as the one
    restating `b` whatever their lengths: its words and each of its clauses must come from `b`."""
    # A restatement naming the speaker says "they" / "Caroline" where the message says "I": in
    # the speaker's own words, "Jon gets to share that" is no other person than "I get to share
    # that" (for the signals only, as the lexical rule does).
    sa, sb = _in_person(a, b), _in_person(b, a)
    if contradiction(sa, sb) or contradiction(sb, sa) or value_swap(*_in_own_words(a, b, sa, sb)) or other_act(a, b) or other_act(b, a):
        return False
    if set(numbers(a)) != set(numbers(b)):
        return False  # a number is a value: a restatement by meaning keeps every one of them
    pa, pb = plain(a), plain(b)
    wa, wb = plain_words(pa), plain_words(pb)
    if not wa or not wb:
        return False
    small, big, big_text, small_text = (wa, wb, pb, pa) if restates or len(wa) <= len(wb) else (wb, wa, pa, pb)
    speaker = speaker_words(big_text)
    if restates:  # the speaker's name is shared by construction: no evidence
        small = small - speaker
        if not small:
            return False
    if len(small) - len(_missing(small, big, big_text)) < (RESTATED_OVERLAP if restates else MEANING_OVERLAP) * len(small):
        return False
    # Each clause of the shorter one must draw on one clause of the longer, as the lexical rule
    # asks (`_justified`): "Sam drives a Kia" is close in meaning to "Sam drives a Volvo. His
    # wife drives a Kia." but joins two of its clauses.
    parts = _clause_words(big_text)
    if len(parts) < 2 and len(clauses(small_text)) < 2 and not restates:
        return True
    for clause in clauses(small_text):
        words = plain_words(clause) - speaker
        said = _in_person(clause, big_text, small_text)
        if words and not any(
            len(words) - len(_missing(words, w, p)) > MEANING_OVERLAP * len(words)  # more than half
            and not (contradiction(said, p) or contradiction(p, said) or _swaps_a_value(said, p))
            and (not (n := set(numbers(clause))) or n == set(numbers(p)))  # its numbers, all from that clause
            for p, w in parts
        ):
            return False
    return True


# Words that are no value: a part swapped between two clauses that holds only these ("I have
# been" / "I've been") is the same frame said otherwise.
_FUNCTION = EN_STOPWORDS | {"ve", "m", "s", "re", "ll", "d", "am", "been", "being", "i"}


def _swaps_a_value(a: str, b: str) -> bool:
    """`value_swap`, unless what is swapped holds no content word (a pronoun, an auxiliary)."""
    parts = swapped_parts(a, b)
    return parts is not None and any(t not in _FUNCTION for t in parts[0] + parts[1])


def _in_person(text: str, message: str, whole: str | None = None) -> str:
    """`text` as the speaker of `message` would say it, when `message` opens with a speaker
    that `text` (or the `whole` it is part of) names without opening with them: "Gina lost her
    job" -> "I lost my job" for "Gina: I lost my job"; otherwise `text` itself."""
    m = _SPEAKER.match(message)
    if not m or _SPEAKER.match(whole if whole is not None else text):
        return text
    if not (speaker_words(message) & plain_words(whole if whole is not None else text)):
        return text
    return _as_speaker(_name_as_i(text, m.group(1)))


def _in_own_words(a: str, b: str, sa: str, sb: str) -> tuple[str, str]:
    """The two texts as the value-swap signal compares them: when one names the speaker the
    other opens with (`_in_person` turned it into the speaker's words, `sa` or `sb`), that one in
    the speaker's words and the message without its label. "Melanie mentioned that nature's
    amazing, here's a painting they did recently" against "Melanie: Nature's amazing, here's a
    painting I did recently." swaps no value (they / I is the same person, and so is the label
    Melanie / I); compared as written, it swapped "they" for "I" and was never folded."""
    if sa != a:
        return sa, _SPEAKER.sub("", b, count=1)
    if sb != b:
        return _SPEAKER.sub("", a, count=1), sb
    return a, b


def _name_as_i(clause: str, name: str) -> str:
    """The clause with the speaker's name said as the speaker says it ("Caroline's" -> "my")."""
    return re.sub(r"\b" + re.escape(name) + r"(?:'s|’s)?\b", lambda m: "my" if m.group(0) != name else "I", clause)
