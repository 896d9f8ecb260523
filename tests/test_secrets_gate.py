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
from memdream.model.secret_rules import GATES
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
            assert any(w in t.lower() for w in GATES["private_key"]), t
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


# ---- the home-made checks' gates (secret_rules.GATES and each vendor rule's keywords) ----------
#
# A check runs, and its patterns are compiled, only on a text holding one of its gate's words
# (folded: script.fold_case). That is safe only if every match of the check's patterns holds
# one. Checked on matches generated from each pattern, with its lookbehinds and lookaheads taken
# out (hypothesis cannot generate lookbehinds; without its assertions a pattern matches more
# strings, so the check is stricter), and on the corpora with letters swapped for the characters
# (?i) takes for them.

from memdream.model.script import fold_case as fold  # noqa: E402
from regex_gen import generable, matches  # noqa: E402

R = ENGINE.r
GATED = [
    ("url_credentials", R.url_userinfo),
    ("url_credentials", R.query_secret),
    ("auth_headers", R.bearer),
    ("auth_headers", R.basic),
    ("natural_language", R.credential_word),
    ("command_lines", R.cli_password),
    ("command_lines", R.pair),
    ("recovery_material", R.seed_phrase),
    ("recovery_material", R.recovery_codes),
    ("env_assignment", R.env_assignment),
] + [(keywords, regex) for keywords, regex, _d, _r in R.vendors]


def _words(gate: str | tuple[str, ...]) -> tuple[str, ...]:
    return GATES[gate] if isinstance(gate, str) else gate


@pytest.mark.parametrize("gate,pattern", GATED, ids=[f"{g if isinstance(g, str) else g[0]}:{p.pattern[:30]}" for g, p in GATED])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_match_of_a_gated_pattern_holds_a_gate_word(gate: str | tuple[str, ...], pattern: re.Pattern[str], data: st.DataObject) -> None:
    match = data.draw(matches(pattern))
    folded = fold(match)
    assert any(w in folded for w in _words(gate)), (match, _words(gate))


# The credential words are one alternation of some thirty words: enough examples to draw each.
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_credential_word_holds_a_gate_word(data: st.DataObject) -> None:
    match = data.draw(matches(R.credential_word))
    folded = fold(match)
    assert any(w in folded for w in GATES["natural_language"]), match


def test_every_chinese_japanese_korean_credential_word_is_a_gate_word() -> None:
    # Drawn rarely among the rest: each is a plain literal of the alternation, so read them off.
    source = re.sub(r"\[[^\]]*\]", "", generable(R.credential_word).pattern)
    runs = re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+", source)
    assert len(runs) >= 10
    for run in runs:
        assert any(w in run for w in GATES["natural_language"]), run


def test_the_fold_knows_every_letter_ignorecase_takes_for_an_ascii_one() -> None:
    import sys

    every = "".join(map(chr, range(sys.maxunicode + 1)))
    taken = re.findall("[a-z]", every, re.IGNORECASE)  # every character (?i) takes for a letter
    assert len(taken) > 52  # the odd ones are there: ı, İ, ſ, K
    for ch in taken:
        letter = fold(ch)
        assert len(letter) == 1 and "a" <= letter <= "z" and re.fullmatch(letter, ch, re.IGNORECASE), hex(ord(ch))


def _swapped(text: str) -> str:
    return text.replace("s", "\u017f").replace("i", "\u0131").replace("I", "\u0130").replace("k", "\u212a")


def test_the_gates_change_no_finding_on_the_corpora() -> None:
    ungated = Engine()
    ungated.checks = tuple((check, None) for check, _gate in ungated.checks)
    ungated_vendors = [(("",), regex, d, r) for _k, regex, d, r in ungated.r.vendors]  # "" is in every text
    ungated.r.vendors = ungated_vendors
    texts = TEXTS + [_swapped(t) for t in TEXTS]
    differ = [t for t in texts if ungated.find(t) != ENGINE.find(t)]
    assert differ == []
    assert sum(ENGINE.find(t) is not None for t in texts) >= 300  # the corpora and their swapped forms do hold secrets
