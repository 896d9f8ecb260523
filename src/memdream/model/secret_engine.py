"""The credential detector's engine: every check in order, and how a value found next to a
credential word is judged (shape for passwords, entropy for keys, digits for PINs).

Built once, on the first call of `find_secret` (model/secrets.py); its rules are the data
table of model/secret_rules.py, its vendor formats partly detect-secrets' plugins
(model/secret_plugins.py).
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from typing import Callable, Optional

from memdream.model.script import fold_case, holds_any
from memdream.model.secret_plugins import import_detect_secrets
from memdream.model.secret_rules import (
    CN_ID_WEIGHTS,
    CN_PROVINCES,
    DESCRIPTIONS,
    GATES,
    KEYWORD_DETECTOR_STEMS,
    LEADING,
    STOP_SUFFIXES,
    STOPWORDS,
    TRAILING,
    Rules,
)


# What every match of detect-secrets' vendor plugins that we accept holds (model/secret_plugins.py;
# checked pattern by pattern, and tests/test_secrets_gate.py runs the plugins over the corpora
# and over strings generated from their patterns): a JWT's "eyJ", an .npmrc's "_authToken" or a
# URL's "://" (Slack webhooks, Cloudant and SoftLayer URLs), or a run of token characters that
# is (a) at least 10 long with a digit and something else (a prefix such as AKIA, ghp_, sk-, SG.,
# xox, AC), or (b) at least 17 long without a digit (every all-letter form is 20 or more), or (c)
# at least 35 digits (the shortest all-digit value: a Telegram token's tail; the keyword-led
# forms are 40 to 64). So a phone, order or card number never imports the library by itself.
_TOKEN_RUN = r"[A-Za-z\d_\-+/=.\\\u0130\u0131\u017f\u212a]{10,}"
_LIBRARY_MARKS = ("eyj", "_authtoken", "://")
_LIBRARY_LOCK = threading.Lock()


def may_match_library_vendor(text: str) -> bool:
    """Could one of detect-secrets' vendor plugins find something in `text` that we accept?
    False means certainly not, so the library need not be imported for it."""
    lowered = text.lower()
    if any(mark in lowered for mark in _LIBRARY_MARKS):
        return True
    for run in re.findall(_TOKEN_RUN, text):
        digits = sum(c.isdigit() for c in run)
        if (0 < digits < len(run)) or (digits == 0 and len(run) >= 17) or len(run) >= 35:
            return True
    return False


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


class Engine:
    """Every check, in order. detect-secrets is imported on first need, not when the engine is
    built: only for a text that could hold what one of its plugins finds (`may_match_library_vendor`)
    or when a home-made check judges a value with its heuristics and entropy. Its import costs
    about 0.15 s in a new process, and most memories are plain sentences (issue 21)."""

    def __init__(self) -> None:
        self._ds: Optional[dict] = None
        self.r = Rules()
        # Each check with what a text must hold for it to find anything (secret_rules.GATES;
        # None: the check has its own gate or none): a check runs, and its patterns are
        # compiled, only on a text that passes. A check is given the text and the text folded
        # (script.fold_case), made once per call.
        self.checks: tuple[tuple[Callable[[str, str], Optional[str]], Optional[tuple[str, ...]]], ...] = (
            (self._check_library_vendors, None),
            (self._check_homemade_vendors, None),
            (self._check_private_key, GATES["private_key"]),
            (self._check_url_credentials, GATES["url_credentials"]),
            (self._check_auth_headers, GATES["auth_headers"]),
            (self._check_natural_language, GATES["natural_language"]),
            (self._check_library_keywords, KEYWORD_DETECTOR_STEMS),
            (self._check_command_lines, GATES["command_lines"]),
            (self._check_recovery_material, GATES["recovery_material"]),
            (self._check_env_assignment, GATES["env_assignment"]),
            (self._check_personal_numbers, None),
        )

    # -- detect-secrets, imported on first need ---------------------------------------

    @property
    def ds(self) -> dict:
        if self._ds is None:
            with _LIBRARY_LOCK:
                if self._ds is None:
                    self._ds = import_detect_secrets()
        return self._ds

    def is_templated(self, v: str) -> bool:  # {x}, <x>, ${x}
        return bool(self.ds["heuristic"].is_templated_secret(v))

    def is_dollar(self, v: str) -> bool:  # $DB_PASSWORD
        return bool(self.ds["heuristic"].is_prefixed_with_dollar_sign(v))

    def is_indirect(self, v: str) -> bool:  # secret = get_secret("x")
        return bool(self.ds["heuristic"].is_indirect_reference(v))

    def is_sequential(self, v: str) -> bool:  # abcdef123456
        return bool(self.ds["heuristic"].is_sequential_string(v))

    def is_uuid(self, v: str) -> bool:
        return bool(self.ds["heuristic"].is_potential_uuid(v))

    def find(self, text: str) -> Optional[str]:
        folded = fold_case(text)
        for check, gate in self.checks:
            if gate is not None and not holds_any(folded, gate):
                continue
            found = check(text, folded)
            if found:
                return found
        return None

    # -- detect-secrets ---------------------------------------------------------------

    def _check_library_vendors(self, text: str, folded: str) -> Optional[str]:
        return self.library_vendor_finding(text) if may_match_library_vendor(text) else None

    def library_vendor_finding(self, text: str) -> Optional[str]:
        """What detect-secrets' vendor plugins find in `text` that we accept, ungated (the gate's
        test holds it against this)."""
        for plugin, description, accept in self.ds["vendors"]:
            try:
                for match in plugin.analyze_string(text):
                    if accept(match, text):
                        return "a Slack webhook URL" if "hooks.slack.com" in match else description
            except (RecursionError, ValueError, TypeError, UnicodeError):
                # e.g. a JWT-looking payload nested deeper than json's recursion limit: not
                # a well-formed token, so not this plugin's finding.
                continue
        return None

    def _check_library_keywords(self, text: str, folded: str) -> Optional[str]:
        """detect-secrets' ``KeywordDetector``: ``password = "..."``, ``api_key: ...``.

        Its value group runs to the end of the line, so we judge the first token only,
        and we do judge it: alone, the plugin flags ``password: forgot it`` and
        ``api_key = os.environ["OPENAI_API_KEY"]``.
        """
        for table in self.ds["keyword_tables"]:
            for value in self.ds["keyword_detector"].analyze_string(text, denylist_regex_to_group=table):
                words = value.split() if value else []
                if not words:
                    continue
                if self.is_indirect(text):  # secret = get_secret("x"), pw = request.args["pw"]
                    return None
                if self._password_value(words[0], quoted=False, at_end=len(words) == 1, strict=False):
                    return "a password or secret key"
        return None

    def _check_private_key(self, text: str, folded: str) -> Optional[str]:
        # PrivateKeyDetector fires on the header alone; we also require key material after
        # it, so "my file starts with -----BEGIN OPENSSH PRIVATE KEY-----" is a question.
        if not any(True for _ in self.ds["private_key"].analyze_string(text)):
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

    def _check_homemade_vendors(self, text: str, folded: str) -> Optional[str]:
        for keywords, regex, description, needs_randomness in self.r.vendors:
            if not holds_any(folded, keywords):
                continue  # no match can be there: the rule is not even compiled
            for m in regex.finditer(text):
                if needs_randomness and not self._random_looking(m.group("tail")):
                    continue  # sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is a placeholder
                return description
        return None

    def _check_url_credentials(self, text: str, folded: str) -> Optional[str]:
        # BasicAuthDetector matches "://user:pass@" only when neither part holds a reserved
        # or sub-delimiter character, so it misses "redis://:pass@host" (empty user) and
        # passwords with ! $ * ( ) , ; = in them, and it flags the "user:password@"
        # placeholder of every tutorial.  We add a more permissive URL rule and put both
        # through the same placeholder filter, plus secrets in query strings.
        for value in self.ds["basic_auth"].analyze_string(text) if "://" in text else ():
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

    def _check_auth_headers(self, text: str, folded: str) -> Optional[str]:
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

    def _check_command_lines(self, text: str, folded: str) -> Optional[str]:
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

    def _check_recovery_material(self, text: str, folded: str) -> Optional[str]:
        # Wallet seed phrases: twelve or more plain words after "seed phrase" / "助记词".
        for m in self.r.seed_phrase.finditer(text):
            words = m.group("words").split()
            if len(words) >= 12 and not any(w in STOPWORDS for w in words):
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

    def _check_env_assignment(self, text: str, folded: str) -> Optional[str]:
        """``AZURE_OPENAI_KEY=3f9a...``: a name ending in key/token/secret/... and a random value."""
        if "=" not in text and ":" not in text:
            return None
        for m in self.r.env_assignment.finditer(text):
            value = m.group("v").rstrip(".)]}>")
            if self._key_value(value, m.group("name"), allow_slash=True):
                return "an API key or secret"
        return None

    def _check_personal_numbers(self, text: str, folded: str) -> Optional[str]:
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

    def _check_natural_language(self, text: str, folded: str) -> Optional[str]:
        """"my password is hunter2", "银行卡密码 482913", "API key: 3f9a...", "PIN码是 2580"."""
        r = self.r
        for m in r.credential_word.finditer(text):
            kind = next(k for k in DESCRIPTIONS if m.group(k))
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
                    return DESCRIPTIONS[kind]
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
        while value and value[0] in LEADING and not placeholder.match(value):
            value = value[1:]
        while value and value[-1] in TRAILING and not placeholder.match(value):
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
            return not r.placeholder.match(value) and not all(w in STOPWORDS for w in words)
        if self.is_templated(value) or self.is_dollar(value) or r.placeholder.match(value):
            return False
        if r.url_or_email.search(value) or r.path.match(value) or r.version.match(value):
            return False
        if r.date_or_time.match(value) or r.identifier_ref.match(value) or r.contraction.match(value):
            return False
        if self.is_indirect(value):
            return False
        lowered = value.lower()
        if lowered in STOPWORDS:
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
            return not (lowered.endswith(STOP_SUFFIXES) and len(lowered) > 5)
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
            return len(core) >= 16 and self.ds["hex_entropy"].calculate_shannon_entropy(core) > 3.0
        entropy = self.ds["base64_entropy"].calculate_shannon_entropy(value)
        if _mixed_case(value):
            return entropy > 3.5
        if self.r.base32.fullmatch(value):  # TOTP seeds
            return len(value) >= 16 and entropy > 3.0
        return len(value) >= 24 and entropy > 3.8


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


def _cn_id_ok(m: "re.Match[str]") -> bool:
    """A GB 11643-1999 number: a province, a real birth date, the MOD 11-2 check digit."""
    import datetime as _dt

    region, year, month, day = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    if region[:2] not in CN_PROVINCES:
        return False
    try:
        _dt.date(year, month, day)
    except ValueError:
        return False
    body = m.group(0)[:17]
    check = "10X98765432"[sum(int(c) * w for c, w in zip(body, CN_ID_WEIGHTS)) % 11]
    return m.group(6).upper() == check
