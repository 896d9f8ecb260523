"""Property tests over hostile input: parsers, config, importers and queries never crash or hang."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdream.config import load_config
from memdream.errors import MemdreamError
from memdream.importers import Skipped, read
from memdream.store.format import parse_document
from memdream.store.transcripts import Transcript, chunks

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], database=None)
lines = st.lists(
    st.one_of(
        st.text(max_size=80),
        st.builds(lambda t, m: f"- {t} <!--m:{m}-->", st.text(max_size=30), st.text(max_size=60)),
        st.sampled_from(["- ", "-", "* x", "- a <!--m:", "- b -->", "- c <!--m:id=;;==%zz%u12-->", "<!--m:id=x-->"]),
    ),
    max_size=20,
).map("\n".join)


@FAST
@given(lines)
def test_any_text_parses_and_renders_back(text: str) -> None:
    doc = parse_document(text)
    assert doc.render() == text or doc.render() == text + "\n" or text == ""
    for e in doc.entries():
        assert isinstance(e.text, str)


@FAST
@given(st.binary(max_size=400))
def test_config_never_crashes(tmp_path: Path, data: bytes) -> None:
    root = tmp_path / "cfg"
    root.mkdir(exist_ok=True)
    (root / "memdream.toml").write_bytes(data)
    try:
        load_config(root, env={})
    except MemdreamError:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(["role", "content", "mapping", "message", "parts", "author", "parent", "current_node", "id", "timestamp", "title"]), children, max_size=5),
    max_leaves=20,
)


@FAST
@given(fmt=st.sampled_from(["jsonl", "chatgpt", "markdown"]), payload=st.one_of(st.binary(max_size=300), json_values.map(lambda v: json.dumps(v).encode())))
def test_importers_never_crash(tmp_path: Path, fmt: str, payload: bytes) -> None:
    f = tmp_path / f"input.{fmt}"
    f.write_bytes(payload)
    for item in read(fmt, f):
        assert isinstance(item, (Transcript, Skipped))
        if isinstance(item, Transcript):
            assert item.session_id


@FAST
@given(st.text(max_size=300))
def test_transcript_chunks_never_crash(text: str) -> None:
    for c in chunks(text):
        assert c.text.strip()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], database=None)
@given(query=st.text(max_size=60))
def test_recall_and_search_accept_any_query(mem, query: str) -> None:
    if not mem.list():
        for t in ("我在余杭区", "I prefer dark themes", "千万记得加超时兜底"):
            mem.remember(t)
    for h in mem.recall(query, k=3):
        assert h.score >= 0
    mem.search_raw(query)


def test_chatgpt_importer_with_non_string_node_ids(tmp_path: Path) -> None:
    """Found by the property test above: a list as current_node or parent crashed the walk."""
    f = tmp_path / "c.json"
    f.write_text(json.dumps([{"mapping": {"a": {"parent": ["x"], "message": {"author": {"role": "user"}, "content": {"parts": ["hi"]}}}}, "current_node": ["a"]}]), encoding="utf-8")
    items = list(read("chatgpt", f))
    assert len(items) == 1 and isinstance(items[0], Transcript) and items[0].messages[0].content == "hi"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(["op", "ids", "id", "text", "why", "type", "operations", "x"]), inner, max_size=5),
    max_leaves=25,
)


@FAST
@given(json_values)
def test_the_dream_validator_takes_any_reply_without_crashing(reply) -> None:
    """Whatever JSON a model answers, the cage's checks either accept an operation or raise
    Invalid: never another exception, never an id that was not shown."""
    from memdream.dream.validate import Ids, Invalid, check_text, operations

    shown = {1: "Lin drinks coffee every morning", 2: "Lin takes coffee with oat milk", 3: "我每周三去游泳 2 次"}
    ids = Ids(shown, frozenset({3}))
    try:
        ops = operations(reply)
    except Invalid:
        return
    for op in ops:
        if not isinstance(op, dict):
            continue
        try:
            chosen = ids.take(op.get("ids"), at_least=2)
            assert set(chosen) <= {1, 2}
            text = check_text(op.get("text"), [shown[i] for i in chosen], 2000, keep_numbers_of=[shown[i] for i in chosen])
            assert isinstance(text, str) and text
            ids.commit(chosen)
        except Invalid:
            pass
