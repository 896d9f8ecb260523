"""The line format (DESIGN section 3): round trips, tolerance, hand-written lines."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from memdream.model.entry import Entry
from memdream.store.format import BULLETS, parse_document, parse_line, parse_line_checked, render_line

SPECIALS = ["我在西湖区", "所在地", "😀", ";", "=", "%", "%41", "%u2028", "-->", "<!--m:", "<!--m:id=x-->", "\n", "\r\n", "\u2028", " ", "\t", ">"]
text = st.lists(st.one_of(st.text(), st.sampled_from(SPECIALS)), max_size=6).map("".join)
aware = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=8)), timezone(timedelta(hours=-5, minutes=-30))])
)
finite = st.floats(allow_nan=False, allow_infinity=False)
known = {"id", "t", "subj", "vf", "vt", "conf", "hc", "sup", "src", "pin", "ca", "la", "sal", "end", "cf", "by", "e"}
extra_key = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda k: k not in known)

entries = st.builds(
    Entry,
    text=text,
    id=text,
    type=text,
    subject=text,
    valid_from=st.none() | aware,
    valid_to=st.none() | aware,
    confidence=st.none() | finite,
    hits=st.integers(min_value=-(10**6), max_value=10**9),
    supersedes=text,
    source=text,
    pinned=st.booleans(),
    created_at=st.none() | aware,
    last_recalled=st.none() | aware,
    salience=finite,
    end=text,
    conflicts_with=text,
    superseded_by=text,
    extra=st.lists(st.tuples(extra_key, text), max_size=3, unique_by=lambda kv: kv[0]).map(tuple),
    bullet=st.sampled_from(BULLETS),
)


@settings(max_examples=400, deadline=None)
@given(entries)
def test_parse_render_round_trip(e: Entry) -> None:
    line = render_line(e)
    assert "\n" not in line and "\r" not in line
    assert line.splitlines() == [line]  # no character any reader would take as a line break
    assert parse_line(line) == e


@settings(max_examples=200, deadline=None)
@given(st.lists(entries, max_size=5), st.lists(st.text().map(lambda s: s.replace("\n", " ")), max_size=3))
def test_document_round_trip_keeps_every_line(es: list[Entry], prose: list[str]) -> None:
    lines = ["# MEMORY", ""] + [p for p in prose if not p[:2] in ("- ", "* ", "+ ")] + [render_line(e) for e in es]
    text = "\n".join(lines) + "\n"
    doc = parse_document(text)
    assert doc.render() == text
    assert doc.entries() == es


@settings(max_examples=200, deadline=None)
@given(st.text().filter(lambda s: not any(c in s for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")))
def test_hand_written_line_text_is_exact(body: str) -> None:
    line = "- " + body
    e = parse_line(line)
    if not (body.endswith("-->") and "<!--m:" in body):
        assert e.text == body
        # Adopting it (adding metadata) keeps the visible text byte-identical.
        adopted = e.evolve(id="abc123", source="manual")
        assert parse_line(render_line(adopted)).text == body


def test_seed_line_parses_with_spaces_and_date_only() -> None:
    e = parse_line("- 我在西湖区 <!--m:subj=所在地;  vf=2026-06-20;conf=0.90;hc=2-->")
    assert e.text == "我在西湖区"
    assert e.subject == "所在地"
    assert e.valid_from == datetime(2026, 6, 20, tzinfo=timezone.utc)
    assert e.confidence == 0.9 and e.hits == 2 and e.id == ""


def test_line_without_metadata_takes_zero_values() -> None:
    e = parse_line("- I prefer dark themes")
    assert e == Entry(text="I prefer dark themes")
    assert e.hits == 0 and e.valid_to is None and not e.pinned


def test_broken_and_unknown_fields() -> None:
    parsed = parse_line_checked("- x <!--m:id=a1;hc=lots;vf=yesterday;mood=happy;flag;conf=nan-->")
    e = parsed.entry
    assert e.id == "a1" and e.hits == 0 and e.valid_from is None and e.confidence is None
    assert ("mood", "happy") in e.extra
    assert len(parsed.problems) == 4  # hc, vf, conf, and the token without '='
    # Unknown fields survive a rewrite.
    again = parse_line(render_line(e.evolve(hits=3)))
    assert ("mood", "happy") in again.extra and again.hits == 3


def test_text_with_newline_is_escaped_and_marked() -> None:
    e = Entry(text="line one\nline two 100%", id="a")
    line = render_line(e)
    assert "e=1" in line and "%0A" in line and "%25" in line
    assert parse_line(line) == e


def test_percent_in_plain_text_is_written_as_is() -> None:
    line = render_line(Entry(text="100% sure, 5%3B off", id="a"))
    assert line.startswith("- 100% sure, 5%3B off <!--m:")
    assert parse_line(line).text == "100% sure, 5%3B off"


def test_non_entry_lines_are_kept_byte_for_byte() -> None:
    text = "# Title\n\nSome prose with - dashes\n  - nested item\n---\n- real entry\r\n"
    doc = parse_document(text)
    assert doc.render() == text
    assert [e.text for e in doc.entries()] == ["real entry"]


def test_find_all_finds_each_id_in_one_pass_as_find_does() -> None:
    """`Document.find_all` (the recall-count fold's one pass over a file) answers what `find`
    answers for each id: the first line holding it, nothing for an id that is absent or only
    mentioned in a text, nothing for a line without an id."""
    from memdream.model.entry import Entry
    from memdream.store.format import parse_document, render_line

    a, b = Entry(text="我喜欢喝龙井茶", id="aaa111"), Entry(text="I live in Lisbon", id="bbb222")
    mention = Entry(text="see aaa111 and ccc333 for details", id="ddd444")
    text = "# Recall\n\n" + "\n".join([render_line(a), "- a line typed by hand", render_line(mention), render_line(b), render_line(a)]) + "\n"
    doc = parse_document(text)
    wanted = {"aaa111", "bbb222", "ccc333", "zzz999"}
    assert doc.find_all(wanted) == {i: doc.find(i) for i in wanted if doc.find(i) >= 0} == {"aaa111": 2, "bbb222": 5}
    assert doc.find_all(set()) == {}


def _quick_id_reference(line: str) -> str:
    """quick_id as it read every line before its fast path: each token of the comment in turn."""
    from memdream.store.format import META_CLOSE, META_OPEN, _unescape

    rest = line.rstrip("\r")
    if not rest.endswith(META_CLOSE):
        return ""
    at = rest.rfind(META_OPEN)
    if at < 0:
        return ""
    for token in rest[at + len(META_OPEN) : -len(META_CLOSE)].split(";"):
        key, _, value = token.partition("=")
        if key.strip() == "id":
            value = value.strip()
            return _unescape(value) if "%" in value else value
    return ""


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["- ", "x", " ", "<!--m:", "id=", "id", "=", ";", "-->", "%3B", "%", "t=fact", " id =", "\r", "ab", "-", ">"]), max_size=12))
def test_quick_id_reads_the_id_as_each_token_in_turn(pieces: list[str]) -> None:
    """quick_id's fast path (the id as render_line writes it, first) gives what reading each token
    of the comment in turn gives, for any line."""
    from memdream.store.format import quick_id

    line = "".join(pieces)
    assert quick_id(line) == _quick_id_reference(line)


def test_quick_id_of_rendered_lines() -> None:
    from memdream.store.format import quick_id

    for e in (Entry(text="a; b <!--m:id=fake-->", id="k3f9q2", type="fact"), Entry(text="x", id="a;b%c"), Entry(text="y")):
        line = render_line(e)
        assert quick_id(line) == _quick_id_reference(line) == e.id
