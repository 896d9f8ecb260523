"""The credential detector imports detect-secrets only for a text that could hold what one of
its plugins finds (issue 21: the import is ~0.15 s of every new process that writes). The
shape gate must be a necessary condition: wherever a plugin, run directly, finds a match we
accept, the gate lets the text through. Checked on both labelled corpora and on strings
generated from every plugin's own patterns."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdream.model.secret_engine import Engine, may_match_library_vendor
from memdream.model.secrets import find_secret

ENGINE = Engine()
DS = ENGINE.ds  # the plugins the engine uses, run here without the gate


def _corpus(name: str) -> list[str]:
    path = Path(__file__).parent / "data" / name
    spec = importlib.util.spec_from_file_location(f"memdream_gate_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [item[0] for item in module.SECRETS + module.HARMLESS]


TEXTS = _corpus("secret_corpus.py") + _corpus("secret_corpus_independent.py")


def _library_vendor_finds(text: str) -> bool:
    return ENGINE.library_vendor_finding(text) is not None


def test_the_gate_passes_every_corpus_text_a_plugin_finds_something_in() -> None:
    found = [t for t in TEXTS if _library_vendor_finds(t)]
    assert len(found) >= 30  # the corpora do exercise the plugins
    assert [t for t in found if not may_match_library_vendor(t)] == []
    for t in TEXTS:
        if any(True for _ in DS["private_key"].analyze_string(t)):
            assert "begin" in t.lower() or "putty" in t.lower(), t
        if any(True for _ in DS["basic_auth"].analyze_string(t)):
            assert "://" in t, t


def test_plain_sentences_do_not_need_the_library() -> None:
    for text in ("I prefer dark roast coffee after lunch", "我住在杭州，每天骑车上班", "Meeting moved to 3pm on Friday"):
        assert not may_match_library_vendor(text)
        assert find_secret(text) is None


def _patterns() -> list[re.Pattern[str]]:
    out = []
    for plugin, _d, _a in DS["vendors"]:
        for pattern in plugin.denylist:
            if "(?<=" not in pattern.pattern:  # hypothesis cannot generate lookbehinds
                out.append(pattern)
    return out


PATTERNS = _patterns()


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.pattern[:40] for p in PATTERNS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_the_gate_passes_whatever_a_plugin_pattern_generates(pattern: re.Pattern[str], data: st.DataObject) -> None:
    token = data.draw(st.from_regex(pattern, fullmatch=True))
    text = f"note: {token} ok"
    if _library_vendor_finds(text):
        assert may_match_library_vendor(text), text
