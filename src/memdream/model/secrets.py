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

This module is longer than the usual 500 lines: most of it is the rules table (vendor
formats, vocabulary, stop words), which reads best in one place.

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

Importing this module compiles nothing and imports nothing heavy.  The first call
imports detect-secrets (which pulls in ``requests``; about 0.2 s) and compiles the rules,
once, under a lock; after that every call is pure regex work on its argument (about
0.15 ms for a chat-sized text) and safe to make from many threads.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import re
import threading
from typing import Any, Callable, Optional

__all__ = ["find_secret", "redact", "shown_entry", "shown_text"]

_engine: Optional["_Engine"] = None
_engine_lock = threading.Lock()


def find_secret(text: str) -> str | None:
    """Describe the first credential found in ``text`` (e.g. "a password"), else ``None``."""
    if not text or not isinstance(text, str):
        return None
    engine = _engine
    if engine is None:
        engine = _get_engine()
    return engine.find(text)


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


def _get_engine() -> "_Engine":
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _Engine()
        return _engine


# --------------------------------------------------------------------------------------
# Vocabulary (plain strings and sets; the regular expressions are compiled in _Rules)
# --------------------------------------------------------------------------------------

# Word boundaries that treat "_" as a separator, so DB_PASSWORD / OPENAI_API_KEY match.
_B = r"(?<![A-Za-z0-9])"
_E = r"(?![A-Za-z0-9])"

# What may come between a credential word and its value: "is", "=", "：", "是", "改成了"...
_CONNECTOR = (
    r"(?:"
    r"\s*(?:==?=?|:=|=>|->|[:：])"
    r"|['’]s|\s*(?:は|는|은)|\s+(?:ist|est|es|é)(?![A-Za-z0-9])"
    # Longer forms first: the engine takes the first alternative that fits, so "is" before
    # "is now" would leave "now" as the value ("the root password is now toor_Staging_7").
    r"|\s+(?:(?:is\s+)?now(?:\s+is)?|is\s+(?:still|just|actually|now)|has\s+been\s+(?:changed|set|reset|updated)\s+to"
    r"|(?:got\s+|was\s+|is\s+)?(?:now\s+)?(?:changed|set|reset|updated)\s+to"
    r"|is|was|are|were|equals|as|will\s+be|to)(?![A-Za-z0-9])"
    r"|\s*(?:现在|目前|一直|仍然|还|也|都|就|则|应该|统一|默认|设的)?"
    r"(?:是|为|為|叫|设为|设成|设置为|设置成|改为|改成|换成|变成|更新为|重置为)了?"
    r")"
    r"\s*[:：=]?\s*"
)
# Before the connector: 「密码」, "（5G）", "for the office wifi", "I use everywhere".
_QUALIFIER = (
    r"[」』\"'”’\])）]{0,2}"
    r"(?:\s*[(（][^)）\n]{0,30}[)）])?"
    r"(?:\s+(?:for|of|to|on|at|in|from|that|which|i|we|you|he|she|they)\s+"
    r"(?:[^\n.,;!?=:：，。；！？]|[.:](?=\S)){1,40}?)?"  # "for 10.0.0.5" keeps its dots
)
# Between a Chinese credential word and its connector: QQ 密码「现在」是 ...
_ZH_FILLER = r"(?:\s*(?:的)?(?:现在|目前|一直|仍然|还|也|都|就|则|应该|统一|默认|设的))?"

_LEADING = "([{<\"'`"
_TRAILING = ".,;:!?)]}>\"'`"

# A purely alphabetic value that is really the sentence going on ("my password is too
# weak").  Values with a digit or a symbol are judged on their shape instead.
_STOPWORDS = frozenset(
    """
    a an the this that these those it its my your his her our their mine yours ours theirs
    here there what which who whom whose whatever something nothing anything everything
    same different new old other another one ones also just still now not no yes none null
    nil undefined empty blank unset unknown missing gone lost forgot forgotten expired wrong
    incorrect correct right invalid valid weak strong short long simple complex complicated
    easy hard secure insecure safe unsafe fine good bad great ok okay okey terrible awful
    required optional mandatory needed necessary case sensitive case-sensitive stored saved
    kept written hidden visible masked encrypted hashed salted shown sent changed reset
    updated set locked unlocked disabled enabled active inactive temporary permanent shared
    private public personal secret confidential protected working broken useless obvious
    predictable guessable leaked compromised stolen exposed too very so quite really pretty
    somewhere elsewhere below above following attached enclosed in on at of for to from
    with without by about into onto over under after before since until as like than then
    and or but if because while when where why how all any each every some both either
    neither be been being is was are were will would should could can may might must have
    has had do does did done get got going go same-as same_as default random generated
    factory original previous usual standard unique memorable birthday
    found seen known shown pwned breached reused flagged detected listed involved among part
    str string int integer bytes bool boolean char text varchar number float double object
    field input true false nullable
    password passwords passwd pass pwd passcode passphrase pin token key code login
    username user admin-only here's there's it's that's what's
    md5 sha sha1 sha256 sha512 bcrypt scrypt argon2 argon2id pbkdf2 hash hashes salt utf8
    utf-8 ascii base64 hex 2fa mfa otp totp sso saml oauth oauth2 ldap ntlm kerberos
    """.split()
)
# Adjective and participle endings: "my password is compromised / expiring / reusable".
_STOP_SUFFIXES = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ous", "ive")

# Every entry of detect_secrets.plugins.keyword.DENYLIST contains one of these (checked in
# tests/test_secrets.py), so a text without any of them cannot match KeywordDetector.
_KEYWORD_DETECTOR_STEMS = ("key", "pass", "pwd", "secret", "contrase")

_DESCRIPTIONS = {
    "pin": "a PIN",
    "pin_lower": "a PIN",
    "code": "an access code",
    "private_key": "a private key",
    "token": "an access token",
    "key": "an API key or secret",
    "password": "a password",
    "weak": "a password",
}


def _has_alpha(v: str) -> bool:
    return any(c.isalpha() for c in v)


def _has_digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _has_symbol(v: str) -> bool:
    return any(not c.isalnum() for c in v)


def _mixed_case(v: str) -> bool:
    return v.lower() != v and v.upper() != v


def _clause_before(text: str, start: int) -> str:
    """The part of the current clause before ``start`` (at most 50 characters)."""
    window = text[max(0, start - 50) : start]
    cut = max(window.rfind(c) for c in ".!?;,。！？；，\n")
    return window[cut + 1 :]


# --------------------------------------------------------------------------------------
# The engine: built once, on the first call
# --------------------------------------------------------------------------------------


class _Engine:
    def __init__(self) -> None:
        ds = _import_detect_secrets()
        heuristic = ds["heuristic"]
        self.is_templated = heuristic.is_templated_secret  # {x}, <x>, ${x}
        self.is_dollar = heuristic.is_prefixed_with_dollar_sign  # $DB_PASSWORD
        self.is_indirect = heuristic.is_indirect_reference  # secret = get_secret("x")
        self.is_sequential = heuristic.is_sequential_string  # abcdef123456
        self.is_uuid = heuristic.is_potential_uuid
        self.b64 = ds["base64_entropy"]
        self.hexp = ds["hex_entropy"]
        self.keyword_detector = ds["keyword_detector"]
        self.keyword_tables = ds["keyword_tables"]
        self.private_key_plugin = ds["private_key"]
        self.basic_auth_plugin = ds["basic_auth"]
        self.library_vendors = ds["vendors"]
        self.r = _Rules()
        self.checks: tuple[Callable[[str], Optional[str]], ...] = (
            self._check_library_vendors,
            self._check_homemade_vendors,
            self._check_private_key,
            self._check_url_credentials,
            self._check_auth_headers,
            self._check_natural_language,
            self._check_library_keywords,
            self._check_command_lines,
            self._check_recovery_material,
            self._check_env_assignment,
            self._check_personal_numbers,
        )

    def find(self, text: str) -> Optional[str]:
        for check in self.checks:
            found = check(text)
            if found:
                return found
        return None

    # -- detect-secrets ---------------------------------------------------------------

    def _check_library_vendors(self, text: str) -> Optional[str]:
        for plugin, description, accept in self.library_vendors:
            try:
                for match in plugin.analyze_string(text):
                    if accept(match, text):
                        return "a Slack webhook URL" if "hooks.slack.com" in match else description
            except (RecursionError, ValueError, TypeError, UnicodeError):
                # e.g. a JWT-looking payload nested deeper than json's recursion limit: not
                # a well-formed token, so not this plugin's finding.
                continue
        return None

    def _check_library_keywords(self, text: str) -> Optional[str]:
        """detect-secrets' ``KeywordDetector``: ``password = "..."``, ``api_key: ...``.

        Its value group runs to the end of the line, so we judge the first token only,
        and we do judge it: alone, the plugin flags ``password: forgot it`` and
        ``api_key = os.environ["OPENAI_API_KEY"]``.
        """
        lowered = text.lower()
        if not any(stem in lowered for stem in _KEYWORD_DETECTOR_STEMS):
            return None
        for table in self.keyword_tables:
            for value in self.keyword_detector.analyze_string(text, denylist_regex_to_group=table):
                words = value.split() if value else []
                if not words:
                    continue
                if self.is_indirect(text):  # secret = get_secret("x"), pw = request.args["pw"]
                    return None
                if self._password_value(words[0], quoted=False, at_end=len(words) == 1, strict=False):
                    return "a password or secret key"
        return None

    def _check_private_key(self, text: str) -> Optional[str]:
        # PrivateKeyDetector fires on the header alone; we also require key material after
        # it, so "my file starts with -----BEGIN OPENSSH PRIVATE KEY-----" is a question.
        if not any(True for _ in self.private_key_plugin.analyze_string(text)):
            return None
        for m in self.r.pem_header.finditer(text):
            body = text[m.end() : m.end() + 800]
            end = body.find("-----END")
            if end >= 0:
                body = body[:end]
            if self.r.pem_body.search(self.r.pem_header_line.sub(" ", body)):
                return "a private key"
        return None

    # -- home-made: formats -------------------------------------------------------------

    def _check_homemade_vendors(self, text: str) -> Optional[str]:
        for regex, description, needs_randomness in self.r.vendors:
            for m in regex.finditer(text):
                if needs_randomness and not self._random_looking(m.group("tail")):
                    continue  # sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is a placeholder
                return description
        return None

    def _check_url_credentials(self, text: str) -> Optional[str]:
        # BasicAuthDetector matches "://user:pass@" only when neither part holds a reserved
        # or sub-delimiter character, so it misses "redis://:pass@host" (empty user) and
        # passwords with ! $ * ( ) , ; = in them, and it flags the "user:password@"
        # placeholder of every tutorial.  We add a more permissive URL rule and put both
        # through the same placeholder filter, plus secrets in query strings.
        for value in self.basic_auth_plugin.analyze_string(text):
            if self._url_password(value):
                return self._describe_url(text)
        for m in self.r.url_userinfo.finditer(text):
            if self._url_password(m.group("pw")):
                return self._describe_url(m.group(0))
        for m in self.r.query_secret.finditer(text):
            key, value = m.group("k").lower(), m.group("v")
            if "pass" in key or "pwd" in key:
                if self._password_value(value, quoted=False, at_end=True, strict=False):
                    return "a password in a URL"
            elif self._key_value(value, key):
                return "an access token in a URL"
        return None

    def _describe_url(self, fragment: str) -> str:
        if self.r.db_scheme.search(fragment):
            return "a database URL with a password"
        return "a URL with embedded credentials"

    def _url_password(self, pw: str) -> bool:
        if not pw or len(pw) < 3:
            return False
        if self.is_templated(pw) or self.is_dollar(pw) or self.r.placeholder.match(pw):
            return False
        return not (pw.isdigit() and len(pw) <= 5)  # "host:8080@" is a port

    def _check_auth_headers(self, text: str) -> Optional[str]:
        # No detect-secrets plugin looks at HTTP authorization schemes.
        for m in self.r.bearer.finditer(text):
            if self._key_value(m.group("v"), "bearer"):
                return "a bearer token"
        for m in self.r.basic.finditer(text):
            token = m.group("v")
            try:
                decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode("ascii")
            except (binascii.Error, ValueError, UnicodeDecodeError):
                continue
            user, sep, pw = decoded.partition(":")
            if sep and user and pw and decoded.isprintable():
                return "an HTTP Basic auth credential"
        return None

    def _check_command_lines(self, text: str) -> Optional[str]:
        # "curl -u admin:S3cret!", "mysql -u root -pR00t", "login with admin / P@ssw0rd!":
        # pairs with no "password" word to anchor on and no URL around them.
        for m in self.r.cli_password.finditer(text):
            if self._password_value(m.group("pw"), quoted=False, at_end=True, strict=True):
                return "a password"
        for m in self.r.pair.finditer(text):
            if self.r.discussion.search(_clause_before(text, m.start())):
                continue
            if self._password_value(m.group("pw"), quoted=False, at_end=True, strict=True):
                return "a username and password"
        return None

    def _check_recovery_material(self, text: str) -> Optional[str]:
        # Wallet seed phrases: twelve or more plain words after "seed phrase" / "助记词".
        for m in self.r.seed_phrase.finditer(text):
            words = m.group("words").split()
            if len(words) >= 12 and not any(w in _STOPWORDS for w in words):
                return "a wallet recovery phrase"
        # 2FA recovery codes: long-lived, unlike one-time SMS codes.
        for m in self.r.recovery_codes.finditer(text):
            groups = []
            for group in m.group("v").split():
                if not _has_digit(group):
                    break
                groups.append(group.strip("-"))
            core = "".join(groups).replace("-", "")
            if len(core) >= 8 and core.isalnum() and not any(self.r.date_or_time.match(g) for g in groups):
                return "a set of 2FA recovery codes"
        return None

    def _check_env_assignment(self, text: str) -> Optional[str]:
        """``AZURE_OPENAI_KEY=3f9a...``: a name ending in key/token/secret/... and a random value."""
        if "=" not in text and ":" not in text:
            return None
        for m in self.r.env_assignment.finditer(text):
            value = m.group("v").rstrip(".)]}>")
            if self._key_value(value, m.group("name"), allow_slash=True):
                return "an API key or secret"
        return None

    def _check_personal_numbers(self, text: str) -> Optional[str]:
        """Card numbers (with a card word), Chinese resident ID numbers, US SSNs."""
        r = self.r
        if sum(c.isdigit() for c in text) < 9:
            return None
        for m in r.card_number.finditer(text):
            digits = re.sub(r"[ \-]", "", m.group(0))
            if 13 <= len(digits) <= 19 and _luhn_ok(digits) and len(set(digits)) > 1:
                around = text[max(0, m.start() - 40) : m.end() + 60]
                if r.card_security.search(around) or r.card_context.search(around):
                    return "a payment card number"
        for m in r.cn_id.finditer(text):
            if _cn_id_ok(m):
                return "a resident ID number"
        for m in r.ssn.finditer(text):
            area, group, serial = m.group("a"), m.group("g"), m.group("s")
            if area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000":
                return "a social security number"
        return None

    # -- home-made: natural language ------------------------------------------------------

    def _check_natural_language(self, text: str) -> Optional[str]:
        """"my password is hunter2", "银行卡密码 482913", "API key: 3f9a...", "PIN码是 2580"."""
        r = self.r
        for m in r.credential_word.finditer(text):
            kind = next(k for k in _DESCRIPTIONS if m.group(k))
            start, end = m.span()
            if self._not_a_credential_word(text, start, end):
                continue
            if r.discussion.search(_clause_before(text, start)):
                continue  # "the most common password is 123456"
            for tail, strict in r.tails:
                if strict and kind == "pin_lower":
                    continue
                t = tail.match(text, end)
                if not t:
                    continue
                if r.discussion.search(text[end : t.end()]):
                    break
                if self._judge_value(text, t.end(), kind, strict, m.group(0)):
                    return _DESCRIPTIONS[kind]
        return None

    def _not_a_credential_word(self, text: str, start: int, end: int) -> bool:
        """"secret santa", "token count", "boarding pass", and words inside URLs (which
        have their own rules: "?q=password+reset", "user:password@host")."""
        if text[start:end].lower() == "pass" and self.r.not_a_login_pass.search(text[max(0, start - 20) : start]):
            return True
        if self.r.not_a_credential_after.match(text, end):
            return True
        token_start = max(text.rfind(" ", 0, start), text.rfind("\t", 0, start), text.rfind("\n", 0, start)) + 1
        prefix = text[token_start:start]
        return "://" in prefix or prefix.startswith("www.")

    def _judge_value(self, text: str, pos: int, kind: str, strict: bool, word: str) -> bool:
        """Is what starts at ``pos`` (after "password is", "API key:", ...) a credential?"""
        r = self.r
        q = r.quoted.match(text, pos)
        if q:
            value = q.group("v").strip()
            quoted, after = True, q.end()
        else:
            b = r.bare.match(text, pos)
            if not b:
                return False
            value = self._strip(b.group(0))
            quoted, after = False, b.end()
        if not value:
            return False
        rest = text[after:]
        if kind in ("key", "token", "private_key"):
            return " " not in value and self._key_value(value, word)
        if _has_digit(value) and not _has_alpha(value):
            # "密码是8位数字", "the password is 16 characters long", "请设置 8-20 位密码"
            if r.digits_unit.match(rest) or r.digits_unit.match(value.lstrip("0123456789")):
                return False
        if r.zh_describes.match(rest):  # 密码是 bcrypt 哈希过的
            return False
        if kind in ("pin", "pin_lower", "code"):
            if kind == "pin_lower" and not r.clause_end.match(rest):
                return False  # "pin: 2024 roadmap to the channel"
            if kind == "code" and r.dial_combination.fullmatch(value):
                return True  # 12-34-56
            digits = value.rstrip("#*")
            return digits.isdigit() and 4 <= len(digits) <= 12 and not r.date_or_time.match(value)
        if kind == "weak":
            # A bare "pass" is also a ticket ("my season pass is valid"): it needs a digit
            # or a symbol, and without a connector a digit and a symbol or mixed case too.
            if not (_has_digit(value) or r.non_word_non_hyphen.search(value)):
                return False
            if strict and not (
                len(value) >= 8 and _has_digit(value) and (_has_symbol(value) or _mixed_case(value))
            ):
                return False
        at_end = bool(r.clause_end.match(rest))
        return self._password_value(value, quoted=quoted, at_end=at_end, strict=strict)

    def _strip(self, raw: str) -> str:
        """Drop surrounding quotes, brackets and sentence punctuation (not placeholders')."""
        value, placeholder = raw, self.r.placeholder
        while value and value[0] in _LEADING and not placeholder.match(value):
            value = value[1:]
        while value and value[-1] in _TRAILING and not placeholder.match(value):
            value = value[:-1]
        return value

    def _password_value(self, value: str, *, quoted: bool, at_end: bool, strict: bool) -> bool:
        """Does ``value`` (what follows "password is") look like an actual password?

        ``strict`` is for values with no connector before them ("wifi password Sunny24!"):
        only a strong shape counts.  ``at_end``: the clause ends after the value.
        """
        r = self.r
        if not quoted:
            value = self._strip(value)
        if len(value) < 4 or len(value) > 128:
            return False
        if quoted and " " in value:
            # "correct horse battery staple" is a passphrase; "your password here" is not.
            words = value.lower().split()
            return not r.placeholder.match(value) and not all(w in _STOPWORDS for w in words)
        if self.is_templated(value) or self.is_dollar(value) or r.placeholder.match(value):
            return False
        if r.url_or_email.search(value) or r.path.match(value) or r.version.match(value):
            return False
        if r.date_or_time.match(value) or r.identifier_ref.match(value) or r.contraction.match(value):
            return False
        if self.is_indirect(value):
            return False
        lowered = value.lower()
        if lowered in _STOPWORDS:
            return False
        if len(value) >= 8 and max(value.count(ch) for ch in set(value)) * 2 > len(value):
            return False  # "AIzaaaaaaaaaaaaa", "Xxxxxxxx1": a filler, not a password (gitleaks gcp.go fps)
        alpha, digit, symbol = _has_alpha(value), _has_digit(value), _has_symbol(value)
        if value.rstrip("#*").isdigit():
            # Digits (a keypad "#" allowed): a PIN-like password; 12345678 is still one.
            return len(value.rstrip("#*")) >= 4
        if alpha and (digit or symbol):
            if strict:
                # Without a connector "well-known" or "e-mail" must not count: require a
                # digit or a symbol other than a hyphen.
                return len(value) >= 6 and (digit or bool(r.non_word_non_hyphen.search(value)))
            return True
        if symbol and digit:  # "12-34#"
            return not strict
        if alpha:
            # One bare word: a password only at the end of the clause and when it is not
            # an adjective or participle ("my password is sunshine." / "... is expired.").
            if quoted:
                return True
            if strict or not at_end:
                return False
            return not (lowered.endswith(_STOP_SUFFIXES) and len(lowered) > 5)
        return False

    def _key_value(self, value: str, word: str, allow_slash: bool = False) -> bool:
        """Is ``value`` (next to "api key", "token", "secret", "密钥") random enough?

        ``allow_slash``: a base64 value may start with "/" (an AWS secret key often does);
        after ``NAME=`` it is judged as a key unless it has a dot (a file name) too."""
        r = self.r
        value = value.strip().strip("\"'`")
        if value[:2] in ("0x", "0X") and len(value) > 18:
            value = value[2:]  # 0x-prefixed hex, e.g. a wallet private key
        if len(value) < 16 or len(value) > 512:
            return False
        if self.is_templated(value) or self.is_dollar(value) or r.placeholder.match(value):
            return False
        if value.startswith(("pk_live_", "pk_test_", "pk.eyJ", "sha256-", "sha384-", "sha512-", "ssh-")):
            return False  # publishable keys (Stripe, Mapbox), SRI hashes and public keys are public
        looks_like_path = bool(r.path.match(value)) and not (allow_slash and "." not in value and _mixed_case(value))
        if r.url_or_email.search(value) or looks_like_path or r.call_or_env.match(value):
            return False
        if self.is_uuid(value) and word.lower().endswith("id"):
            return False
        if not (_has_alpha(value) and _has_digit(value)):
            return False
        return self._random_looking(value)

    def _random_looking(self, value: str) -> bool:
        """Entropy test with detect-secrets' own Shannon-entropy implementations.

        The plugins' limits (4.5 bits/char for base64, 3.0 for hex) are tuned for quoted
        strings in source files; next to a credential word a lower bar suits short keys,
        but then we want mixed case or a long string, because identifiers such as
        ``my-project-name-2024`` reach 3.5 bits too.
        """
        if self.is_sequential(value):
            return False
        core = value.replace("-", "").replace("_", "")
        if self.r.hex_only.fullmatch(core):
            return len(core) >= 16 and self.hexp.calculate_shannon_entropy(core) > 3.0
        entropy = self.b64.calculate_shannon_entropy(value)
        if _mixed_case(value):
            return entropy > 3.5
        if self.r.base32.fullmatch(value):  # TOTP seeds
            return len(value) >= 16 and entropy > 3.0
        return len(value) >= 24 and entropy > 3.8


class _Rules:
    """The home-made regular expressions, compiled once when the engine is built."""

    def __init__(self) -> None:
        c = re.compile
        tail = r"(?P<tail>{})"
        # Vendor formats detect-secrets 1.5 lacks: (regex, description, whether the "tail"
        # group must look random, which keeps "sk-xxxx..." placeholders out).
        self.vendors: list[tuple[re.Pattern[str], str, bool]] = [
            # Anthropic: no plugin at all.
            (c(_B + r"sk-ant-[a-z]{2,8}\d{2}-" + tail.format(r"[A-Za-z0-9_\-]{32,}")), "an Anthropic API key", True),
            # OpenAI: the plugin wants the legacy "T3BlbkFJ" marker flanked by 20 plain
            # alphanumerics; project, service-account and admin keys break that.
            (c(_B + r"sk-(?:proj|svcacct|admin|None)-" + tail.format(r"[A-Za-z0-9_\-]{32,}")), "an OpenAI API key", True),
            (c(_B + r"sk-" + tail.format(r"[A-Za-z0-9]{32,}") + r"(?![A-Za-z0-9_\-])"), "an OpenAI API key", True),
            # GitHub fine-grained PATs: the plugin knows only ghp_/gho_/ghu_/ghs_/ghr_.
            (c(r"github_pat_" + tail.format(r"[A-Za-z0-9_]{40,}")), "a GitHub token", True),
            # Google: no plugin.
            (c(_B + r"AIza" + tail.format(r"[0-9A-Za-z_\-]{35}") + r"(?![0-9A-Za-z_\-])"), "a Google API key", True),
            (c(_B + r"GOCSPX-" + tail.format(r"[0-9A-Za-z_\-]{28}")), "a Google OAuth client secret", True),
            # Hugging Face: no plugin.
            (c(_B + r"hf_" + tail.format(r"[A-Za-z0-9]{30,}") + _E), "a Hugging Face token", True),
            # npm: the plugin only knows the .npmrc "//registry/:_authToken=" line.
            (c(_B + r"npm_" + tail.format(r"[A-Za-z0-9]{36}") + _E), "an npm token", True),
            # Slack app-level tokens: the plugin knows xox[abposr]- only.
            (c(r"xapp-\d-[A-Z0-9]+-\d+-" + tail.format(r"[a-f0-9]{32,}")), "a Slack token", False),
            # Stripe: the plugin knows live keys only; test keys and webhook secrets too.
            (c(_B + r"(?:sk|rk)_(?:test|live)_" + tail.format(r"[0-9a-zA-Z]{24,}")), "a Stripe secret key", True),
            (c(_B + r"whsec_" + tail.format(r"[A-Za-z0-9+/=]{24,}")), "a Stripe webhook secret", True),
            # Azure Service Bus / Event Hubs connection strings (the plugin: storage only).
            (c(r"SharedAccessKey=" + tail.format(r"[A-Za-z0-9+/]{42,}={0,2}")), "an Azure access key", True),
            # Chinese clouds, Shopify, DigitalOcean: no plugins.
            (c(_B + r"LTAI" + tail.format(r"[A-Za-z0-9]{12,28}") + _E), "an Alibaba Cloud AccessKey", True),
            (c(_B + r"AKID" + tail.format(r"[A-Za-z0-9]{32}") + _E), "a Tencent Cloud SecretId", True),
            (c(_B + r"shp(?:at|ss|ca|pa)_" + tail.format(r"[a-fA-F0-9]{32}") + _E), "a Shopify access token", False),
            (c(_B + r"dop_v1_" + tail.format(r"[a-f0-9]{64}") + _E), "a DigitalOcean token", False),
            # Chat webhooks: whoever has the URL can post as the bot.
            (c(r"discord(?:app)?\.com/api/webhooks/\d{5,}/" + tail.format(r"[\w\-]{40,}")), "a Discord webhook URL", True),
            (c(r"(?:open\.feishu\.cn|open\.larksuite\.com)/open-apis/bot/v2/hook/" + tail.format(r"[0-9a-f\-]{32,}")),
             "a chat webhook URL", False),
            (c(r"qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=" + tail.format(r"[0-9a-f\-]{32,}")),
             "a chat webhook URL", False),
            # Formats found missing by the independent corpus (issue 17; tests/data/
            # secret_corpus_independent.py names the scanner rule each comes from).
            # Google OAuth access and refresh tokens (trufflehog googleoauth2).
            (c(_B + r"ya29\." + tail.format(r"[0-9A-Za-z_\-]{30,}")), "a Google OAuth token", True),
            (c(_B + r"1//0" + tail.format(r"[0-9A-Za-z_\-]{40,}")), "a Google OAuth refresh token", True),
            # Mailgun private API keys (gitleaks mailgun.go): "key-" and 32 hex digits.
            (c(_B + r"(?:pub)?key-" + tail.format(r"[0-9a-f]{32}") + _E), "a Mailgun API key", True),
            # Mapbox secret tokens (gitleaks mapbox.go); "pk." ones are public.
            (c(_B + r"sk\.eyJ" + tail.format(r"[A-Za-z0-9_\-]{40,}") + r"\.[A-Za-z0-9_\-]{16,}"), "a Mapbox secret token", True),
            # Notion integration secrets (gitleaks notion.go).
            (c(_B + r"secret_" + tail.format(r"[A-Za-z0-9]{43}") + _E), "a Notion integration secret", True),
            (c(_B + r"ntn_\d{11}" + tail.format(r"[A-Za-z0-9]{35}") + _E), "a Notion integration secret", True),
            # Firebase Cloud Messaging legacy server keys; a device token has no "AAAA" part.
            (c(_B + r"AAAA[A-Za-z0-9_\-]{7}:APA91b" + tail.format(r"[A-Za-z0-9_\-]{100,}")), "a Firebase server key", True),
            # Sentry auth tokens (trufflehog sentrytoken) and DSNs (a key in the URL's user part).
            (c(_B + r"sntryu_" + tail.format(r"[a-f0-9]{64}") + _E), "a Sentry token", True),
            (c(_B + r"sntrys_eyJ" + tail.format(r"[A-Za-z0-9+/=_\-]{40,}")), "a Sentry token", True),
            (c(r"(?i)\bhttps?://" + tail.format(r"[0-9a-f]{32}") + r"(?::[0-9a-f]{32})?@[\w.\-]+(?::\d+)?/\d+"), "a Sentry DSN", True),
            # Docker Hub personal and organisation access tokens (trufflehog dockerhub).
            (c(_B + r"dckr_(?:pat|oat)_" + tail.format(r"[A-Za-z0-9_\-]{20,}")), "a Docker Hub token", True),
            # gitleaks rules: Databricks, Dynatrace, Linear, HashiCorp Vault, Grafana, Postman,
            # Pulumi, Atlassian, Facebook, Flutterwave, Adyen, GitLab runner tokens.
            (c(_B + r"dapi" + tail.format(r"[a-f0-9]{32}") + r"(?:-\d)?" + _E), "a Databricks token", True),
            (c(_B + r"dt0c01\.[A-Z0-9]{24}\." + tail.format(r"[A-Z0-9]{64}") + _E), "a Dynatrace token", True),
            (c(_B + r"lin_api_" + tail.format(r"[A-Za-z0-9]{40}") + _E), "a Linear API key", True),
            (c(_B + r"hv[sbr]\." + tail.format(r"[A-Za-z0-9_\-]{24,}")), "a HashiCorp Vault token", True),
            (c(_B + r"gls[a]_" + tail.format(r"[A-Za-z0-9]{32}") + r"_[a-f0-9]{8}" + _E), "a Grafana token", True),
            (c(_B + r"glc_" + tail.format(r"[A-Za-z0-9+/]{32,}={0,2}")), "a Grafana token", True),
            (c(_B + r"PMAK-[a-f0-9]{24}-" + tail.format(r"[a-f0-9]{34}") + _E), "a Postman API key", True),
            (c(_B + r"pul-" + tail.format(r"[a-f0-9]{40}") + _E), "a Pulumi token", True),
            (c(_B + r"ATATT3" + tail.format(r"[A-Za-z0-9_\-=]{100,}")), "an Atlassian API token", True),
            (c(_B + r"EAA[A-Za-z0-9]{1,3}" + tail.format(r"[A-Za-z0-9]{80,}") + _E), "a Facebook access token", True),
            (c(_B + r"FLWSECK(?:_TEST)?-" + tail.format(r"[a-h0-9]{32}") + r"-X"), "a Flutterwave secret key", True),
            (c(_B + r"AQE[A-Za-z0-9]{2}" + tail.format(r"[A-Za-z0-9_\-]{60,}")), "an Adyen API key", True),
            (c(_B + r"glrt-" + tail.format(r"[A-Za-z0-9_\-]{20,}")), "a GitLab runner token", True),
        ]

        self.pem_header = c(r"BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-*|PuTTY-User-Key-File-\d:?")
        self.pem_header_line = c(r"[A-Za-z\-]+:[^\n]*?(?=\s{2,}|\n|$)")  # Proc-Type: 4,ENCRYPTED
        self.pem_body = c(r"[A-Za-z0-9+/=]{40,}")

        self.db_scheme = c(
            r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|"
            r"sqlserver|oracle|jdbc|clickhouse|cockroachdb|neo4j|couchdb|memcached)\b"
        )
        self.url_userinfo = c(
            r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s:/?#@\"'<>]*):(?P<pw>[^\s/?#\"'<>]*)@(?=[\w\[])"
        )
        self.query_secret = c(
            r"(?i)[?&;](?P<k>api[_\-]?key|apikey|access[_\-]?token|auth[_\-]?token|token|secret|"
            r"client[_\-]?secret|password|passwd|pwd|sig|signature|x-amz-signature|key)=(?P<v>[^&\s#\"'<>]+)"
        )
        self.bearer = c(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)")
        self.basic = c(r"(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")

        # Credential words.  The group name is the kind, which decides how the value is
        # judged: passwords by shape, keys and tokens by entropy, PINs and codes as digits.
        self.credential_word = c(
            r"(?ix)"
            r"(?P<pin>" + _B + r"(?:pin[\s_\-]?(?:code|number)|(?-i:PIN)|pin(?=\s?[码碼]))(?:s?\s?[码碼])?" + _E
            + r"|(?-i:PIN)s" + _E + r")"
            # Lower-case "pin" is also a needle or a verb ("pin the tweet"): it needs a
            # connector and a digits-only value that ends the clause ("my pin is 1234").
            r"|(?P<pin_lower>" + _B + r"pin" + _E + r")"
            r"|(?P<code>" + _B + r"(?:(?:door|gate|alarm|garage|lock[\s\-]?screen|screen[\s\-]?lock|safe|lockbox|"
            r"keypad|entry|building)[\s_\-]?code"
            r"|code\s+(?:to|for)\s+(?:the\s+|my\s+|our\s+)?(?:front\s+|back\s+|garage\s+)?"
            r"(?:safe|door|gate|alarm|lockbox|building|house|apartment)"
            r"|(?:safe|lock|locker|padlock|vault)\s+combination"
            r"|combination\s+(?:to|for|of)\s+(?:the\s+|my\s+)?(?:safe|lock|locker|padlock|vault))" + _E + r")"
            r"|(?P<private_key>" + _B + r"private[\s_\-]?key" + _E + r"|私钥|私鑰)"
            r"|(?P<token>" + _B + r"(?:(?:access|auth|refresh|bearer|bot|oauth|session|id|api|deploy|"
            r"personal[\s_\-]access|service[\s_\-]account|security)[\s_\-]?)?tokens?" + _E + r"|令牌|访问令牌)"
            r"|(?P<key>" + _B + r"(?:(?:x-)?api[\s_\-]?(?:key|secret)(?:[\s_\-]?id)?|apikey"
            r"|access[\s_\-]?key(?:[\s_\-]?(?:id|secret))?|secret[\s_\-]?(?:access[\s_\-]?)?key(?:[\s_\-]?id)?"
            r"|secret[\s_\-]?id|(?:client|app|consumer|webhook|signing|jwt|shared|totp|2fa|mfa|otp)[\s_\-]?secret"
            r"|(?:signing|encryption|master|auth)[\s_\-]?key|secrets?)" + _E + r"|密钥|秘钥|密鑰|凭证|凭据)"
            r"|(?P<password>" + _B + r"(?:pass(?:word|wd|phrase|code)s?|pwd|pswd|psw|pw|wi-?fi[\s_\-]?key"
            r"|passwort|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha)" + _E + r"|パスワード|비밀번호|암호"
            # 淘口令 and 口令红包 are share codes, 动态密码 a one-time code, 密码学 cryptography.
            r"|(?<!淘)(?<!动态)(?<!動態)(?<!一次性)(?:密码|密碼|口令)(?!学|學|红包|紅包|箱))"
            # "my netflix pass is ...": "pass" alone is also a ticket or a mountain road.
            r"|(?P<weak>" + _B + r"pass" + _E + r")"
        )
        # What may follow a credential word before its value, tried in order; the flag
        # says whether the value must have a strong shape because there is no connector.
        self.tails: tuple[tuple[re.Pattern[str], bool], ...] = (
            (c(_QUALIFIER + _ZH_FILLER + _CONNECTOR), False),
            (c(_ZH_FILLER + _CONNECTOR), False),
            # Across a question: "can you save my Amazon password? it's Prime#Shopper9"
            (c(r"\s*[?？]\s*(?:it['’]?s|it\s+is|它是|是)\s*[:：]?\s*", re.I), False),
            # A few words, then a colon: 用这个访问令牌调用接口：..., 信用卡密码 6 位：...
            (c(r"\s?(?=[^:：\n]{0,3}[\u3400-\u9fff])[\u3400-\u9fff0-9 ]{1,10}?[:：]\s*"), False),
            # Nothing at all: "wifi password Sunny2024!", "银行卡密码 482913".
            (c(r"\s*(?=[A-Za-z0-9])"), True),
        )
        self.not_a_credential_after = c(
            r"(?i)\s*(?:santa|sauce|garden|agent|service|ballot|manager|policy|policies|reset|"
            r"strength|length|field|limit|count|usage|hash|prompt|protected|rotation|expir)"
        )
        self.not_a_login_pass = c(
            r"(?i)(?:boarding|bus|season|day|ski|hall|backstage|mountain|free|press|guest|train|"
            r"metro|gym|festival|park|annual|weekly|monthly|visitor|access|vip|mobile|digital)\s+$"
        )
        # Someone *talking about* passwords, just before the credential word.
        self.discussion = c(
            r"(?i:most\s+(?:common|popular|used|frequent)|commonly\s+used|worst|weakest|weak|"
            r"examples?|samples?|dummy|fake|placeholder|e\.g\.|such\s+as|for\s+(?:instance|example)|"
            r"never\s+use|don'?t\s+use|do\s+not\s+use|avoid|one[\s\-]?time|otp)"
            r"|常见|常用|最多|弱|示例|例如|比如|举例|例子|假设|不要用|别用|避免|一次性|动态"
        )

        # Values.
        self.quoted = c(r"[\"'“‘`「『](?P<v>[^\"'”’`」』\n]{1,100})[\"'”’`」』]")
        # A bare value: characters that are not whitespace, CJK or CJK punctuation.
        self.bare = c(r"[^\s\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef“”‘’]{1,128}")
        self.placeholder = c(
            r"""^(?:
                <[^<>]*> | \{\{?[^{}]*\}?\} | \[[^\[\]]*\] | \$\{?\w*\}? | \$\(.*\)? | %\w+% | \$\w+.*
              | [*•●·x×X#?_.\-…]+                                   # ******, xxxxxx, ...
              | (?i:your[\s_\-]?[\w\-]*|my[\s_\-]?(?:password|pass|pwd|secret|token|key)[\w\-]*)
              | (?i:(?:(?:example|sample|dummy|fake|placeholder|redacted|hidden|removed|secret|token|
                     key|api|password|passwd|pass|pwd|changeit|test|xxx+|none|null|nil|tbd|todo|here|
                     goes|value|my|your|the|db|user)[_\-\s]?)+)      # only placeholder words
            )$""",
            re.X,
        )
        self.digits_unit = c(
            r"\s*(?:[-~到至]\s*\d+\s*)?(?:\+|以上|以下|左右)?\s*"
            r"(?:characters?|chars?|digits?|letters?|symbols?|words?|bytes?|bits?|long|length|"
            r"times?|tries|attempts?|days?|weeks?|months?|years?|hours?|minutes?|mins?|seconds?|"
            r"secs?|%|percent|位|个|個|字|次|天|周|週|个月|月|年|小时|分钟|秒|倍|岁)"
        )
        # Words right after a value that show it describes the password: 密码是 MD5 加密的.
        self.zh_describes = c(r"\s*(?:哈希|加密|散列|格式|编码|算法|类型|存储|保存|开头|结尾|结构)")
        self.clause_end = c(
            r"\s*(?:$|[.,;!?)\]。，；！？、）…]|[\u3400-\u9fff]|(?i:and|but|so|or|please|thanks|"
            r"thank|lol|ok|okay|right|btw|just|for|in|on|at|to)\b)"
        )
        self.contraction = c(r"^[A-Za-z]+['’][A-Za-z]{1,2}$")  # didn't, it's
        self.date_or_time = c(r"^\d{1,4}(?:[-/.:]\d{1,4}){1,3}$")
        self.dial_combination = c(r"\d{1,2}(?:-\d{1,2}){2,3}")
        self.version = c(r"(?i)^v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?$")
        self.url_or_email = c(r"(?i)^(?:[a-z][a-z0-9+.\-]*://|www\.)|^[\w.+\-]+@[\w\-]+\.[\w.\-]+$")
        self.path = c(r"^(?:~|\.{1,2})?/[\w./\-]*$|^[A-Za-z]:\\")
        self.identifier_ref = c(
            r"^(?:"
            r"[A-Za-z_][\w.]*\s*[(\[].*"  # call or subscript: getpass(), os.environ['X']
            r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # dotted attribute: form.password.data
            r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # ENV_VAR_NAME
            r"|[a-z]+(?:_[a-z]+)+"  # snake_case_identifier
            r"|(?=[a-z_])[A-Za-z_]*(?i:password|passwd|pwd|secret|token|apikey|api_key)[A-Za-z_]*"  # confirmPassword
            r")$"
        )
        # For keys and tokens (which may contain dots): a call, a subscript or an ENV_VAR.
        self.call_or_env = c(r"^(?:[A-Za-z_][\w.]*\s*[(\[].*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)$")
        self.non_word_non_hyphen = c(r"[^\w\-]")
        self.hex_only = c(r"[0-9a-fA-F]+")
        self.base32 = c(r"[A-Z2-7=]+")

        # Command lines and user/password pairs.
        self.cli_password = c(
            r"(?:\b(?:curl|wget|http)\b[^\n]*?\s(?:-u|--user)[=\s]\s*['\"]?[^\s:'\"]*:['\"]?"  # -u ":pw" too
            r"|\bmysql(?:dump|admin)?\b[^\n]{0,80}?\s-p['\"]?"
            # docker login -u x -p pw / --password pw (not --password-stdin)
            r"|\b(?:docker|podman|nerdctl|helm\s+registry)\s+login\b[^\n]{0,120}?\s(?:-p|--password)(?:=|\s+)['\"]?)"
            r"(?P<pw>[^\s'\"]{4,})"
        )
        self.pair = c(
            r"(?i)(?:\b(?:log\s?in|sign\s?in|credentials?|creds|account)\b|账号|帐号|账户|帐户|用户名|登录|登陆)"
            r"(?:\s+(?:for|to|on|at)\s+[^:：/\n]{1,30}?)?"  # "my login for the portal: ..."
            r"\s*(?:(?:is|are|with|as|using)\b|[:：=]|是|为|用|使用)?\s*"
            r"(?P<user>[A-Za-z0-9][A-Za-z0-9._@+\-]{1,63})\s*(?:/|\s:\s|[:：](?=\S)|\s+and\s+)\s*"
            r"(?P<pw>[^\s，。；！？、]{4,64})"
        )
        # NAME=value where the name says what it is: AZURE_OPENAI_KEY=..., "MAILGUN_SIGNING_KEY": "...",
        # aws_secret_access_key=... (trufflehog azure_openai_test.go, gitleaks generic.go).
        self.env_assignment = c(
            r"(?i)(?<![A-Za-z0-9_])[\"']?(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_.\-][A-Za-z0-9]+)*?[_.\-]?"
            r"(?:key|token|secret|password|passwd|pwd|dsn|credentials?|auth))[\"']?\s*(?::=|=>|[=:])\s*"
            r"[\"'`]?(?P<v>[^\s\"'`,;\u3000-\u303f\u3400-\u9fff\uff00-\uffef]{16,512})"
        )
        # Payment cards: 13-19 digits in groups of 4 (or an unbroken run), Luhn-checked, and
        # only next to a card or card-security word (an order number is not a card).
        self.card_number = c(r"(?<![\d\-])(?:\d{4}[ \-]){2,3}\d{1,7}(?![\d\-])|(?<![\d\-])\d{13,19}(?![\d\-])")
        self.card_context = c(
            r"(?i)\b(?:credit|debit|card|visa|master\s?card|amex|american\s+express|discover|jcb|unionpay|maestro)\b"
            r"|卡号|信用卡|银行卡|借记卡|储蓄卡|银联|招行卡|卡片"
        )
        self.card_security = c(r"(?i)\b(?:cvv2?|cvc2?|cid|csc|security\s+code|card\s+verification)\b|安全码|校验码|验证码后三位|背面三位")
        # Chinese resident ID numbers (GB 11643-1999): region, birth date, sequence, check digit.
        self.cn_id = c(r"(?<![0-9A-Za-z])([1-8]\d{5})((?:19|20)\d{2})(\d{2})(\d{2})(\d{3})([0-9Xx])(?![0-9A-Za-z])")
        # US social security numbers, only after a word that says so.
        self.ssn = c(
            r"(?i)(?:\bssn\b|\bsocial\s+security(?:\s+(?:number|no\.?|#))?|社会安全号码?|社會安全號碼?)"
            r"[^\d\n]{0,20}?(?<!\d)(?P<a>\d{3})[\- ]?(?P<g>\d{2})[\- ]?(?P<s>\d{4})(?!\d)"
        )
        self.seed_phrase = c(
            r"(?i)(?:(?:seed|recovery|mnemonic|secret|backup)\s+(?:phrase|words)|mnemonic|助记词|助記詞)"
            + _ZH_FILLER + _CONNECTOR + r"(?P<words>(?:[a-z]{3,8}[\s,]+){11,23}[a-z]{3,8})"
        )
        self.recovery_codes = c(
            r"(?i)(?:(?:recovery|backup)\s+codes?|恢复码|备用码|救援码|恢復碼|備用碼)"
            + _ZH_FILLER + _CONNECTOR + r"(?P<v>[A-Za-z0-9][A-Za-z0-9\- ]{5,80})"
        )


# --------------------------------------------------------------------------------------
# detect-secrets
# --------------------------------------------------------------------------------------

# (module in detect_secrets.plugins, class, description, extra acceptance test)
_LIBRARY_VENDOR_PLUGINS: tuple[tuple[str, str, str, str], ...] = (
    ("aws", "AWSKeyDetector", "an AWS access key", "aws"),
    # Artifactory's "AP[0-9A-F]..." pattern also matches product codes like "APB12345678";
    # real Artifactory tokens are dozens of characters long.
    ("artifactory", "ArtifactoryDetector", "an Artifactory token", "long32"),
    ("azure_storage_key", "AzureStorageKeyDetector", "an Azure storage account key", ""),
    ("cloudant", "CloudantDetector", "a Cloudant credential", ""),
    ("discord", "DiscordBotTokenDetector", "a Discord bot token", ""),
    ("github_token", "GitHubTokenDetector", "a GitHub token", ""),
    ("gitlab_token", "GitLabTokenDetector", "a GitLab token", ""),
    ("ibm_cloud_iam", "IbmCloudIamDetector", "an IBM Cloud API key", ""),
    ("ibm_cos_hmac", "IbmCosHmacDetector", "an IBM COS HMAC secret", ""),
    ("jwt", "JwtTokenDetector", "a JSON Web Token", ""),
    ("mailchimp", "MailchimpDetector", "a Mailchimp API key", ""),
    ("npm", "NpmDetector", "an npm token", ""),
    ("openai", "OpenAIDetector", "an OpenAI API key", ""),
    ("pypi_token", "PypiTokenDetector", "a PyPI token", ""),
    ("sendgrid", "SendGridDetector", "a SendGrid API key", ""),
    # "xoxo-1-love" satisfies the Slack token regex; real tokens are 40+ characters.
    ("slack", "SlackDetector", "a Slack token", "long30"),
    ("softlayer", "SoftlayerDetector", "a SoftLayer API key", ""),
    ("square_oauth", "SquareOAuthDetector", "a Square OAuth secret", ""),
    ("stripe", "StripeDetector", "a Stripe secret key", ""),
    ("telegram_token", "TelegramBotTokenDetector", "a Telegram bot token", ""),
    # The Twilio regexes, like the AWS ones, have no word boundaries.
    ("twilio", "TwilioKeyDetector", "a Twilio API key", "whole"),
)
# Not used as vendor plugins: IPPublicDetector (an IP address is not a credential),
# KeywordDetector (used with a value check in _check_library_keywords), the high-entropy
# plugins (entropy arithmetic only: context-free they flag hashes, IDs and public keys).


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
# First two digits of the region code: the provinces of GB/T 2260 (and 71/81/82 for
# Taiwan, Hong Kong and Macao); an order number starting "20" or "90" is none of them.
_CN_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 61 62 63 64 65 71 81 82".split()
)


def _cn_id_ok(m: "re.Match[str]") -> bool:
    """A GB 11643-1999 number: a province, a real birth date, the MOD 11-2 check digit."""
    import datetime as _dt

    region, year, month, day = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    if region[:2] not in _CN_PROVINCES:
        return False
    try:
        _dt.date(year, month, day)
    except ValueError:
        return False
    body = m.group(0)[:17]
    check = "10X98765432"[sum(int(c) * w for c, w in zip(body, _CN_ID_WEIGHTS)) % 11]
    return m.group(6).upper() == check


def _whole_token(match: str, text: str) -> bool:
    """The match is not part of a longer word: "ASIAPACIFIC2026SUMMITX" is no AWS key."""
    return bool(re.search(r"(?<![A-Za-z0-9])" + re.escape(match) + r"(?![A-Za-z0-9])", text))


def _accept_aws(match: str, text: str) -> bool:
    if len(match) == 40:  # the plugin's quoted secret-access-key form
        return True
    return _whole_token(match, text) and _has_digit(match)


def _accept_long_random(min_len: int) -> Callable[[str, str], bool]:
    def accept(match: str, text: str) -> bool:
        token = match.strip(" \t\"=:")
        return len(token) >= min_len and _has_digit(token) and _has_alpha(token)

    return accept


_ACCEPT: dict[str, Callable[[str, str], bool]] = {
    "": lambda match, text: True,
    "aws": _accept_aws,
    "whole": _whole_token,
    "long30": _accept_long_random(30),
    "long32": _accept_long_random(32),
}


def _import_detect_secrets() -> dict[str, Any]:
    """Import and instantiate the detect-secrets pieces we use.

    Importing ``detect_secrets`` runs ``logging.captureWarnings(True)`` (in
    ``detect_secrets.core.log``), which would reroute every ``warnings.warn`` of the host
    process into logging; we switch that back off unless it was already on.
    """
    import logging
    import warnings

    before = warnings.showwarning
    try:
        heuristic = importlib.import_module("detect_secrets.filters.heuristic")
        keyword = importlib.import_module("detect_secrets.plugins.keyword")
        entropy = importlib.import_module("detect_secrets.plugins.high_entropy_strings")
        private_key = importlib.import_module("detect_secrets.plugins.private_key")
        basic_auth = importlib.import_module("detect_secrets.plugins.basic_auth")
        vendors = [
            (getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)(), description, _ACCEPT[accept])
            for module, cls, description, accept in _LIBRARY_VENDOR_PLUGINS
        ]
    finally:
        if warnings.showwarning is not before:
            logging.captureWarnings(False)
    return {
        "heuristic": heuristic,
        "keyword_detector": keyword.KeywordDetector(),
        # Unquoted ("password: x", "pwd=x") and quoted ("password = 'x'") assignment forms.
        "keyword_tables": (keyword.CONFIG_DENYLIST_REGEX_TO_GROUP, keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP),
        "base64_entropy": entropy.Base64HighEntropyString(),
        "hex_entropy": entropy.HexHighEntropyString(),
        "private_key": private_key.PrivateKeyDetector(),
        "basic_auth": basic_auth.BasicAuthDetector(),
        "vendors": vendors,
    }
