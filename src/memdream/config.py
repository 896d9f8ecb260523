"""Configuration: the only reader of memdream.toml and MEMDREAM_* variables.

Precedence: explicit arguments (CLI flags, function arguments) > environment > memdream.toml
in the vault > defaults. The environment names are a public contract (DESIGN section 10).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memdream.errors import ConfigError
from memdream.model.scoring import FUSIONS
from memdream.store.vault import CONFIG_FILE, DEFAULT_AGENT, DEFAULT_USER

ENV_VAULT = "MEMDREAM_VAULT"
ENV_USER = "MEMDREAM_USER"
ENV_AGENT = "MEMDREAM_AGENT"
ENV_LLM_BASE_URL = "MEMDREAM_LLM_BASE_URL"
ENV_LLM_MODEL = "MEMDREAM_LLM_MODEL"
ENV_LLM_API_KEY = "MEMDREAM_LLM_API_KEY"
ENV_EMBEDDER = "MEMDREAM_EMBEDDER"
ENV_STORE = "MEMDREAM_STORE"

DEFAULT_VAULT = "~/.memdream"
# The vault's file format (docs/format.md, "Format version and upgrades"). A vault without the
# key is format 1. A newer memdream reads every older format (and upgrades it in place if a
# format ever needs that); an older memdream refuses a newer format instead of misreading it.
VAULT_FORMAT = 1
MAX_TEXT_CHARS = 2000  # longer texts belong in the daily log or a knowledge file, not in one memory

CONFIG_TEMPLATE = """\
# memdream configuration. Every setting is optional; environment variables override it.
format = 1                        # the vault's file format (docs/format.md); memdream sets it
# timezone = "Asia/Shanghai"      # for daily logs and dates; default: the system's local zone

[scope]
# user = "me"                     # default user (MEMDREAM_USER)
# agent = "main"                  # default agent (MEMDREAM_AGENT)

[write]
# max_chars = 2000                # longest text one memory may hold

[recall]
# fusion = "weighted"             # with an embedder: "weighted" (measured best; docs/recall.md), "capped", or "blend" (0.7 x cosine + 0.3 x BM25)

[llm]
# base_url = "http://127.0.0.1:11434/v1"   # any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, hosted)
# model = "qwen2.5:7b-instruct"            # no model configured: every LLM phase is skipped (MEMDREAM_LLM_*)
# api_key_env = "MEMDREAM_LLM_API_KEY"     # the variable holding the key; the key itself never goes in this file
# timeout = 60

[dream]
# deep_dream_enabled = true       # the nightly LLM distillation (a manual 'memdream dream' always runs)
# resident_budget = 30            # MEMORY.md is kept to about this many entries
# canaries = ["where do I live"]  # queries every dream must still answer; default: the most recalled entries
# light_every_minutes = 60        # the scheduler's light phase
# nightly_at = "03:00"            # deep, distill, profile (and replay every replay_every_days)
# flush_at = "23:55"              # the day's conversations are summarized into the daily memory
# replay_every_days = 7

[embedder]
# name = "none"                   # none (keyword only) | use | e5 | static | minilm | openai  (MEMDREAM_EMBEDDER)
# base_url = "http://127.0.0.1:11434/v1"   # for "openai": any OpenAI-compatible /v1/embeddings endpoint
# model = "nomic-embed-text"
# api_key_env = "MEMDREAM_EMBEDDER_API_KEY" # the variable holding the key, if the endpoint needs one

[store]
# url = "postgresql://memdream@db.internal/memdream"  # the team server (docs/team-server.md; MEMDREAM_STORE); a password goes in PGPASSWORD or ~/.pgpass, never here
"""

_KNOWN: dict[str, set[str]] = {
    "": {"format", "timezone", "scope", "write", "embedder", "recall", "llm", "dream", "deep_dream_enabled", "store"},
    "dream": {"deep_dream_enabled", "resident_budget", "canaries", "light_every_minutes", "nightly_at", "flush_at", "replay_every_days"},
    "llm": {"base_url", "model", "api_key_env", "timeout"},
    "recall": {"fusion"},
    "scope": {"user", "agent"},
    "write": {"max_chars"},
    "embedder": {"name", "base_url", "model", "api_key_env", "restatement_cosine"},
    "store": {"url"},
}


@dataclass(frozen=True)
class DreamConfig:
    """The [dream] section: budgets, canaries and the scheduler's clock times."""

    deep_dream_enabled: bool = True  # CowAgent's switch: the nightly LLM distillation
    resident_budget: int = 30  # MEMORY.md holds about 30 entries (the third source document)
    canaries: tuple[str, ...] = ()  # empty: the most recalled entries are the canaries
    light_every_minutes: int = 60
    nightly_at: str = "03:00"
    flush_at: str = "23:55"
    replay_every_days: int = 7


def _dream_config(data: dict[str, Any], where: Path) -> DreamConfig:
    table = dict(data.get("dream", {}))
    if "deep_dream_enabled" in data and "deep_dream_enabled" not in table:
        table["deep_dream_enabled"] = data["deep_dream_enabled"]
    d = DreamConfig()
    hint = f"edit {where}"
    enabled = table.get("deep_dream_enabled", d.deep_dream_enabled)
    if not isinstance(enabled, bool):
        raise ConfigError(f"deep_dream_enabled must be true or false, not {enabled!r}", hint)
    ints = {}
    for key, low in (("resident_budget", 1), ("light_every_minutes", 1), ("replay_every_days", 1)):
        value = table.get(key, getattr(d, key))
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ConfigError(f"[dream] {key} must be a whole number of at least {low}, not {value!r}", hint)
        ints[key] = value
    times = {}
    for key in ("nightly_at", "flush_at"):
        value = table.get(key, getattr(d, key))
        parts = str(value).split(":")
        if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) > 23 or int(parts[1]) > 59:
            raise ConfigError(f"[dream] {key} must be a time of day such as \"03:00\", not {value!r}", hint)
        times[key] = f"{int(parts[0]):02d}:{int(parts[1]):02d}"
    canaries = table.get("canaries", [])
    if not isinstance(canaries, list) or not all(isinstance(c, str) and c.strip() for c in canaries):
        raise ConfigError("[dream] canaries must be a list of non-empty query strings", hint)
    return DreamConfig(enabled, ints["resident_budget"], tuple(canaries), ints["light_every_minutes"], times["nightly_at"], times["flush_at"], ints["replay_every_days"])


@dataclass(frozen=True)
class Config:
    vault: Path
    user: str = DEFAULT_USER
    agent: str = DEFAULT_AGENT
    timezone: str | None = None
    max_text_chars: int = MAX_TEXT_CHARS
    embedder: str = "none"
    fusion: str = "weighted"
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_timeout: float = 60.0
    embedder_options: Mapping[str, Any] = field(default_factory=dict, compare=False)
    dream: "DreamConfig" = field(default_factory=lambda: DreamConfig())
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    store: str = field(default="", repr=False)  # a PostgreSQL URL: the team server (docs/team-server.md); "" = this vault folder

    @property
    def llm_configured(self) -> bool:
        """Is a model configured ([llm] base_url or model)? Without one every LLM phase is skipped."""
        return bool(self.llm_base_url or self.llm_model)

    def tzinfo(self) -> ZoneInfo | None:
        if not self.timezone:
            return None
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(
                f"unknown time zone {self.timezone!r} in {CONFIG_FILE}",
                "use an IANA name such as 'Asia/Shanghai' or 'Europe/Berlin'",
            ) from exc


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", "fix the file or move it aside") from exc
    for key in data:
        if key not in _KNOWN[""]:
            raise ConfigError(
                f"unknown setting {key!r} in {path}",
                "check the spelling; known settings: " + ", ".join(sorted(_KNOWN[""])),
            )
    for section, keys in _KNOWN.items():
        if not section:
            continue
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"[{section}] in {path} must be a table", "see the template 'memdream init' writes")
        for key in table:
            if key not in keys:
                raise ConfigError(
                    f"unknown setting {key!r} in [{section}] in {path}",
                    "check the spelling; known settings: " + ", ".join(sorted(keys)),
                )
    return data


def check_format(value: Any, where: Path) -> None:
    """Refuse a vault written in a file format this memdream does not know (a newer one)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"format in {where} must be a whole number (the vault's file format), not {value!r}", f"set format = {VAULT_FORMAT} in {where}")
    if value > VAULT_FORMAT:
        raise ConfigError(
            f"this vault uses file format {value}, written by a newer memdream; this one reads formats up to {VAULT_FORMAT}",
            "upgrade memdream (in the clone: git pull, then make .venv/.installed); nothing was read or changed",
        )


def _first(*values: Any) -> Any:
    """The first value that was given at all (an empty string counts: it is then refused)."""
    return next(v for v in values if v is not None)


def load_config(
    vault: str | os.PathLike[str] | None = None,
    user: str | None = None,
    agent: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    env = os.environ if env is None else env
    root = Path(vault or env.get(ENV_VAULT) or DEFAULT_VAULT).expanduser()
    data = _read_toml(root / CONFIG_FILE)
    check_format(data.get("format", 1), root / CONFIG_FILE)
    scope = data.get("scope", {})
    write = data.get("write", {})
    max_chars = write.get("max_chars", MAX_TEXT_CHARS)
    if not isinstance(max_chars, int) or max_chars < 1:
        raise ConfigError(f"[write] max_chars must be a positive integer, not {max_chars!r}", f"edit {root / CONFIG_FILE}")
    tz = data.get("timezone")
    if tz is not None and not isinstance(tz, str):
        raise ConfigError("timezone must be a string such as 'Asia/Shanghai'", f"edit {root / CONFIG_FILE}")
    emb = data.get("embedder", {})
    rc = emb.get("restatement_cosine")
    if rc is not None and (isinstance(rc, bool) or not isinstance(rc, (int, float)) or not 0 < rc <= 1):
        raise ConfigError(f"[embedder] restatement_cosine must be a number above 0 and at most 1, not {rc!r}", f"edit {root / CONFIG_FILE}")
    llm = data.get("llm", {})
    key_env = str(llm.get("api_key_env") or ENV_LLM_API_KEY)
    try:
        llm_timeout = float(llm.get("timeout", 60.0))
    except (TypeError, ValueError) as exc:
        raise ConfigError("[llm] timeout must be a number of seconds", f"edit {root / CONFIG_FILE}") from exc
    fusion = data.get("recall", {}).get("fusion", "weighted")
    if fusion not in FUSIONS:
        raise ConfigError(f"[recall] fusion must be one of {', '.join(FUSIONS)}, not {fusion!r}", f"edit {root / CONFIG_FILE}")
    cfg = Config(
        vault=root,
        user=_first(user, env.get(ENV_USER), scope.get("user"), DEFAULT_USER),
        agent=_first(agent, env.get(ENV_AGENT), scope.get("agent"), DEFAULT_AGENT),
        timezone=tz,
        max_text_chars=max_chars,
        embedder=str(_first(env.get(ENV_EMBEDDER), emb.get("name"), "none")).strip().lower() or "none",
        embedder_options=emb,
        fusion=fusion,
        llm_base_url=str(env.get(ENV_LLM_BASE_URL) or llm.get("base_url") or ""),
        llm_model=str(env.get(ENV_LLM_MODEL) or llm.get("model") or ""),
        llm_api_key=str(env.get(ENV_LLM_API_KEY) or env.get(key_env) or ""),
        llm_timeout=llm_timeout,
        dream=_dream_config(data, root / CONFIG_FILE),
        raw=data,
        store=str(env.get(ENV_STORE) or data.get("store", {}).get("url") or ""),
    )
    cfg.tzinfo()  # fail early on a bad zone name
    return cfg
