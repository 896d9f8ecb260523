"""The independent part of the secrets corpus: samples taken from what others wrote.

``tests/data/secret_corpus.py`` was written together with the rules of
``memdream.model.secrets``, so it measures how well the rules fit their authors' idea.
This file is measured separately (``python bench/secrets_corpus.py`` prints both parts).
Its samples come from the test fixtures and rule sets of maintained secret scanners and
PII recognizers, each sample naming its source (repository and path):

* gitleaks/gitleaks ``cmd/generate/config/rules/*.go`` (each rule's ``tps`` / ``fps``),
* trufflesecurity/trufflehog ``pkg/detectors/*/*_test.go``,
* Yelp/detect-secrets ``tests/plugins/*_test.py``,
* microsoft/presidio ``presidio-analyzer/tests/test_*_recognizer.py`` (cards, SSNs),
* GitHub's token-format documentation (docs.github.com, "GitHub's token formats"),
* GB 11643-1999 (the check digit of the Chinese resident ID number).

Where a source used a real-looking value, the value here is synthetic: the same shape
(prefix, length, alphabet) drawn from a fixed seed at import time, so the file holds no
literal token a push-protection hook would trip over.  Where a source wrote code or a
config line, it is kept as the line; a sentence around it says how a person would hand it
to a chat agent (the setting memdream guards).  Sources written in English are also
phrased in Chinese, because memdream's users speak both.

``SECRETS`` must be refused, ``HARMLESS`` must not.  Items: ``(text, note, source)``;
notes are unique and used as pytest ids.  The goals (issue 17): at least 99% of
``SECRETS`` refused, at most 1% of ``HARMLESS``.
"""

from __future__ import annotations

import random
import string

_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "-_"
_HEX = "0123456789abcdef"
_LOWER_ALNUM = string.ascii_lowercase + string.digits
_B64 = _ALNUM + "+/"

G = "gitleaks/gitleaks cmd/generate/config/rules/"
T = "trufflesecurity/trufflehog pkg/detectors/"
DS = "Yelp/detect-secrets tests/plugins/"
P = "microsoft/presidio presidio-analyzer/tests/"
GH = "docs.github.com about-authentication-to-github#githubs-token-formats"


def _tok(seed: str, n: int, alphabet: str = _ALNUM) -> str:
    """A deterministic random string holding a digit and (if the alphabet has them) both cases."""
    classes = [c for c in (string.digits, string.ascii_uppercase, string.ascii_lowercase) if set(c) & set(alphabet)]
    attempt = 0
    while True:
        rng = random.Random(f"independent/{seed}/{attempt}")
        out = "".join(rng.choice(alphabet) for _ in range(n))
        if all(set(out) & set(c) for c in classes) or n < 8:
            return out
        attempt += 1


def _luhn_complete(prefix: str, length: int, seed: str) -> str:
    """A card number of `length` digits starting with `prefix`, with a valid Luhn digit."""
    rng = random.Random(f"card/{seed}")
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return body + str((10 - total % 10) % 10)


def _cn_id(region: str, birth: str, seq: str) -> str:
    """A Chinese resident ID number (GB 11643-1999) with its ISO 7064 MOD 11-2 check digit."""
    body = region + birth + seq
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    check = "10X98765432"[sum(int(c) * w for c, w in zip(body, weights)) % 11]
    return body + check


def _cn_id_bad(region: str, birth: str, seq: str) -> str:
    good = _cn_id(region, birth, seq)
    wrong = "0" if good[-1] != "0" else "1"
    return good[:-1] + wrong


def _spaced(number: str) -> str:
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


_VISA = _luhn_complete("4", 16, "visa")
_MC = _luhn_complete("55", 16, "mc")
_AMEX = _luhn_complete("37", 15, "amex")
_UNIONPAY = _luhn_complete("62", 16, "unionpay")
_UNIONPAY2 = _luhn_complete("6228", 19, "unionpay19")
_ID1 = _cn_id("110105", "19880317", "123")
_ID2 = _cn_id("440305", "19951202", "458")
_ID3 = _cn_id("330106", "20010709", "02")[:-1]  # shortened below
_ID3 = _cn_id("330106", "20010709", "027")
_ID4 = _cn_id("510104", "19790101", "99")[:-1]
_ID4 = _cn_id("510104", "19790101", "992")
_SENTRY_KEY = _tok("sentry-dsn", 32, _HEX)
_MAPBOX_SK = "sk.eyJ1Ijoi" + _tok("mapbox-1", 60, _URLSAFE) + "." + _tok("mapbox-2", 22, _URLSAFE)
_FCM = "AAAA" + _tok("fcm-1", 7, _URLSAFE) + ":APA91b" + _tok("fcm-2", 134, _URLSAFE)

SECRETS: list[tuple[str, str, str]] = [
    # --- Google OAuth access and refresh tokens ------------------------------------------
    (f"ya29.{_tok('ya29-1', 120, _URLSAFE)}", "google oauth access token bare", T + "googleoauth2/googleoauth2_test.go"),
    (f"the gcloud access token for the demo is ya29.{_tok('ya29-2', 150, _URLSAFE)}", "google oauth access token sentence", T + "googleoauth2/googleoauth2_test.go"),
    (f"谷歌的访问令牌：ya29.a0{_tok('ya29-3', 140, _URLSAFE)}，一小时内有效", "google oauth access token zh", T + "googleoauth2/googleoauth2_test.go"),
    (f"Authorization: Bearer ya29.{_tok('ya29-4', 160, _URLSAFE)}", "google oauth bearer header", G + "curl.go"),
    (f"refresh_token=1//0{_tok('goog-refresh', 100, _URLSAFE)}", "google oauth refresh token", G + "gcp.go"),
    (f"GOOGLE_API_KEY=AIza{_tok('gcp-key', 35, _URLSAFE)}", "gcp api key env", G + "gcp.go"),
    (f"谷歌地图 key 是 AIza{_tok('gcp-key-zh', 35, _URLSAFE)}", "gcp api key zh", G + "gcp.go"),
    # --- Azure OpenAI (trufflehog azure_openai_test.go) ----------------------------------
    (f"export OPENAI_API_KEY={_tok('az-oai-1', 32, _HEX)}", "azure openai export env", T + "azure_openai/azure_openai_test.go"),
    (f"AZURE_OPENAI_KEY={_tok('az-oai-2', 32, _HEX)}", "azure openai key env", T + "azure_openai/azure_openai_test.go"),
    (f'"AZURE_OPENAI_KEY": "{_tok("az-oai-3", 32, _HEX)}"', "azure openai key json", T + "azure_openai/azure_openai_test.go"),
    (f"openai.api_key = '{_tok('az-oai-4', 32, _HEX)}'", "azure openai python assignment", T + "azure_openai/azure_openai_test.go"),
    (f"'api-key': '{_tok('az-oai-5', 32, _HEX)}', 'OpenAI-Debug': 'true'", "azure openai api-key header dict", T + "azure_openai/azure_openai_test.go"),
    (f'apiKey: "{_tok("az-oai-6", 32, _HEX)}", baseURL: "https://kumar-azure.openai.azure.com/"', "azure openai typescript", T + "azure_openai/azure_openai_test.go"),
    (f"公司 Azure OpenAI 的 AZURE_OPENAI_KEY={_tok('az-oai-7', 32, _HEX)}，别发到群里", "azure openai key zh", T + "azure_openai/azure_openai_test.go"),
    # --- cards with CVV (presidio test numbers; synthetic Luhn-valid values) --------------
    (f"my credit card: {_VISA} exp 08/29 CVV 123", "card number with cvv en", P + "test_credit_card_recognizer.py"),
    (f"Card {_spaced(_MC)}, expiry 11/27, security code 482", "card spaced with security code en", P + "test_credit_card_recognizer.py"),
    (f"Amex {_AMEX} CID 7391", "amex with cid", P + "test_credit_card_recognizer.py"),
    (f"my credit card number is {_VISA}", "card number with context en", P + "test_credit_card_recognizer.py"),
    (f"我的信用卡号 {_VISA}，有效期 08/29，安全码 123", "card number with cvv zh", P + "test_credit_card_recognizer.py"),
    (f"银行卡号：{_UNIONPAY2} 背面三位数 CVV2 是 517", "unionpay 19 with cvv2 zh", P + "test_credit_card_recognizer.py"),
    (f"帮我记一下招行卡 {_spaced(_UNIONPAY)} 安全码 904", "card spaced with anquanma zh", P + "test_credit_card_recognizer.py"),
    (f"卡号 {_MC} 有效期 2028年3月 CVV：661", "card with cvv colon zh", P + "test_credit_card_recognizer.py"),
    # --- Chinese resident ID numbers (GB 11643-1999 check digit) -------------------------
    (f"我的身份证号是 {_ID1}", "cn resident id zh", "GB 11643-1999; presidio-style national id recognizer"),
    (f"身份证：{_ID2}，订票用", "cn resident id colon zh", "GB 11643-1999"),
    (f"帮我填表，身份证号码 {_ID3}", "cn resident id form zh", "GB 11643-1999"),
    (f"My Chinese ID card number is {_ID4}", "cn resident id en", "GB 11643-1999"),
    (f"{_ID1}", "cn resident id bare", "GB 11643-1999"),
    # --- US SSNs (presidio test_us_ssn_recognizer.py shapes) ------------------------------
    ("My SSN is 078-05-1120", "us ssn dashed en", P + "test_us_ssn_recognizer.py"),
    ("social security number: 219 09 9999", "us ssn spaced en", P + "test_us_ssn_recognizer.py"),
    ("ssn=536901234 for the W-2 form", "us ssn bare digits en", P + "test_us_ssn_recognizer.py"),
    ("我的美国社会安全号码 SSN 是 432-56-7890", "us ssn zh", P + "test_us_ssn_recognizer.py"),
    # --- Mailgun, Mapbox, Notion, Sentry, Firebase ----------------------------------------
    (f"mailgun_api_key = key-{_tok('mg-1', 32, _HEX)}", "mailgun private key assignment", G + "mailgun.go"),
    (f"Mailgun key-{_tok('mg-2', 32, _HEX)} for the newsletter", "mailgun private key sentence", G + "mailgun.go"),
    (f"Mailgun 的发信密钥 key-{_tok('mg-3', 32, _HEX)}", "mailgun key zh", G + "mailgun.go"),
    (f"MAILGUN_SIGNING_KEY={_tok('mg-4', 32, _HEX)}-{_tok('mg-5', 8, _HEX)}-{_tok('mg-6', 8, _HEX)}", "mailgun signing key", G + "mailgun.go"),
    (f"MAPBOX_SECRET_TOKEN={_MAPBOX_SK}", "mapbox secret token env", G + "mapbox.go"),
    (f"mapbox download token {_MAPBOX_SK}", "mapbox secret token sentence", G + "mapbox.go"),
    (f"Mapbox 下载用的令牌 sk.eyJ1Ijoi{_tok('mapbox-3', 60, _URLSAFE)}.{_tok('mapbox-4', 22, _URLSAFE)}", "mapbox secret token zh", G + "mapbox.go"),
    (f"NOTION_TOKEN=secret_{_tok('notion-1', 43)}", "notion internal integration secret", G + "notion.go"),
    (f"Notion integration token: ntn_{_tok('notion-2', 11, string.digits)}{_tok('notion-3', 35)}", "notion ntn token", G + "notion.go"),
    (f"Notion 的集成密钥 secret_{_tok('notion-4', 43)}", "notion secret zh", G + "notion.go"),
    (f"SENTRY_DSN=https://{_SENTRY_KEY}@o{_tok('sentry-org', 6, string.digits)}.ingest.sentry.io/{_tok('sentry-proj', 7, string.digits)}", "sentry dsn env", T + "sentrytoken/v2/sentrytoken_test.go"),
    (f"Sentry.init({{ dsn: 'https://{_tok('sentry-2', 32, _HEX)}@sentry.example.com/12' }})", "sentry dsn js", T + "sentrytoken/v2/sentrytoken_test.go"),
    (f"Sentry 的 DSN：https://{_tok('sentry-3', 32, _HEX)}@o4504.ingest.sentry.io/45", "sentry dsn zh", T + "sentrytoken/v2/sentrytoken_test.go"),
    (f"sentry_token := sntryu_{_tok('sentry-4', 64, _HEX)}", "sentry user token", T + "sentrytoken/v2/sentrytoken_test.go"),
    (f"SENTRY_AUTH_TOKEN={_tok('sentry-5', 64, _HEX)}", "sentry auth token hex", G + "sentry.go"),
    (f"FCM server key: {_FCM}", "firebase fcm server key", "SonarSource secrets rule S6710 (legacy FCM keys)"),
    (f"Firebase 推送的服务器密钥 AAAA{_tok('fcm-3', 7, _URLSAFE)}:APA91b{_tok('fcm-4', 134, _URLSAFE)}", "firebase fcm server key zh", "SonarSource secrets rule S6710 (legacy FCM keys)"),
    (f'curl -X POST --header "Authorization: key={_FCM}" https://fcm.googleapis.com/fcm/send', "firebase fcm key in curl", G + "curl.go"),
    # --- docker ---------------------------------------------------------------------------
    (f"docker login -u deploybot -p {_tok('docker-1', 16)} registry.example.com", "docker login -p", T + "dockerhub/v2/dockerhub_test.go"),
    (f"docker login --username ci --password '{_tok('docker-2', 14)}!' ghcr.io", "docker login --password", T + "dockerhub/v2/dockerhub_test.go"),
    (f'docker_token: "dckr_pat_{_tok("docker-3", 27, _URLSAFE)}"', "docker hub pat", T + "dockerhub/v2/dockerhub_test.go"),
    (f"Docker Hub 的访问令牌 dckr_pat_{_tok('docker-4', 27, _URLSAFE)}", "docker hub pat zh", T + "dockerhub/v2/dockerhub_test.go"),
    (f"用 docker login -u admin -p {_tok('docker-5', 12)} harbor.internal 登录私有仓库", "docker login zh", T + "dockerhub/v2/dockerhub_test.go"),
    # --- passwords stated in prose --------------------------------------------------------
    ("The root password on the staging box is now toor_Staging_7", "root password prose", "issue 17 (the adversarial pass)"),
    ("FYI the admin password for the router got changed to Linksys#2026", "router admin password prose", "issue 17 (the adversarial pass)"),
    ("staging 机器的 root 密码现在是 toor_Staging_7", "root password prose zh", "issue 17 (the adversarial pass)"),
    ("新的 VPN 密码改成了 Vpn@2026spring", "vpn password prose zh", "issue 17 (the adversarial pass)"),
    ("the_password='" + _tok("ds-kw-1", 14, _B64) + "'", "detect-secrets the_password quoted", DS + "keyword_test.py"),
    ("my_password = " + _tok("ds-kw-2", 18, _B64) + "!", "detect-secrets my_password unquoted", DS + "keyword_test.py"),
    ('apikey := "' + _tok("ds-kw-3", 24) + '"', "detect-secrets go apikey", DS + "keyword_test.py"),
    ('some_dict["secret"] = "' + _tok("ds-kw-4", 20) + '"', "detect-secrets dict secret", DS + "keyword_test.py"),
    ("private_key '" + _tok("ds-kw-5", 24) + "';", "detect-secrets private_key quotes semicolon", DS + "keyword_test.py"),
    # --- curl (gitleaks curl.go tps) ------------------------------------------------------
    ("curl --cacert ca.crt -u elastic:P@ssw0rd$1 https://localhost:9200", "curl -u elastic", G + "curl.go"),
    ("curl -sw '%{http_code}' -X POST --user 'johns:h0pk1ns~21s' $GITHUB_API_URL/$GIT_COMMIT --data", "curl --user quoted", G + "curl.go"),
    ('curl -s -v --user "j.smith:dB2yF6@qL9vZm1P#4J" "https://api.contoso.org/user/me"', "curl --user double quoted", G + "curl.go"),
    ("curl --user kevin:'pRf7vG2h1L8nQkW9' -iX PATCH -H \"Content-Type: application/json\"", "curl --user mixed quoting", G + "curl.go"),
    ("curl -u \":d2LkV78zLx!t\" https://localhost:9200", "curl -u empty username", G + "curl.go"),
    ("curl -H 'Authorization: Basic " + "YnJvd3Nlcjpz" + "ZWNyZXQxMjM=' https://registry.example.com", "curl basic header", G + "curl.go"),
    (f'curl -H "Authorization: Token {_tok("curl-tok", 40, _HEX)}" --request PUT https://appsecclass.report/api/use/635', "curl token header", G + "curl.go"),
    (f'curl -X GET -H "apikey: {_tok("curl-apikey", 36, _HEX)}" -H "Accept: application/json"', "curl apikey header", G + "curl.go"),
    (f'curl -H "X-Octopus-ApiKey: API-{_tok("octo", 26, string.ascii_uppercase + string.digits)}" https://octopus.corp.net/', "curl x-apikey header", G + "curl.go"),
    # --- GitHub (GitHub's token formats) --------------------------------------------------
    (f"ghp_{_tok('gh-ind-1', 36)}", "github classic pat bare", GH),
    (f"gho_{_tok('gh-ind-2', 36)}", "github oauth token bare", GH),
    (f"ghu_{_tok('gh-ind-3', 36)}", "github user-to-server bare", GH),
    (f"ghs_{_tok('gh-ind-4', 36)}", "github server-to-server bare", GH),
    (f"ghr_{_tok('gh-ind-5', 36)}", "github refresh token bare", GH),
    (f"github_pat_11{_tok('gh-ind-6', 20, string.ascii_uppercase + string.digits)}_{_tok('gh-ind-7', 59)}", "github fine-grained bare", GH),
    (f"把 GITHUB_TOKEN=ghp_{_tok('gh-ind-8', 36)} 配到 CI 里", "github token env zh", GH),
    # --- other vendors (gitleaks rules) ---------------------------------------------------
    (f"glpat-{_tok('gl-ind-1', 20, _URLSAFE)}", "gitlab pat bare", G + "gitlab.go"),
    (f"GITLAB_RUNNER_TOKEN=glrt-{_tok('gl-ind-2', 20, _URLSAFE)}", "gitlab runner token", G + "gitlab.go"),
    (f"xoxb-{_tok('sl-ind-1', 12, string.digits)}-{_tok('sl-ind-2', 13, string.digits)}-{_tok('sl-ind-3', 24)}", "slack bot token bare", G + "slack.go"),
    (f"https://hooks.slack.com/services/T{_tok('sl-ind-4', 8, string.ascii_uppercase + string.digits)}/B{_tok('sl-ind-5', 10, string.ascii_uppercase + string.digits)}/{_tok('sl-ind-6', 24)}", "slack webhook bare", G + "slack.go"),
    (f"sk_live_{_tok('stripe-ind-1', 24)}", "stripe live key bare", G + "stripe.go"),
    (f"rk_live_{_tok('stripe-ind-2', 24)}", "stripe restricted key bare", G + "stripe.go"),
    (f"SG.{_tok('sg-ind-1', 22, _URLSAFE)}.{_tok('sg-ind-2', 43, _URLSAFE)}", "sendgrid key bare", G + "sendgrid.go"),
    (f"twilio api key SK{_tok('tw-ind-1', 32, _HEX)}", "twilio api key", G + "twilio.go"),
    (f"shpat_{_tok('shop-ind-1', 32, _HEX)}", "shopify access token bare", G + "shopify.go"),
    (f"dapi{_tok('databricks-1', 32, _HEX)}", "databricks token bare", G + "databricks.go"),
    (f"DOPPLER_TOKEN=dp.pt.{_tok('doppler-1', 43)}", "doppler token", G + "doppler.go"),
    (f"dt0c01.{_tok('dyn-1', 24, string.ascii_uppercase + string.digits)}.{_tok('dyn-2', 64, string.ascii_uppercase + string.digits)}", "dynatrace token", G + "dynatrace.go"),
    (f"lin_api_{_tok('linear-1', 40)}", "linear api key", G + "linear.go"),
    (f"pypi-AgEIcHlwaS5vcmc{_tok('pypi-1', 70, _URLSAFE)}", "pypi token bare", G + "pypi.go"),
    (f"npm_{_tok('npm-ind-1', 36)}", "npm token bare", G + "npm.go"),
    (f"hf_{_tok('hf-ind-1', 34, string.ascii_letters)}", "huggingface token bare", G + "huggingface.go"),
    (f"sk-ant-api03-{_tok('ant-ind-1', 93, _URLSAFE)}AA", "anthropic key bare", G + "anthropic.go"),
    (f"sk-proj-{_tok('oai-ind-1', 74, _URLSAFE)}T3BlbkFJ{_tok('oai-ind-2', 74, _URLSAFE)}", "openai project key bare", G + "openai.go"),
    (f"hvs.{_tok('vault-1', 90, _URLSAFE)}", "hashicorp vault service token", G + "hashicorp_vault.go"),
    (f"HEROKU_API_KEY={_tok('heroku-1', 8, _HEX)}-{_tok('heroku-2', 4, _HEX)}-{_tok('heroku-3', 4, _HEX)}-{_tok('heroku-4', 4, _HEX)}-{_tok('heroku-5', 12, _HEX)}", "heroku api key uuid", G + "heroku.go"),
    (f"glsa_{_tok('grafana-1', 32)}_{_tok('grafana-2', 8, _HEX)}", "grafana service account token", G + "grafana.go"),
    (f"dop_v1_{_tok('do-ind-1', 64, _HEX)}", "digitalocean token bare", G + "digitalocean.go"),
    (f"PMAK-{_tok('postman-1', 24, _HEX)}-{_tok('postman-2', 34, _HEX)}", "postman api key", G + "postman.go"),
    (f"pul-{_tok('pulumi-1', 40, _HEX)}", "pulumi token", G + "pulumi.go"),
    (f"ATATT3xFfGF0{_tok('atl-1', 180, _URLSAFE)}={_tok('atl-2', 8, string.ascii_uppercase + string.digits)}", "atlassian api token", G + "atlassian.go"),
    (f"LTAI{_tok('ali-ind-1', 20)}", "alibaba access key bare", G + "alibaba.go"),
    (f"AKIA{_tok('aws-ind-1', 16, string.ascii_uppercase + string.digits)}", "aws access key bare", G + "aws.go"),
    (f"aws_secret_access_key={_tok('aws-ind-2', 40, _B64)}", "aws secret key assignment", G + "aws.go"),
    (f"{_tok('tg-1', 10, string.digits)}:AA{_tok('tg-2', 33, _URLSAFE)}", "telegram bot token bare", DS + "telegram_token_test.py"),
    (f"EAAC{_tok('fb-1', 100)}", "facebook access token", G + "facebook.go"),
    (f"Okta 的 API token 00{_tok('okta-1', 40, _URLSAFE)}", "okta api token zh", DS + "okta_test.py"),
    (f"FLWSECK-{_tok('flw-1', 32, _HEX)}-X", "flutterwave secret key", G + "flutterwave.go"),
    (f"ADYEN_KEY=AQE{_tok('adyen-1', 100, _URLSAFE)}", "adyen api key env", G + "adyen.go"),
    (f"xapp-1-A{_tok('xapp-1', 10, string.ascii_uppercase + string.digits)}-{_tok('xapp-2', 13, string.digits)}-{_tok('xapp-3', 64, _HEX)}", "slack app token", G + "slack.go"),
    # --- connection strings ---------------------------------------------------------------
    (f"postgresql://app:{_tok('db-ind-1', 16)}@db.internal:5432/prod", "postgres url", G + "database.go"),
    (f"mongodb+srv://admin:{_tok('db-ind-2', 16)}@cluster0.abcde.mongodb.net/test", "mongodb srv url", G + "database.go"),
    (f"DATABASE_URL=mysql://root:{_tok('db-ind-3', 12)}@127.0.0.1:3306/shop", "mysql url env", G + "database.go"),
    (f"数据库连接串 redis://:{_tok('db-ind-4', 18)}@10.0.0.8:6379/0", "redis url zh", G + "database.go"),
    # --- private keys and JWTs ------------------------------------------------------------
    ("-----BEGIN RSA PRIVATE KEY----- " + " ".join(_tok(f"rsa-{i}", 64, _B64) for i in range(3)) + " -----END RSA PRIVATE KEY-----", "rsa private key block", G + "RSA.go"),
    ("-----BEGIN PRIVATE KEY----- " + " ".join(_tok(f"pkcs8-{i}", 64, _B64) for i in range(3)) + " -----END PRIVATE KEY-----", "pkcs8 private key block", G + "PKCS8.go"),
    ("-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA" + _tok("ossh", 120, _B64) + " -----END OPENSSH PRIVATE KEY-----", "openssh private key block", DS + "private_key_test.py"),
    ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0." + _tok("jwt-ind", 43, _URLSAFE), "jwt bare", DS + "jwt_test.py"),
    # --- generic assignments (gitleaks generic.go tps) ------------------------------------
    (f'"client_secret" : "{_tok("generic-1", 64, _HEX)}",', "generic client_secret json", G + "generic.go"),
    (f"generic_token = {_tok('generic-2', 32)}", "generic token assignment", G + "generic.go"),
    (f"API_SECRET={_tok('generic-3', 40)}", "generic api secret env", G + "generic.go"),
    (f"把 CLIENT_SECRET={_tok('generic-4', 40)} 写到 .env 里", "generic client secret zh", G + "generic.go"),
    (f"app secret 是 {_tok('generic-5', 32)}，记住", "generic app secret zh", G + "generic.go"),
    # --- more of the same sources, phrased in Chinese --------------------------------------
    (f"阿里云的 AccessKey ID 是 LTAI{_tok('ali-zh', 20)}", "alibaba access key zh", G + "alibaba.go"),
    (f"Slack 机器人令牌 xoxb-{_tok('sl-zh-1', 12, string.digits)}-{_tok('sl-zh-2', 13, string.digits)}-{_tok('sl-zh-3', 24)}", "slack bot token zh", G + "slack.go"),
    (f"Stripe 正式环境密钥 sk_live_{_tok('stripe-zh', 24)} 只在服务器上用", "stripe live key zh", G + "stripe.go"),
    (f"HuggingFace 令牌 hf_{_tok('hf-zh', 34, string.ascii_letters)} 用来下模型", "huggingface token zh", G + "huggingface.go"),
    (f"把 SENTRY_DSN=https://{_tok('sentry-zh', 32, _HEX)}@o1.ingest.sentry.io/2 加到配置里", "sentry dsn env zh", T + "sentrytoken/v2/sentrytoken_test.go"),
    ("美国同事的社会安全号码是 219-09-9999，帮他填报税表", "us ssn colleague zh", P + "test_us_ssn_recognizer.py"),
    (f"我的运通卡号 {_AMEX}，背面 CID 是 1234", "amex cid zh", P + "test_credit_card_recognizer.py"),
    ("测试库的数据库密码改成了 Pg#2026winter", "db password changed zh", "issue 17 (the adversarial pass)"),
    (f"Mailgun 的 key：key-{_tok('mg-zh', 32, _HEX)}", "mailgun key colon zh", G + "mailgun.go"),
    (f"npm 发布令牌 npm_{_tok('npm-zh', 36)}", "npm token zh", G + "npm.go"),
]

HARMLESS: list[tuple[str, str, str]] = [
    # --- gitleaks / detect-secrets false-positive fixtures --------------------------------
    ("client_vpn_endpoint_id = aws_ec2_client_vpn_endpoint.client-vpn-endpoint.id", "gitleaks generic fp vpn endpoint", G + "generic.go"),
    ("password combination. R5: Regulatory--21", "gitleaks generic fp password combination", G + "generic.go"),
    ("curl -i -u 'test:test'", "gitleaks curl fp test:test", G + "curl.go"),
    ('curl -sL --user "$1:$2" "$3" > "$4"', "gitleaks curl fp positional vars", G + "curl.go"),
    ("curl -u <user:password> https://test.com/endpoint", "gitleaks curl fp angle placeholder", G + "curl.go"),
    ("curl --user neo4j:[PASSWORD] http://[IP]:7474/db/data/", "gitleaks curl fp bracket placeholder", G + "curl.go"),
    ('curl -u "myusername" http://localhost:15130/api/check_user/', "gitleaks curl fp no password", G + "curl.go"),
    ("curl -u username:token", "gitleaks curl fp username:token", G + "curl.go"),
    ('curl -u "${_username}:${_password}"', "gitleaks curl fp shell vars", G + "curl.go"),
    ('curl --user "xxx:yyy"', "gitleaks curl fp xxx yyy", G + "curl.go"),
    ('curl -X POST --user "$(cat ./login.txt):$(cat ./password.txt)"', "gitleaks curl fp command substitution", G + "curl.go"),
    ("curl http://127.0.0.1:5000/file --user user:pass --digest        # digest auth", "gitleaks curl fp user:pass", G + "curl.go"),
    ('curl -XGET -i -u "${{ env.ELK_ID }}:${{ build.env.ELK_PASS }}"', "gitleaks curl fp actions expressions", G + "curl.go"),
    ('curl https://example.com/micropub -d h=entry -d "content=Hello World" -H "Authorization: Bearer XXXXXXXXXXXX"', "gitleaks curl fp bearer xxx", G + "curl.go"),
    ('curl -H "Authorization: Bearer <Openverse API token>" "https://api.openverse.org/v1/audio/?q=test"', "gitleaks curl fp bearer placeholder", G + "curl.go"),
    ('curl -X POST -H "Authorization: Bearer $API_KEY" http://localhost:8000/v1/chat/completions', "gitleaks curl fp bearer env", G + "curl.go"),
    ('curl -H "Authorization: Bearer $(gcloud auth print-access-token)" https://workflowexecutions.googleapis.com/v1/projects', "gitleaks curl fp bearer command", G + "curl.go"),
    ('curl -v -X POST https://domain/api/v1/authentication/sso/login-url/ -H "Authorization: Token **********"', "gitleaks curl fp token stars", G + "curl.go"),
    ("ntn_12345678901", "gitleaks notion fp short", G + "notion.go"),
    ("ntn_12345678901abc", "gitleaks notion fp digits abc", G + "notion.go"),
    ('apiKey: "AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"', "gitleaks gcp fp low entropy", G + "gcp.go"),
    ('theapikey := ""', "detect-secrets fp empty quotes", DS + "keyword_test.py"),
    ('theapikey := "somefakekey"', "detect-secrets fp fake key", DS + "keyword_test.py"),
    ("password: ${link}", "detect-secrets fp template", DS + "keyword_test.py"),
    ('my_password = ""', "detect-secrets fp empty password", DS + "keyword_test.py"),
    ("my_password = foo(hey)you", "detect-secrets fp call", DS + "keyword_test.py"),
    ("my_password = request.json_body['hey']", "detect-secrets fp subscript", DS + "keyword_test.py"),
    ("my_password = True", "detect-secrets fp true", DS + "keyword_test.py"),
    ("login(username=username, password=password)", "detect-secrets fp kwargs", DS + "keyword_test.py"),
    ("apiKey: this.apiKey,", "detect-secrets fp js this.apiKey", DS + "keyword_test.py"),
    ("$password = $input;", "detect-secrets fp php var", DS + "keyword_test.py"),
    (f"sntryu_{_tok('sentry-bad', 31, _HEX)}g{_tok('sentry-bad2', 32, _HEX)}", "trufflehog sentry invalid pattern", T + "sentrytoken/v2/sentrytoken_test.go"),
    # --- public material that looks like secrets ------------------------------------------
    (f"mapboxgl.accessToken = 'pk.eyJ1Ijoi{_tok('mapbox-pk', 60, _URLSAFE)}.{_tok('mapbox-pk2', 22, _URLSAFE)}'", "mapbox public token", G + "mapbox.go"),
    ("Mapbox 的 public token 以 pk. 开头，可以放在前端；以 sk. 开头的才要保密", "mapbox token talk zh", G + "mapbox.go"),
    ("the FCM device token looks like fB95hP9NZJ8:APA91b... and changes when the app is reinstalled", "fcm device token talk", "SonarSource secrets rule S6710 (legacy FCM keys)"),
    ("Firebase 的服务器密钥以 AAAA 开头，旧版接口明年下线", "firebase key talk zh", "SonarSource secrets rule S6710 (legacy FCM keys)"),
    ("Sentry DSN 在 Project Settings > Client Keys 里，格式是 https://<key>@o0.ingest.sentry.io/<project>", "sentry dsn placeholder zh", T + "sentrytoken/v2/sentrytoken_test.go"),
    ("docker login -u deploybot --password-stdin < token.txt", "docker login password-stdin", T + "dockerhub/v2/dockerhub_test.go"),
    ("run docker login -u $DOCKER_USER -p $DOCKER_PASS in CI", "docker login env vars", T + "dockerhub/v2/dockerhub_test.go"),
    ("docker login 报错 unauthorized: incorrect username or password", "docker login error zh", T + "dockerhub/v2/dockerhub_test.go"),
    ("GitHub tokens start with ghp_, gho_, ghu_, ghs_ or ghr_ followed by 36 characters", "github token format talk", GH),
    ("GitHub 的细粒度令牌以 github_pat_ 开头", "github token format talk zh", GH),
    ("Google OAuth access tokens start with ya29. and expire after an hour", "ya29 prefix talk", T + "googleoauth2/googleoauth2_test.go"),
    ("Mailgun keys look like key- followed by 32 hex digits", "mailgun format talk", G + "mailgun.go"),
    ("Notion 的 token 以 secret_ 或 ntn_ 开头", "notion format talk zh", G + "notion.go"),
    ("set AZURE_OPENAI_KEY in your environment, never in the code", "azure openai env talk", T + "azure_openai/azure_openai_test.go"),
    ("AZURE_OPENAI_ENDPOINT=https://bcdemo-openai.openai.azure.com/", "azure openai endpoint", T + "azure_openai/azure_openai_test.go"),
    ("export OPENAI_API_VERSION=2023-07-15-preview", "openai api version env", T + "azure_openai/azure_openai_test.go"),
    ("export OPENAI_API_TYPE=AZURE", "openai api type env", T + "azure_openai/azure_openai_test.go"),
    ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _tok("pub-ed", 43, _B64) + " me@laptop", "ssh public key", DS + "private_key_test.py"),
    # --- cards, IDs, SSNs: look-alikes (presidio's invalid numbers and other digits) ------
    ("my credit card number is 4012-8888-8888-1882", "presidio invalid card with context", P + "test_credit_card_recognizer.py"),
    ("36168002586008 is the diners number that fails the check", "presidio invalid diners", P + "test_credit_card_recognizer.py"),
    ("my card ending in 1881 was declined at the pharmacy", "card last four en", P + "test_credit_card_recognizer.py"),
    ("尾号 4444 的信用卡这个月账单 3,280 元", "card last four zh", P + "test_credit_card_recognizer.py"),
    ("The CVV is the three-digit code on the back of the card", "cvv talk en", P + "test_credit_card_recognizer.py"),
    ("安全码是卡背面的三位数字，千万别告诉客服", "cvv talk zh", P + "test_credit_card_recognizer.py"),
    ("Order #4012888888881882 shipped yesterday", "order number 16 digits", P + "test_credit_card_recognizer.py"),
    ("订单号 202406011234567890，明天到货", "order number 18 digits zh", "GB 11643-1999"),
    (f"订单号 {_cn_id_bad('110105', '19880317', '123')} 退款中", "id-shaped order with bad check digit zh", "GB 11643-1999"),
    ("身份证号要填 18 位，最后一位可能是 X", "id talk zh", "GB 11643-1999"),
    ("快递单号 SF1234567890123，顺丰", "tracking number zh", "GB 11643-1999"),
    ("The SSN field takes the format XXX-XX-XXXX", "ssn format placeholder", P + "test_us_ssn_recognizer.py"),
    ("Don't put your SSN in the ticket; the last four (7890) are enough", "ssn last four", P + "test_us_ssn_recognizer.py"),
    ("call me at 415-555-0132 after six", "us phone number", P + "test_us_ssn_recognizer.py"),
    ("我的手机号 138 0013 8000，晚上打", "cn phone number zh", P + "test_us_ssn_recognizer.py"),
    ("the meeting moved to 2026-06-20 14:30", "date and time en", P + "test_date_recognizer.py"),
    ("会议改到 2026年6月20日 下午两点半", "date zh", P + "test_date_recognizer.py"),
    ("my flight confirmation is QX7T2P and the seat is 14C", "flight confirmation code", P + "test_date_recognizer.py"),
    ("invoice INV-2026-000871 for 1,250.00 EUR", "invoice number", P + "test_date_recognizer.py"),
    ("the routing number on the form was 011000015", "routing number on form", P + "test_aba_routing_recognizer.py"),
    ("ZIP code 94107, apartment 5B", "zip code", P + "test_date_recognizer.py"),
    # --- passwords talked about, not given --------------------------------------------------
    ("Chrome said my password was found in a data breach", "chrome breach warning", "issue 17 (the adversarial pass)"),
    ("Chrome 提示我的密码出现在数据泄露中", "chrome breach warning zh", "issue 17 (the adversarial pass)"),
    ("I reset the root password on the staging box, it's in 1Password now", "password reset in manager", "issue 17 (the adversarial pass)"),
    ("staging 的 root 密码已经改了，放在 1Password 里", "password moved to manager zh", "issue 17 (the adversarial pass)"),
    ("the password policy now requires 12 characters and a symbol", "password policy", G + "generic.go"),
    ("密码至少 12 位，要有大小写和符号", "password policy zh", G + "generic.go"),
    ("remind me to rotate the API keys every 90 days", "rotate keys reminder", T + "dockerhub/v2/dockerhub_test.go"),
    ("提醒我每 90 天轮换一次密钥", "rotate keys reminder zh", T + "dockerhub/v2/dockerhub_test.go"),
    ("the token expired again, I need to log in to the portal", "token expired", G + "generic.go"),
    ("令牌又过期了，得重新登录一下", "token expired zh", G + "generic.go"),
    ("IMPORTANT: Do not share this password publicly", "do not share password", T + "dockerhub/v2/dockerhub_test.go"),
    ("password: $DB_PASS  # from the vault", "password env var", T + "dockerhub/v2/dockerhub_test.go"),
    ("username: $DB_USERNAME", "username env var", T + "dockerhub/v2/dockerhub_test.go"),
    ("forgot my Netflix password again, used the reset link", "forgot password", "issue 17 (the adversarial pass)"),
    ("忘记了邮箱密码，用手机验证码找回了", "forgot password zh", "issue 17 (the adversarial pass)"),
    ("my bank sent a one-time code 482913 to confirm the transfer", "one-time code en", "issue 17 (the adversarial pass)"),
    ("验证码 482913，五分钟内有效", "one-time code zh", "issue 17 (the adversarial pass)"),
    ("the password manager is Bitwarden, the vault is shared with Anna", "password manager named", "issue 17 (the adversarial pass)"),
    # --- hashes, ids and versions in engineering talk ---------------------------------------
    (f"fixed in commit {_tok('sha-1', 40, _HEX)}, see the PR", "git commit sha en", G + "generic.go"),
    (f"这个 bug 在 {_tok('sha-2', 12, _HEX)} 里修了，revert 掉 {_tok('sha-3', 7, _HEX)} 就好", "git short shas zh", G + "generic.go"),
    (f"git cherry-pick {_tok('sha-4', 40, _HEX)}", "git cherry-pick", G + "generic.go"),
    (f"sha256: {_tok('sha-5', 64, _HEX)}  memdream-0.4.tar.gz", "sha256 checksum", G + "generic.go"),
    (f"the file's md5 is {_tok('md5-1', 32, _HEX)}", "md5 checksum", G + "generic.go"),
    (f"bug report: request {_tok('uuid-1', 8, _HEX)}-{_tok('uuid-2', 4, _HEX)}-4{_tok('uuid-3', 3, _HEX)}-a{_tok('uuid-4', 3, _HEX)}-{_tok('uuid-5', 12, _HEX)} failed with 502", "uuid in bug report", G + "heroku.go"),
    (f"工单里的 trace id 是 {_tok('uuid-6', 8, _HEX)}-{_tok('uuid-7', 4, _HEX)}-4{_tok('uuid-8', 3, _HEX)}-b{_tok('uuid-9', 3, _HEX)}-{_tok('uuid-10', 12, _HEX)}", "uuid trace id zh", G + "heroku.go"),
    ("golang.org/x/oauth2 v0.15.0 is the version we pin", "go module version", G + "generic.go"),
    ("upgrade detect-secrets to 1.5.0 and gitleaks to v8.18.4", "tool versions", G + "generic.go"),
    ("docker pull ghcr.io/acme/app@sha256:" + _tok("digest-1", 64, _HEX), "image digest", G + "generic.go"),
    (f"the S3 object key is uploads/2026/06/{_tok('s3key', 20, _LOWER_ALNUM)}.png", "s3 object key path", G + "aws.go"),
    ("the AWS account id is 123456789012 and the region us-east-1", "aws account id", G + "aws.go"),
    ("arn:aws:iam::123456789012:role/deploy-role", "aws arn", G + "aws.go"),
    ("use the GitHub Actions secret ${{ secrets.NPM_TOKEN }} in the publish step", "actions secret reference", G + "github.go"),
    ("token = os.environ[\"HF_TOKEN\"]", "env lookup token", G + "huggingface.go"),
    ("api_key = get_secret(\"stripe\")", "indirect secret lookup", DS + "keyword_test.py"),
    ("the Stripe publishable key pk_live_ goes in the frontend", "stripe publishable talk", G + "stripe.go"),
    ("Redis is at redis://10.0.0.8:6379/0 without auth on the private network", "redis url without password", G + "database.go"),
    ("postgres://user:password@localhost/db is the example in the README", "db url placeholder", G + "database.go"),
    ("数据库连接串格式是 mysql://用户名:密码@主机:端口/库名", "db url format zh", G + "database.go"),
    ("the JWT header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 just says HS256", "jwt header only", DS + "jwt_test.py"),
    ("-----BEGIN OPENSSH PRIVATE KEY----- is how my key file starts, is that the right format?", "private key header only", DS + "private_key_test.py"),
    ("我的私钥文件放在 ~/.ssh/id_ed25519，权限 600", "private key path zh", DS + "private_key_test.py"),
    ("the secret santa budget is 30 euros this year", "secret santa", G + "generic.go"),
    ("token count for this prompt: 1532", "token count", G + "generic.go"),
    ("我的 API key 放在环境变量 OPENAI_API_KEY 里", "api key in env talk zh", G + "openai.go"),
    ("the Notion page id is 1f2e3d4c5b6a79880716253443526170 in the URL", "notion page id", G + "notion.go"),
    ("Sentry issue PROJ-3F2 has 1,204 events since Monday", "sentry issue id", G + "sentry.go"),
    ("Mailgun says the domain mg.example.com is verified", "mailgun domain verified", G + "mailgun.go"),
    ("our Mapbox style is mapbox://styles/acme/clx1y2z3a000001", "mapbox style url", G + "mapbox.go"),
    ("the Firebase project id is shop-app-7d3e2 and the sender id 155244735852", "firebase project and sender id", "SonarSource secrets rule S6710 (legacy FCM keys)"),
    ("WiFi 名字是 Office-5G，密码贴在前台", "wifi password location zh", "issue 17 (the adversarial pass)"),
    ("the gate code changes every month, ask the landlord", "gate code talk", "issue 17 (the adversarial pass)"),
    ("version 2.14.3-rc1 fixed the login loop", "version number", G + "generic.go"),
    ("PR #4821 adds rate limiting to the token endpoint", "pr number", G + "generic.go"),
    ("纪念日是 0520，别忘了订餐厅", "anniversary date zh", "issue 17 (the adversarial pass)"),
    ("我的工号是 A10234，入职三年了", "employee number zh", "issue 17 (the adversarial pass)"),
    ("the train ticket number is E12345678, seat 06A", "ticket number", "issue 17 (the adversarial pass)"),
    ("车牌号 浙A·12345", "license plate zh", "issue 17 (the adversarial pass)"),
    ("building access is by badge, the badge id is 00417", "badge id", "issue 17 (the adversarial pass)"),
    ("My passport expires in March 2027, renew it in January", "passport expiry", "issue 17 (the adversarial pass)"),
    ("护照明年三月到期，记得一月去续", "passport expiry zh", "issue 17 (the adversarial pass)"),
    ("这张卡的卡号是 16 位，背面有三位安全码", "card format talk zh", P + "test_credit_card_recognizer.py"),
    ("身份证号码后四位是 002X", "id last four zh", "GB 11643-1999"),
    ("社保号印在工资条上，不用记", "social insurance talk zh", P + "test_us_ssn_recognizer.py"),
    ("我把 key- 开头的那串 Mailgun 密钥删了", "mailgun key deleted zh", G + "mailgun.go"),
    ("订单号 6222021234567890123 已发货", "order number 19 digits zh", P + "test_credit_card_recognizer.py"),
    ("银行卡尾号 8888 的账户收到 2,000 元", "card tail zh", P + "test_credit_card_recognizer.py"),
    ("docker login 之后记得 docker logout", "docker logout zh", T + "dockerhub/v2/dockerhub_test.go"),
    ("我的 QQ 号是 123456789", "qq number zh", P + "test_us_ssn_recognizer.py"),
    ("请在表单里填写 SSN（如果没有就留空）", "ssn form talk zh", P + "test_us_ssn_recognizer.py"),
    ("信用卡账单日是每月 5 号，还款日 23 号", "card billing day zh", P + "test_credit_card_recognizer.py"),
]
