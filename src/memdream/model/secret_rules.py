"""The credential detector's rules. This module is a data table: vocabulary, stop words and
the home-made regular expressions, no logic.

What the rules mean and which cases they decide is said in model/secrets.py; how a match is
judged (shape, entropy, context) is model/secret_engine.py. Here are only the words and the
patterns, each commented with why detect-secrets does not cover it. Nothing is compiled at
import: `Rules()` compiles them once, when the engine is built on the first check.
"""

from __future__ import annotations


from memdream.model import lazyre as re

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

LEADING = "([{<\"'`"
TRAILING = ".,;:!?)]}>\"'`"

# A purely alphabetic value that is really the sentence going on ("my password is too
# weak").  Values with a digit or a symbol are judged on their shape instead.
STOPWORDS = frozenset(
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
STOP_SUFFIXES = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ous", "ive")

# Every entry of detect_secrets.plugins.keyword.DENYLIST contains one of these (checked in
# tests/test_secrets.py), so a text without any of them cannot match KeywordDetector.
KEYWORD_DETECTOR_STEMS = ("key", "pass", "pwd", "secret", "contrase")

# What a text must hold (folded: model/script.fold_case) for a check to find anything; a
# check's regular expressions are compiled on the first text that does. Every match of the
# check's patterns holds one of these (tests/test_secrets_gate.py generates matches of each
# pattern to check it): a new process that writes "The standup moved to 9:30" compiled all of
# them, about 15 ms (issue 21).
GATES = {
    # Every pattern of detect-secrets' PrivateKeyDetector holds one (tests/test_secrets_gate.py).
    "private_key": ("begin", "putty"),
    # url_userinfo needs "://", query_secret "=" (basic_auth, the plugin, "://").
    "url_credentials": ("://", "="),
    "auth_headers": ("bearer", "basic"),
    # Every alternative of credential_word, by its group.
    "natural_language": (
        "pin", "code", "combination",  # pin, pin_lower, code
        "key", "secret", "私钥", "私鑰", "密钥", "秘钥", "密鑰", "凭证", "凭据",  # private_key, key
        "token", "令牌",  # token
        "pass", "pw", "psw", "kennwort", "contrase", "senha", "パスワード", "비밀번호", "암호", "密码", "密碼", "口令",  # password, weak
    ),
    # cli_password (case-sensitive) and pair.
    "command_lines": (
        "curl", "wget", "http", "mysql", "docker", "podman", "nerdctl", "helm",
        "log", "sign", "cred", "account", "账号", "帐号", "账户", "帐户", "用户名", "登录", "登陆",
    ),
    # seed_phrase and recovery_codes.
    "recovery_material": ("phrase", "words", "mnemonic", "助记词", "助記詞", "code", "恢复码", "备用码", "救援码", "恢復碼", "備用碼"),
    # The name env_assignment wants ends in one of its words.
    "env_assignment": ("key", "token", "secret", "pass", "pwd", "dsn", "credential", "auth"),
}  # fmt: skip

DESCRIPTIONS = {
    "pin": "a PIN",
    "pin_lower": "a PIN",
    "code": "an access code",
    "private_key": "a private key",
    "token": "an access token",
    "key": "an API key or secret",
    "password": "a password",
    "weak": "a password",
}

# Chinese resident ID numbers (GB 11643-1999): the MOD 11-2 weights of the first 17 digits.
CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
# First two digits of the region code: the provinces of GB/T 2260 (and 71/81/82 for
# Taiwan, Hong Kong and Macao); an order number starting "20" or "90" is none of them.
CN_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 61 62 63 64 65 71 81 82".split()
)


class Rules:
    """The home-made regular expressions, compiled once when the engine is built."""

    def __init__(self) -> None:
        c = re.compile
        tail = r"(?P<tail>{})"
        # Vendor formats detect-secrets 1.5 lacks: (keywords, regex, description, whether the
        # "tail" group must look random, which keeps "sk-xxxx..." placeholders out). Every
        # match holds one of the keywords (folded: model/script.fold_case), as gitleaks'
        # rules do, so a rule is compiled and run only on a text holding one of them
        # (tests/test_secrets_gate.py generates matches of every rule to check it).
        self.vendors: list[tuple[tuple[str, ...], re.Pattern[str], str, bool]] = [
            # Anthropic: no plugin at all.
            (('sk-ant-',), c(_B + r"sk-ant-[a-z]{2,8}\d{2}-" + tail.format(r"[A-Za-z0-9_\-]{32,}")), "an Anthropic API key", True),
            # OpenAI: the plugin wants the legacy "T3BlbkFJ" marker flanked by 20 plain
            # alphanumerics; project, service-account and admin keys break that.
            (('sk-',), c(_B + r"sk-(?:proj|svcacct|admin|None)-" + tail.format(r"[A-Za-z0-9_\-]{32,}")), "an OpenAI API key", True),
            (('sk-',), c(_B + r"sk-" + tail.format(r"[A-Za-z0-9]{32,}") + r"(?![A-Za-z0-9_\-])"), "an OpenAI API key", True),
            # GitHub fine-grained PATs: the plugin knows only ghp_/gho_/ghu_/ghs_/ghr_.
            (('github_pat_',), c(r"github_pat_" + tail.format(r"[A-Za-z0-9_]{40,}")), "a GitHub token", True),
            # Google: no plugin.
            (('aiza',), c(_B + r"AIza" + tail.format(r"[0-9A-Za-z_\-]{35}") + r"(?![0-9A-Za-z_\-])"), "a Google API key", True),
            (('gocspx-',), c(_B + r"GOCSPX-" + tail.format(r"[0-9A-Za-z_\-]{28}")), "a Google OAuth client secret", True),
            # Hugging Face: no plugin.
            (('hf_',), c(_B + r"hf_" + tail.format(r"[A-Za-z0-9]{30,}") + _E), "a Hugging Face token", True),
            # npm: the plugin only knows the .npmrc "//registry/:_authToken=" line.
            (('npm_',), c(_B + r"npm_" + tail.format(r"[A-Za-z0-9]{36}") + _E), "an npm token", True),
            # Slack app-level tokens: the plugin knows xox[abposr]- only.
            (('xapp-',), c(r"xapp-\d-[A-Z0-9]+-\d+-" + tail.format(r"[a-f0-9]{32,}")), "a Slack token", False),
            # Stripe: the plugin knows live keys only; test keys and webhook secrets too.
            (('_test_', '_live_'), c(_B + r"(?:sk|rk)_(?:test|live)_" + tail.format(r"[0-9a-zA-Z]{24,}")), "a Stripe secret key", True),
            (('whsec_',), c(_B + r"whsec_" + tail.format(r"[A-Za-z0-9+/=]{24,}")), "a Stripe webhook secret", True),
            # Azure Service Bus / Event Hubs connection strings (the plugin: storage only).
            (('sharedaccesskey=',), c(r"SharedAccessKey=" + tail.format(r"[A-Za-z0-9+/]{42,}={0,2}")), "an Azure access key", True),
            # Chinese clouds, Shopify, DigitalOcean: no plugins.
            (('ltai',), c(_B + r"LTAI" + tail.format(r"[A-Za-z0-9]{12,28}") + _E), "an Alibaba Cloud AccessKey", True),
            (('akid',), c(_B + r"AKID" + tail.format(r"[A-Za-z0-9]{32}") + _E), "a Tencent Cloud SecretId", True),
            (('shp',), c(_B + r"shp(?:at|ss|ca|pa)_" + tail.format(r"[a-fA-F0-9]{32}") + _E), "a Shopify access token", False),
            (('dop_v1_',), c(_B + r"dop_v1_" + tail.format(r"[a-f0-9]{64}") + _E), "a DigitalOcean token", False),
            # Chat webhooks: whoever has the URL can post as the bot.
            (('discord',), c(r"discord(?:app)?\.com/api/webhooks/\d{5,}/" + tail.format(r"[\w\-]{40,}")), "a Discord webhook URL", True),
            (('/open-apis/bot/v2/hook/',), c(r"(?:open\.feishu\.cn|open\.larksuite\.com)/open-apis/bot/v2/hook/" + tail.format(r"[0-9a-f\-]{32,}")),
             "a chat webhook URL", False),
            (('qyapi.weixin.qq.com/cgi-bin/webhook/send?key=',), c(r"qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=" + tail.format(r"[0-9a-f\-]{32,}")),
             "a chat webhook URL", False),
            # Formats found missing by the independent corpus (issue 17; tests/data/
            # secret_corpus_independent.py names the scanner rule each comes from).
            # Google OAuth access and refresh tokens (trufflehog googleoauth2).
            (('ya29.',), c(_B + r"ya29\." + tail.format(r"[0-9A-Za-z_\-]{30,}")), "a Google OAuth token", True),
            (('1//0',), c(_B + r"1//0" + tail.format(r"[0-9A-Za-z_\-]{40,}")), "a Google OAuth refresh token", True),
            # Mailgun private API keys (gitleaks mailgun.go): "key-" and 32 hex digits.
            (('key-',), c(_B + r"(?:pub)?key-" + tail.format(r"[0-9a-f]{32}") + _E), "a Mailgun API key", True),
            # Mapbox secret tokens (gitleaks mapbox.go); "pk." ones are public.
            (('sk.eyj',), c(_B + r"sk\.eyJ" + tail.format(r"[A-Za-z0-9_\-]{40,}") + r"\.[A-Za-z0-9_\-]{16,}"), "a Mapbox secret token", True),
            # Notion integration secrets (gitleaks notion.go).
            (('secret_',), c(_B + r"secret_" + tail.format(r"[A-Za-z0-9]{43}") + _E), "a Notion integration secret", True),
            (('ntn_',), c(_B + r"ntn_\d{11}" + tail.format(r"[A-Za-z0-9]{35}") + _E), "a Notion integration secret", True),
            # Firebase Cloud Messaging legacy server keys; a device token has no "AAAA" part.
            (('apa91b',), c(_B + r"AAAA[A-Za-z0-9_\-]{7}:APA91b" + tail.format(r"[A-Za-z0-9_\-]{100,}")), "a Firebase server key", True),
            # Sentry auth tokens (trufflehog sentrytoken) and DSNs (a key in the URL's user part).
            (('sntryu_',), c(_B + r"sntryu_" + tail.format(r"[a-f0-9]{64}") + _E), "a Sentry token", True),
            (('sntrys_eyj',), c(_B + r"sntrys_eyJ" + tail.format(r"[A-Za-z0-9+/=_\-]{40,}")), "a Sentry token", True),
            (('http',), c(r"(?i)\bhttps?://" + tail.format(r"[0-9a-f]{32}") + r"(?::[0-9a-f]{32})?@[\w.\-]+(?::\d+)?/\d+"), "a Sentry DSN", True),
            # Docker Hub personal and organisation access tokens (trufflehog dockerhub).
            (('dckr_',), c(_B + r"dckr_(?:pat|oat)_" + tail.format(r"[A-Za-z0-9_\-]{20,}")), "a Docker Hub token", True),
            # gitleaks rules: Databricks, Dynatrace, Linear, HashiCorp Vault, Grafana, Postman,
            # Pulumi, Atlassian, Facebook, Flutterwave, Adyen, GitLab runner tokens.
            (('dapi',), c(_B + r"dapi" + tail.format(r"[a-f0-9]{32}") + r"(?:-\d)?" + _E), "a Databricks token", True),
            (('dt0c01.',), c(_B + r"dt0c01\.[A-Z0-9]{24}\." + tail.format(r"[A-Z0-9]{64}") + _E), "a Dynatrace token", True),
            (('lin_api_',), c(_B + r"lin_api_" + tail.format(r"[A-Za-z0-9]{40}") + _E), "a Linear API key", True),
            (('hvs.', 'hvb.', 'hvr.'), c(_B + r"hv[sbr]\." + tail.format(r"[A-Za-z0-9_\-]{24,}")), "a HashiCorp Vault token", True),
            (('glsa_',), c(_B + r"gls[a]_" + tail.format(r"[A-Za-z0-9]{32}") + r"_[a-f0-9]{8}" + _E), "a Grafana token", True),
            (('glc_',), c(_B + r"glc_" + tail.format(r"[A-Za-z0-9+/]{32,}={0,2}")), "a Grafana token", True),
            (('pmak-',), c(_B + r"PMAK-[a-f0-9]{24}-" + tail.format(r"[a-f0-9]{34}") + _E), "a Postman API key", True),
            (('pul-',), c(_B + r"pul-" + tail.format(r"[a-f0-9]{40}") + _E), "a Pulumi token", True),
            (('atatt3',), c(_B + r"ATATT3" + tail.format(r"[A-Za-z0-9_\-=]{100,}")), "an Atlassian API token", True),
            (('eaa',), c(_B + r"EAA[A-Za-z0-9]{1,3}" + tail.format(r"[A-Za-z0-9]{80,}") + _E), "a Facebook access token", True),
            (('flwseck',), c(_B + r"FLWSECK(?:_TEST)?-" + tail.format(r"[a-h0-9]{32}") + r"-X"), "a Flutterwave secret key", True),
            (('aqe',), c(_B + r"AQE[A-Za-z0-9]{2}" + tail.format(r"[A-Za-z0-9_\-]{60,}")), "an Adyen API key", True),
            (('glrt-',), c(_B + r"glrt-" + tail.format(r"[A-Za-z0-9_\-]{20,}")), "a GitLab runner token", True),
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
