"""Parse and render one memory line, and a whole memory file (DESIGN section 3).

    - 我在西湖区 <!--m:id=k3f9q2;t=fact;subj=所在地;vf=2026-06-20T09:00:00+08:00;sup=a81xz0-->

Rules:
- A memory is a top-level list item (``- ``, ``* `` or ``+ `` at column 0). Every other
  line (headings, blank lines, prose, indented continuation lines) is kept byte for byte.
- The trailing ``<!--m:...-->`` comment holds ``key=value`` pairs separated by ``;``.
  Values are percent-escaped for ``%``, ``;``, ``=``, ``<``, ``>``, line breaks and
  leading/trailing spaces, so any value round-trips.
- The visible text is written as is. Only a text that contains a line break cannot sit on
  one line: it is then percent-escaped (``%`` and line breaks) and the comment carries
  ``e=1``. A line without ``e=1`` is never decoded, so what a person typed is what it says.
- Missing fields take zero values; unknown fields are kept in order and written back;
  a known field with a broken value reads as its zero value and is reported as a problem.
- ``parse_line(render_line(e)) == e`` for every entry.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone

from memdream.model.entry import Entry
from memdream.model import lazyre as re

META_OPEN = "<!--m:"
META_CLOSE = "-->"
BULLETS = ("-", "*", "+")

# Characters str.splitlines() treats as line boundaries: none may appear raw inside a line.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_VALUE_SPECIALS = set("%;=<>" + LINE_BREAKS)
_TEXT_SPECIALS = set("%" + LINE_BREAKS)
_PCT = re.compile(r"%([0-9A-Fa-f]{2})|%u([0-9A-Fa-f]{4})")

# Canonical order of known keys on a rendered line.
_KEYS = ("id", "t", "subj", "vf", "vt", "conf", "hc", "sup", "src", "pin", "ca", "la", "sal", "end", "cf", "by")


def _escape(s: str, specials: set[str]) -> str:
    out = []
    for ch in s:
        if ch in specials:
            code = ord(ch)
            out.append(f"%{code:02X}" if code < 0x100 else f"%u{code:04X}")
        else:
            out.append(ch)
    return "".join(out)


def _unescape(s: str) -> str:
    def sub(m: re.Match[str]) -> str:
        return chr(int(m.group(1) or m.group(2), 16))

    return _PCT.sub(sub, s)


def escape_value(value: str) -> str:
    """Escape a metadata value; leading and trailing whitespace too (the parser trims it)."""
    body = _escape(value, _VALUE_SPECIALS)
    stripped = body.strip()
    if stripped == body:
        return body
    lead = body[: len(body) - len(body.lstrip())]
    trail = body[len(body.rstrip()) :] if stripped else ""
    return _escape(lead, set(lead)) + stripped + _escape(trail, set(trail))


def format_time(d: datetime) -> str:
    return d.isoformat()


def parse_time(value: str) -> datetime:
    """ISO 8601 date or datetime; a value without an offset is taken as UTC."""
    d = datetime.fromisoformat(value)
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d


def is_entry_line(line: str) -> bool:
    return len(line) >= 2 and line[0] in BULLETS and line[1] == " "


@dataclass
class ParsedLine:
    entry: Entry
    problems: list[str] = field(default_factory=list)
    has_meta: bool = False


def parse_line_checked(line: str, layer: str = "") -> ParsedLine:
    """Parse one entry line (without its newline). The line must satisfy `is_entry_line`."""
    line = line.rstrip("\r")
    bullet, rest = line[0], line[2:]
    problems: list[str] = []
    meta_at = rest.rfind(META_OPEN) if rest.endswith(META_CLOSE) else -1
    if meta_at < 0:
        return ParsedLine(Entry(text=rest, bullet=bullet, layer=layer), problems, False)
    text = rest[:meta_at]
    if text.endswith(" "):
        text = text[:-1]
    body = rest[meta_at + len(META_OPEN) : -len(META_CLOSE)]
    fields: dict[str, object] = {}
    extra: list[tuple[str, str]] = []
    encoded = False
    for token in body.split(";"):
        if not token.strip():
            continue
        if "=" not in token:
            problems.append(f"field without '=': {token.strip()!r}")
            extra.append((token.strip(), ""))
            continue
        key, raw = token.split("=", 1)
        key, raw = key.strip(), raw.strip()
        value = _unescape(raw) if "%" in raw else raw
        try:
            if key == "id":
                fields["id"] = value
            elif key == "t":
                fields["type"] = value
            elif key == "subj":
                fields["subject"] = value
            elif key == "vf":
                fields["valid_from"] = parse_time(value)
            elif key == "vt":
                fields["valid_to"] = parse_time(value)
            elif key == "conf":
                fields["confidence"] = _finite(float(value))
            elif key == "hc":
                fields["hits"] = int(value)
            elif key == "sup":
                fields["supersedes"] = value
            elif key == "src":
                fields["source"] = value
            elif key == "pin":
                fields["pinned"] = value not in ("", "0", "false", "no")
            elif key == "ca":
                fields["created_at"] = parse_time(value)
            elif key == "la":
                fields["last_recalled"] = parse_time(value)
            elif key == "sal":
                fields["salience"] = _finite(float(value))
            elif key == "end":
                fields["end"] = value
            elif key == "cf":
                fields["conflicts_with"] = value
            elif key == "by":
                fields["superseded_by"] = value
            elif key == "pend":
                fields["pending"] = value
            elif key == "e":
                encoded = value == "1"
            else:
                extra.append((key, value))
        except (ValueError, OverflowError):
            problems.append(f"bad value for {key!r}: {raw!r}")
    if encoded:
        text = _unescape(text)
    entry = Entry(text=text, bullet=bullet, extra=tuple(extra), layer=layer, **fields)  # type: ignore[arg-type]
    return ParsedLine(entry, problems, True)


def _finite(x: float) -> float:
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("not finite")
    return x


def quick_id(line: str) -> str:
    """The id on an entry line without parsing the rest ('' when it has none): for passes
    over thousands of lines that only need ids."""
    rest = line.rstrip("\r")
    if not rest.endswith(META_CLOSE):
        return ""
    at = rest.rfind(META_OPEN)
    if at < 0:
        return ""
    key_at = at + len(META_OPEN)
    if rest.startswith("id=", key_at):  # as render_line writes it, id first: its token alone is cut out
        end = rest.find(";", key_at)
        if end < 0:
            end = len(rest) - len(META_CLOSE)
        value = rest[key_at + 3 : end].strip()
        return _unescape(value) if "%" in value else value
    for token in rest[key_at : -len(META_CLOSE)].split(";"):
        key, _, value = token.partition("=")
        if key.strip() == "id":
            value = value.strip()
            return _unescape(value) if "%" in value else value
    return ""


def parse_line(line: str, layer: str = "") -> Entry:
    return parse_line_checked(line, layer).entry


def _meta_pairs(e: Entry) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []

    def put(key: str, value: str | None) -> None:
        if value is not None and value != "":
            pairs.append((key, value))

    put("id", e.id)
    put("t", e.type)
    put("subj", e.subject)
    put("vf", format_time(e.valid_from) if e.valid_from else None)
    put("vt", format_time(e.valid_to) if e.valid_to else None)
    put("conf", repr(e.confidence) if e.confidence is not None else None)
    put("hc", str(e.hits) if e.hits else None)
    put("sup", e.supersedes)
    put("src", e.source)
    put("pin", "1" if e.pinned else None)
    put("ca", format_time(e.created_at) if e.created_at else None)
    put("la", format_time(e.last_recalled) if e.last_recalled else None)
    put("sal", repr(e.salience) if e.salience else None)
    put("end", e.end)
    put("cf", e.conflicts_with)
    put("by", e.superseded_by)
    put("pend", e.pending)
    return pairs


def render_line(e: Entry) -> str:
    """Render an entry as one line (no trailing newline)."""
    text = e.text
    pairs = _meta_pairs(e)
    if any(ch in LINE_BREAKS for ch in text):
        text = _escape(text, _TEXT_SPECIALS)
        pairs.append(("e", "1"))
    tokens = [f"{k}={escape_value(v)}" for k, v in pairs]
    tokens += [f"{k}={escape_value(v)}" if v else k for k, v in e.extra]
    bullet = e.bullet if e.bullet in BULLETS else "-"
    return f"{bullet} {text} {META_OPEN}{';'.join(tokens)}{META_CLOSE}"


# ---------------------------------------------------------------------------------------
# Whole files


class Line:
    """One line of a memory file: its exact text, and the entry it holds if it is one.

    The entry is parsed on first use: a write touches one or two lines of a file, so most
    lines are never parsed at all.
    """

    __slots__ = ("raw", "_parsed")

    def __init__(self, raw: str, entry: Entry | None = None) -> None:
        self.raw = raw
        self._parsed: ParsedLine | None = ParsedLine(entry, [], True) if entry is not None else None

    @property
    def is_entry(self) -> bool:
        return is_entry_line(self.raw)

    def _parse(self) -> ParsedLine | None:
        if self._parsed is None and is_entry_line(self.raw):
            self._parsed = parse_line_checked(self.raw)
        return self._parsed

    @property
    def entry(self) -> Entry | None:
        p = self._parse()
        return p.entry if p is not None else None

    @property
    def has_meta(self) -> bool:
        p = self._parse()
        return p is not None and p.has_meta

    @property
    def problems(self) -> list[str]:
        p = self._parse()
        return p.problems if p is not None else []

    def may_lack_id(self) -> bool:
        """Cheap test: could this entry line be without an id (so the writer must adopt it)?"""
        if not is_entry_line(self.raw):
            return False
        at = self.raw.rfind(META_OPEN)
        return at < 0 or "id=" not in self.raw[at:]

    def may_hold(self, entry_id: str) -> bool:
        """Cheap test before parsing: does the line's comment mention this id at all?"""
        at = self.raw.rfind(META_OPEN)
        return at >= 0 and entry_id in self.raw[at:]


@dataclass
class Document:
    lines: list[Line]
    trailing_newline: bool = True

    def entries(self) -> list[Entry]:
        return [e for e in (ln.entry for ln in self.lines) if e is not None]

    def find(self, entry_id: str) -> int:
        """Index of the line holding `entry_id`, or -1."""
        if not entry_id:
            return -1
        for i, ln in enumerate(self.lines):
            if ln.may_hold(entry_id) and ln.entry is not None and ln.entry.id == entry_id:
                return i
        return -1

    def find_all(self, entry_ids: set[str]) -> dict[str, int]:
        """{id: index of the line holding it} for those of `entry_ids` found: one pass over the
        lines (`find` for each id walked the document once per id: a batch of recall counts
        touching a few hundred lines of a 1,000-line file read it a few hundred times)."""
        out: dict[str, int] = {}
        if not entry_ids:
            return out
        for i, ln in enumerate(self.lines):
            raw = ln.raw
            if len(raw) < 2 or raw[0] not in BULLETS or raw[1] != " ":  # not an entry line (is_entry_line)
                continue
            eid = quick_id(raw)
            if eid in entry_ids and eid not in out and ln.entry is not None and ln.entry.id == eid:
                out[eid] = i
        return out

    def set_entry(self, index: int, entry: Entry) -> None:
        self.lines[index] = Line(render_line(entry), entry)

    def append_entry(self, entry: Entry) -> None:
        # Keep the file tidy: no blank line is needed between list items.
        self.lines.append(Line(render_line(entry), entry))

    def remove(self, index: int) -> Entry | None:
        return self.lines.pop(index).entry

    def render(self) -> str:
        if not self.lines:
            return ""
        body = "\n".join(ln.raw for ln in self.lines)
        return body + "\n" if self.trailing_newline else body


def parse_document(text: str) -> Document:
    """Split on "\\n" only (never str.splitlines, which also splits on other characters)."""
    if text == "":
        return Document([], True)
    trailing = text.endswith("\n")
    raw_lines = text[:-1].split("\n") if trailing else text.split("\n")
    return Document([Line(raw) for raw in raw_lines], trailing)


def line_version(raw: str) -> str:
    """A short hash of a memory line as the index holds it: a change made against one version
    of a line (the web console's edit) is refused once the line reads otherwise."""
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
