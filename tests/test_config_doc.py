"""docs/config.md is the configuration reference: every key the code knows is in it, in its
section, with the default the code uses; every MEMDREAM_* variable the code reads is named."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from memdream.config import _KNOWN, CONFIG_TEMPLATE, VAULT_FORMAT, DreamConfig, load_config

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")


def documented() -> dict[tuple[str, str], str]:
    """(section, key) -> the default column's text, from the tables of docs/config.md."""
    out: dict[tuple[str, str], str] = {}
    section = None
    for line in DOC.splitlines():
        head = re.match(r"## (?:\[(\w+)\]|(Top level))", line)
        if head:
            section = head.group(1) or ""
            continue
        if line.startswith("## "):
            section = None
        row = re.match(r"\| `(\w+)` \| ([^|]+) \|", line)
        if row and section is not None:
            out[(section, row.group(1))] = row.group(2).strip()
    return out


def value(text: str):  # type: ignore[no-untyped-def]
    return tomllib.loads(f"v = {text.strip('`')}")["v"] if text.startswith("`") else None


def test_every_known_key_is_documented_in_its_section_and_nothing_else() -> None:
    known = {(s, k) for s, keys in _KNOWN.items() for k in keys if not (s == "" and k in _KNOWN)}
    assert set(documented()) == known


def test_the_documented_defaults_are_the_code_defaults(tmp_path: Path) -> None:
    cfg = load_config(tmp_path / "empty", env={})  # no memdream.toml, no environment
    d = DreamConfig()
    code = {
        ("", "format"): VAULT_FORMAT,
        ("", "timezone"): cfg.timezone,
        ("", "deep_dream_enabled"): cfg.dream.deep_dream_enabled,
        ("scope", "user"): cfg.user,
        ("scope", "agent"): cfg.agent,
        ("write", "max_chars"): cfg.max_text_chars,
        ("recall", "fusion"): cfg.fusion,
        ("llm", "base_url"): cfg.llm_base_url,
        ("store", "url"): cfg.store,
        ("llm", "model"): cfg.llm_model,
        ("llm", "api_key_env"): "MEMDREAM_LLM_API_KEY",
        ("llm", "timeout"): cfg.llm_timeout,
        ("dream", "deep_dream_enabled"): d.deep_dream_enabled,
        ("dream", "resident_budget"): d.resident_budget,
        ("dream", "canaries"): list(d.canaries),
        ("dream", "light_every_minutes"): d.light_every_minutes,
        ("dream", "nightly_at"): d.nightly_at,
        ("dream", "flush_at"): d.flush_at,
        ("dream", "replay_every_days"): d.replay_every_days,
        ("embedder", "name"): cfg.embedder,
        ("embedder", "base_url"): "",
        ("embedder", "model"): "",
        ("embedder", "api_key_env"): "MEMDREAM_EMBEDDER_API_KEY",
        ("embedder", "restatement_cosine"): cfg.embedder_options.get("restatement_cosine"),  # unset: the embedder's own
    }
    docs = documented()
    assert set(code) == set(docs)
    for key, default in code.items():
        assert value(docs[key]) == default, f"{key}: docs say {docs[key]}, the code uses {default!r}"
    # The llm and embedder key variables are the code's own defaults, not only the doc's.
    src = (ROOT / "src" / "memdream" / "embed" / "remote.py").read_text(encoding="utf-8")
    assert 'table.get("api_key_env", "MEMDREAM_EMBEDDER_API_KEY")' in src
    assert 'table.get("base_url", "")' in src and 'table.get("model", "")' in src


def test_each_template_setting_is_in_the_reference() -> None:
    """The commented template memdream init writes names only documented keys."""
    section = ""
    for line in CONFIG_TEMPLATE.splitlines():
        if m := re.match(r"\[(\w+)\]", line):
            section = m.group(1)
        elif m := re.match(r"#?\s*(\w+) = ", line):
            assert (section, m.group(1)) in documented(), line


def test_every_environment_variable_the_code_reads_is_named() -> None:
    names = set()
    for p in (ROOT / "src" / "memdream").rglob("*.py"):
        names |= set(re.findall(r"MEMDREAM_[A-Z][A-Z_]*[A-Z]", p.read_text(encoding="utf-8")))
    names -= {"MEMDREAM_LLM"}  # a prefix in a message ("MEMDREAM_LLM_*")
    missing = sorted(n for n in names if not re.search(rf"`\"?{n}\"?`", DOC))
    assert not missing, missing
