"""Refuse credentials on the write path: credentials never enter memory.

``find_secret(text)`` returns a short English description of the first kind of secret
found in ``text`` ("an OpenAI API key", "a private key", "a password", ...) or ``None``.

Two layers:

1. **detect-secrets** (Yelp, 1.5.x) handles the vendor formats it knows: AWS, GitHub
   (``ghp_``/``gho_``/...), GitLab, Slack, Stripe live keys, Azure storage, Twilio,
   SendGrid, Telegram, Discord, npm (``.npmrc`` form), PyPI, JWT, Mailchimp, Square, IBM,
   Cloudant, SoftLayer, Artifactory, legacy OpenAI keys, PEM private-key headers,
   ``scheme://user:pass@`` URLs and ``password = "..."`` assignments (``KeywordDetector``).
   We call the plugin classes' pure ``analyze_string`` methods, use the high-entropy
   plugins only for their Shannon-entropy arithmetic, and use ``filters.heuristic`` for
   placeholders and indirect references.  We deliberately avoid ``scan_line`` and
   ``analyze_line``: they read and *mutate* the process-global settings singleton
   (``scan_line`` disables a filter and clears a cache on every call; the high-entropy
   ``analyze_line`` swaps ``self.regex`` in and out), which is neither thread-safe nor free
   of side effects, and ``analyze_line`` may try network verification.  Besides, in the
   ad-hoc ("eager") mode ``scan_line`` uses, the high-entropy plugins return every
   base64/hex-charset word *without* applying their entropy limit, so nearly every
   sentence comes back as a "High Entropy String".

2. **Home-made rules**, each commented with why the library does not cover it: newer
   vendor formats (``sk-proj-``, ``sk-ant-``, ``github_pat_``, ``hf_``, ``AIza``,
   ``npm_``, ``LTAI``, ...), credentials in URLs that the library's character class
   rejects, ``Bearer``/``Basic`` headers, command lines, seed phrases, and above all
   *natural language*: people tell chat agents "my password is hunter2" or
   "银行卡密码 482913", which no code scanner looks for.

Personal numbers that work like credentials are refused too (issue 17): a payment card
number that passes the Luhn check next to a card word or a card-security word (CVV,
安全码), a Chinese resident ID number with a valid province, birth date and check digit
(GB 11643-1999), and a US social security number after a word that says so.  A card's last
four digits, an order number or a phone number is not one of them.

The detector is four modules: this one (what is refused and why, the public functions),
model/secret_engine.py (the checks and how a value is judged), model/secret_rules.py (the
data table: vocabulary and regular expressions) and model/secret_plugins.py (the
detect-secrets plugins used).

Decisions (what is *not* a credential here):

* One-time codes (验证码, 动态密码, "your one-time password is 482913") expire in minutes
  and are not reusable, so they are let through; so are share and pick-up codes (淘口令,
  提取码, 取件码).  Recovery/backup codes *are* credentials and are refused.
* Public material is not secret: SSH/PEM public keys, certificates, Stripe publishable
  keys (``pk_live_``), hashes, UUIDs, commit SHAs, wallet addresses, OAuth client IDs.
* A random-looking string with no credential context is let through: it is far more
  often a hash, an ID or a document key than a secret.  The entropy test is only applied
  next to a credential word ("api key", "token", "secret", "密钥", ...).
* A PEM header alone ("my file starts with -----BEGIN OPENSSH PRIVATE KEY-----") is not
  a key; key material must follow it.
* Placeholders (``user:password@``, ``<password>``, ``${DB_PASSWORD}``, ``********``,
  ``your-api-key-here``) and people *talking about* passwords ("the most common password
  is 123456", "不要用 123456 这种弱密码") are let through.

Known limits: passwords made of non-ASCII characters ("口令：天王盖地虎") are not
recognised; a bare word after a password word is judged with a stop-word list ("my
password is sunshine." is refused, "my password is expired." is not), so an unusual
adjective can pass for a password and vice versa ("the password: Tuesday" is refused).

Importing this module compiles nothing and imports nothing heavy.  Each rule is compiled on
its first use, and a check is used only on a text holding a word every match of its patterns
holds (secret_rules.GATES, each vendor rule's keywords, as gitleaks' rules have): a plain
sentence compiles almost none of them.  detect-secrets (which pulls in ``requests``; about 0.15 s in a new process)
is imported, once and under a lock, only when a text could hold what one of its plugins
finds (a long token-like run, a URL, a JWT's ``eyJ``, a PEM header, a password word; see
``secret_engine.may_match_library_vendor``) or when a value next to a credential word is
judged with its heuristics: a plain sentence such as "I prefer dark roast" never imports
it (issue 21).  Every call is pure regex work on its argument (about 0.1 ms for a
chat-sized text) and safe to make from many threads.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Optional

from memdream.model.secret_engine import Engine

__all__ = ["find_secret", "redact", "shown_entry", "shown_text"]

_engine: Optional[Engine] = None
_engine_lock = threading.Lock()


def find_secret(text: str) -> str | None:
    """Describe the first credential found in ``text`` (e.g. "a password"), else ``None``."""
    if not text or not isinstance(text, str):
        return None
    engine = _engine
    if engine is None:
        engine = _get_engine()
    return engine.find(text)


def refuse_secret(text: str, what: str = "the text", hint: str = "keep secrets in a password manager or your environment") -> None:
    """SecretRefused if `text` looks like a credential: credentials never enter memory."""
    from memdream.errors import SecretRefused

    kind = find_secret(text)
    if kind:
        raise SecretRefused(f"refused: {what} looks like {kind}; credentials never enter memory", hint)


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with every line that holds a credential replaced by a note, and the kinds found.
    Conversations are kept verbatim in the raw layer, except for these lines: a pasted key
    must not come back in a search or an active-recall snippet."""
    if not text or find_secret(text) is None:
        return text, []
    kinds: list[str] = []
    out = []
    for line in text.split("\n"):
        kind = find_secret(line) if line.strip() else None
        if kind:
            kinds.append(kind)
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}[a line holding {kind} was left out: credentials never enter memory]")
        else:
            out.append(line)
    if not kinds:  # found only across lines (a private key block): drop the whole text
        kind = find_secret(text) or "a credential"
        return f"[a text holding {kind} was left out: credentials never enter memory]", [kind]
    return "\n".join(out), kinds


# What memdream shows an agent instead of a line that holds a credential. The line itself
# stays in the file (the file is the person's); `memdream doctor` names it, file:line.
HIDDEN = "[hidden: this memory holds {kind}; credentials are never shown to an agent; run memdream doctor]"


@functools.lru_cache(maxsize=8192)
def _kind_cached(text: str) -> str | None:
    return find_secret(text)


def shown_text(text: str) -> str:
    """`text` as memdream may show it to an agent: every line holding a credential replaced
    by a note. The one function every outward path uses for text read back from the files
    (index rows, raw-layer snippets, the MCP resources), whatever wrote it: a line typed by
    hand never went through the write path's check. Cached, since the same lines are read
    again and again."""
    if not text or _kind_cached(text) is None:
        return text
    return redact(text)[0]


def shown_entry(entry: Any) -> Any:
    """An `Entry` as memdream may show it: its text replaced by a note if it holds a credential
    (and the subject too, which a hand edit can fill as freely)."""
    kind = _kind_cached(entry.text) if entry.text else None
    subject_kind = _kind_cached(entry.subject) if entry.subject else None
    if kind is None and subject_kind is None:
        return entry
    changes: dict[str, str] = {}
    if kind is not None:
        changes["text"] = HIDDEN.format(kind=kind)
    if subject_kind is not None:
        changes["subject"] = "[hidden]"
    return entry.evolve(**changes)


def _get_engine() -> Engine:
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = Engine()
        return _engine
