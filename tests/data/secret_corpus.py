"""A labelled corpus for ``memdream.model.secrets.find_secret``.

``SECRETS`` are sentences a user might say to a chat agent that hand over a credential;
``HARMLESS`` are hard look-alikes that must not be refused.  Each item is
``(text, note)``; notes are unique and used as pytest ids.

Every credential value here is fake.  The well-formed ones are generated at import time
from fixed seeds (``_tok``) rather than written out, so the values are deterministic and
have the right length and alphabet, yet this file never holds a literal token that a
secret scanner (or a push-protection hook) would trip over.
"""

from __future__ import annotations

import base64
import json
import random
import string

_ALNUM = string.ascii_letters + string.digits
_URLSAFE = _ALNUM + "-_"
_B64 = _ALNUM + "+/"
_HEX = "0123456789abcdef"
_UPPER = string.ascii_uppercase + string.digits
_BASE32 = string.ascii_uppercase + "234567"
_LETTERS = string.ascii_letters


def _tok(seed: str, n: int, alphabet: str = _ALNUM) -> str:
    """A deterministic random string that uses every character class of ``alphabet``.

    Redrawn (with a bumped seed) until it contains a digit / upper / lower letter whenever
    the alphabet has them, so a short draw never comes out all-letters by chance.
    """
    classes = [c for c in (string.digits, string.ascii_uppercase, string.ascii_lowercase) if set(c) & set(alphabet)]
    attempt = 0
    while True:
        rng = random.Random(f"{seed}/{attempt}")
        out = "".join(rng.choice(alphabet) for _ in range(n))
        if all(set(out) & set(c) for c in classes) or n < 8:
            return out
        attempt += 1


def _b64_bytes(seed: str, nbytes: int) -> str:
    rng = random.Random(seed)
    return base64.b64encode(bytes(rng.randrange(256) for _ in range(nbytes))).decode()


def _b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def _jwt(seed: str, sub: str) -> str:
    header = _b64url({"alg": "HS256", "typ": "JWT"})
    payload = _b64url({"sub": sub, "name": "Test User", "iat": 1767225600})
    return f"{header}.{payload}.{_tok(seed, 43, _URLSAFE)}"


def _pem(seed: str, label: str, lines: int = 3, prefix: str = "") -> str:
    body = (prefix + _b64_bytes(seed, 48 * lines))[: 64 * lines]
    chunks = " ".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {label}----- {chunks} -----END {label}-----"


def _uuid(seed: str) -> str:
    h = _tok(seed, 32, _HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# Values used more than once.
_AWS_ID = "AKIA" + _tok("aws-id", 16, _UPPER)
_AWS_SECRET = _tok("aws-secret", 40, _B64)
_JWT = _jwt("jwt-1", "user-1024")

SECRETS: list[tuple[str, str]] = [
    # --- OpenAI -------------------------------------------------------------------------
    (f"Here's my OpenAI key, keep it handy: sk-proj-{_tok('oai-proj', 156, _URLSAFE)}", "openai sk-proj key"),
    (f"old key still works: sk-{_tok('oai-legacy-a', 20)}T3BlbkFJ{_tok('oai-legacy-b', 20)}", "openai legacy key with marker"),
    (f"我的 OpenAI API key 是 sk-{_tok('oai-48', 48)}，帮我记一下", "openai legacy 48 zh"),
    (f"OPENAI_API_KEY=sk-svcacct-{_tok('oai-svc', 120, _URLSAFE)}", "openai service account env"),
    (f"把这个 key 配到服务器上：sk-proj-{_tok('oai-proj-zh', 120, _URLSAFE)}", "openai sk-proj zh"),
    # --- Anthropic ----------------------------------------------------------------------
    (f"Use my Claude key sk-ant-api03-{_tok('ant-1', 93, _URLSAFE)}AA for the eval run", "anthropic api03 key"),
    (f"Anthropic 的密钥：sk-ant-api03-{_tok('ant-2', 93, _URLSAFE)}AA", "anthropic key zh"),
    (f"ANTHROPIC_ADMIN_KEY=sk-ant-admin01-{_tok('ant-3', 93, _URLSAFE)}AA", "anthropic admin key env"),
    # --- AWS ----------------------------------------------------------------------------
    (f"AWS access key {_AWS_ID} with secret {_AWS_SECRET}", "aws key id and secret"),
    (f"aws_secret_access_key = {_tok('aws-secret-2', 40, _B64)}", "aws secret access key assignment"),
    (f"公司的 AWS 密钥 ID 是 {'AKIA' + _tok('aws-id-zh', 16, _UPPER)}，别外传", "aws key id zh"),
    (f"My AWS secret key is {_tok('aws-secret-3', 40, _B64)} for the prod account", "aws secret key unquoted"),
    (f"temporary creds: ASIA{_tok('aws-sts', 16, _UPPER)}", "aws sts key id"),
    # --- GitHub -------------------------------------------------------------------------
    (f"my GitHub token is ghp_{_tok('gh-1', 36)}", "github ghp token"),
    (f"fine-grained PAT: github_pat_{_tok('gh-2a', 22)}_{_tok('gh-2b', 59)}", "github fine-grained pat"),
    (f"the OAuth app gave me gho_{_tok('gh-3', 36)}", "github oauth token"),
    (f"GitHub 的个人令牌 ghp_{_tok('gh-4', 36)} 先存一下", "github token zh"),
    (f"git remote set-url origin https://x-access-token:ghs_{_tok('gh-5', 36)}@github.com/acme/app.git", "github app token in remote url"),
    # --- GitLab -------------------------------------------------------------------------
    (f"GitLab token: glpat-{_tok('gl-1', 20, _URLSAFE)}", "gitlab pat"),
    (f"公司 GitLab 的访问令牌是 glpat-{_tok('gl-2', 20, _URLSAFE)}", "gitlab pat zh"),
    # --- Slack --------------------------------------------------------------------------
    (f"Slack bot token xoxb-{_tok('sl-1', 11, string.digits)}-{_tok('sl-2', 13, string.digits)}-{_tok('sl-3', 24)}", "slack bot token"),
    (f"post alerts to https://hooks.slack.com/services/T{_tok('sl-4', 8, _UPPER)}/B{_tok('sl-5', 10, _UPPER)}/{_tok('sl-6', 24)}", "slack webhook"),
    (f"我的 Slack 用户令牌 xoxp-{_tok('sl-7', 11, string.digits)}-{_tok('sl-8', 12, string.digits)}-{_tok('sl-9', 13, string.digits)}-{_tok('sl-10', 32, _HEX)}", "slack user token zh"),
    # --- Stripe -------------------------------------------------------------------------
    (f"Stripe live secret: sk_live_{_tok('st-1', 99)}", "stripe live secret key"),
    (f"Stripe 受限密钥 rk_live_{_tok('st-2', 99)} 只给报表用", "stripe restricted key zh"),
    (f"the Stripe webhook signing secret is whsec_{_tok('st-3', 32)}", "stripe webhook secret"),
    (f"for local testing use sk_test_{_tok('st-4', 99)}", "stripe test secret key"),
    # --- Google -------------------------------------------------------------------------
    (f"Maps key AIza{_tok('gg-1', 35, _URLSAFE)} is for the store locator", "google api key"),
    (f"谷歌翻译的 key：AIza{_tok('gg-2', 35, _URLSAFE)}", "google api key zh"),
    (f"OAuth client secret GOCSPX-{_tok('gg-3', 28, _URLSAFE)}", "google oauth client secret"),
    # --- Azure --------------------------------------------------------------------------
    (
        "connection string: DefaultEndpointsProtocol=https;AccountName=acmeprod;"
        f"AccountKey={_b64_bytes('az-1', 64)};EndpointSuffix=core.windows.net",
        "azure storage connection string",
    ),
    (f"Azure 存储账户的 AccountKey={_b64_bytes('az-2', 64)} 记得轮换", "azure storage key zh"),
    (
        "Service Bus: Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={_b64_bytes('az-3', 32)}",
        "azure service bus key",
    ),
    # --- Twilio -------------------------------------------------------------------------
    (f"Twilio API key SK{_tok('tw-1', 32, _HEX)} secret {_tok('tw-2', 32)}", "twilio api key sid"),
    (f"Twilio 的 Account SID AC{_tok('tw-3', 32, _HEX)}，Auth Token 是 {_tok('tw-4', 32, _HEX)}", "twilio sid and auth token zh"),
    # --- SendGrid -----------------------------------------------------------------------
    (f"SendGrid key SG.{_tok('sg-1', 22, _URLSAFE)}.{_tok('sg-2', 43, _URLSAFE)}", "sendgrid key"),
    (f"发邮件用这个 SendGrid 密钥 SG.{_tok('sg-3', 22, _URLSAFE)}.{_tok('sg-4', 43, _URLSAFE)}", "sendgrid key zh"),
    # --- Hugging Face -------------------------------------------------------------------
    (f"HF token for gated models: hf_{_tok('hf-1', 34, _LETTERS)}", "hugging face token"),
    (f"下载 Llama 用的 Hugging Face token 是 hf_{_tok('hf-2', 34, _LETTERS)}", "hugging face token zh"),
    # --- Telegram / Discord -------------------------------------------------------------
    (f"my Telegram bot token is 7{_tok('tg-1', 9, string.digits)}:AA{_tok('tg-2', 33, _URLSAFE)}", "telegram bot token"),
    (f"电报机器人的 token：6{_tok('tg-3', 9, string.digits)}:AA{_tok('tg-4', 33, _URLSAFE)}", "telegram bot token zh"),
    (f"Discord bot token M{_tok('dc-1', 23, _URLSAFE)}.{_tok('dc-2', 6, _URLSAFE)}.{_tok('dc-3', 27, _URLSAFE)}", "discord bot token"),
    (f"send release notes to https://discord.com/api/webhooks/1{_tok('dc-4', 18, string.digits)}/{_tok('dc-5', 68, _URLSAFE)}", "discord webhook url"),
    # --- npm / PyPI ---------------------------------------------------------------------
    (f"npm publish token npm_{_tok('npm-1', 36)}", "npm token"),
    (f"add //registry.npmjs.org/:_authToken=npm_{_tok('npm-2', 36)} to .npmrc", "npmrc auth token"),
    (f"PyPI upload token pypi-AgEIcHlwaS5vcmc{_tok('pypi-1', 80, _URLSAFE)}", "pypi token"),
    (f"发布到 PyPI 用 pypi-AgEIcHlwaS5vcmc{_tok('pypi-2', 80, _URLSAFE)}", "pypi token zh"),
    # --- JWT / bearer / basic -----------------------------------------------------------
    (f"session JWT: {_JWT}", "jwt"),
    (f"这是登录后拿到的 token：{_jwt('jwt-2', 'u-88')}", "jwt zh"),
    (f"Authorization: Bearer {_tok('bearer-1', 40, _URLSAFE)}", "bearer header"),
    (f"请求头里加 Authorization: Bearer {_tok('bearer-2', 48)}", "bearer header zh"),
    (f"call it with Authorization: Basic {base64.b64encode(b'deploy:Depl0y!2026').decode()}", "http basic header"),
    # --- PEM private keys ---------------------------------------------------------------
    (f"here's the deploy key {_pem('pem-rsa', 'RSA PRIVATE KEY', prefix='MIIEowIBAAKCAQEA')}", "rsa private key inline"),
    (f"EC key for signing: {_pem('pem-ec', 'EC PRIVATE KEY', 2, prefix='MHcCAQEEI')}", "ec private key inline"),
    (f"my id_ed25519 is {_pem('pem-ssh', 'OPENSSH PRIVATE KEY', prefix='b3BlbnNzaC1rZXktdjEAAAAA')}", "openssh private key inline"),
    (f"我的服务器私钥：{_pem('pem-pk8', 'PRIVATE KEY', prefix='MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')}", "pkcs8 private key zh"),
    (f"PGP: -----BEGIN PGP PRIVATE KEY BLOCK----- lQOYBF{_b64_bytes('pgp', 90)} -----END PGP PRIVATE KEY BLOCK-----", "pgp private key block"),
    # --- URLs with credentials ----------------------------------------------------------
    ("the app connects with postgres://app:S3cr3tPa55@db.internal:5432/prod", "postgres url"),
    ("local shop db is mysql://root:Root!2024@127.0.0.1:3306/shop", "mysql url with bang in password"),
    ("Atlas: mongodb+srv://admin:Mongo%40Pass99@cluster0.ab1cd.mongodb.net/test", "mongodb srv url"),
    ("cache is redis://:r3d1sP4ss@cache.internal:6379/0", "redis url empty user"),
    ("数据库连接串是 postgresql://report:Rpt_2026pw@10.0.3.7:5432/bi", "postgres url zh"),
    ("Redis 地址 redis://default:Xy7!qLm2@redis.example.cn:6379", "redis url zh"),
    ("RabbitMQ at amqp://guest:Rabb1tMQ!@mq.internal:5672/", "amqp url"),
    ("the intranet wiki is https://alice:Wonderland42@intranet.example.com/", "https basic auth url"),
    ("backups go to ftp://backup:ftpPass2024@files.example.com/nightly", "ftp url"),
    ("JDBC: jdbc:mysql://db:3306/app?user=root&password=Jdbc#Pass1", "jdbc password param"),
    (f"钉钉机器人 https://oapi.dingtalk.com/robot/send?access_token={_tok('dd-1', 64, _HEX)}", "dingtalk webhook token zh"),
    (f"飞书群机器人 webhook：https://open.feishu.cn/open-apis/bot/v2/hook/{_uuid('fs-1')}", "feishu webhook zh"),
    (f"企业微信机器人地址 https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={_uuid('wx-1')}", "wecom webhook zh"),
    # --- passwords, English -------------------------------------------------------------
    ("my password is hunter2", "en my password is hunter2"),
    ("The wifi password: sunflower-42", "en wifi password colon"),
    ("pwd=Summer2024!", "en pwd assignment"),
    ("login with admin / P@ssw0rd!", "en login with user slash password"),
    ("My Gmail password is Gm@il-Pass-7731, don't forget it", "en gmail password"),
    ("I changed my password to Sunflower#88 yesterday", "en changed password to"),
    ("The password for the office wifi is CoffeeBean2024", "en password for qualifier"),
    ("username: jdoe, password: correcthorsebatterystaple", "en username password colon alpha"),
    ("Remember that my laptop password is 'blue elephant 42'", "en quoted passphrase"),
    ("My password is sunshine.", "en alpha-only password at sentence end"),
    ("ssh into the box as root, password is toor1234", "en root password"),
    ("put DB_PASSWORD=changeme123 in the .env file", "en env password"),
    ("The router admin password is admin@123", "en router password"),
    ("passphrase for my key: purple-monkey-dishwasher-91", "en passphrase"),
    ("curl -u admin:Adm1nS3cret! https://api.example.com/v1/users", "en curl user password"),
    ("connect with mysql -u root -pR00tPassw0rd shop", "en mysql -p password"),
    ("Netflix login: me@example.com / Netfl1x!Pass", "en email slash password"),
    ("wifi password Sunny2024! (the 5G one)", "en password without connector"),
    ("the vpn pw is Vpn-2026-Corp", "en pw abbreviation"),
    ('set "password": "Tr1cky#Value" in config.json', "en json password"),
    # --- PINs and codes -----------------------------------------------------------------
    ("My debit card PIN is 4821", "en debit card pin"),
    ("the PIN for my SIM card: 0917", "en sim pin"),
    ("phone unlock passcode is 271828", "en passcode"),
    ("the garage door code is 5519#", "en door code"),
    # --- passwords, Chinese -------------------------------------------------------------
    ("我的密码是abc123456", "zh my password is"),
    ("银行卡密码 482913", "zh bank card password no connector"),
    ("支付宝支付密码是 135790，别告诉别人", "zh alipay payment password"),
    ("邮箱密码：Mail#2024qq", "zh email password colon"),
    ("家里 wifi 密码是 sunshine2024", "zh wifi password"),
    ("公司VPN的口令是 Vpn@Corp2025", "zh koulin vpn"),
    ("把路由器管理密码改成了 Admin!8899", "zh router password changed to"),
    ("微信支付密码 258014", "zh wechat pay password"),
    ("服务器 root 密码：Xk9#mP2$vL", "zh root password"),
    ("账号 admin 密码 Admin@2024", "zh account and password"),
    ("取款密码是 960315", "zh withdrawal password"),
    ("PIN 码是 2580", "zh pin code"),
    ("门禁密码 1379#", "zh door password"),
    ("我的QQ密码是 qq2024love", "zh qq password"),
    ("登录密码改为了 Tb_8812xyz", "zh login password changed"),
    ("iPhone 锁屏密码是 190204", "zh lock screen password"),
    ("工商银行网银登录密码：Icbc@6655", "zh online banking password"),
    ("数据库账号 root / Db#Pass2024", "zh db account slash password"),
    ("wifi：ChinaNet-8A2F 密码：88886666", "zh wifi name and password"),
    ("密码箱的密码是 0427", "zh suitcase combination"),
    ("我的 password 是 Pa55word!zh", "zh mixed english keyword"),
    ("Steam 账号密码都是 steam_2024_abc", "zh shared account password"),
    ("记一下：12306 的密码 Rail#12306x", "zh 12306 password"),
    ("爸爸的手机开机密码是 0815", "zh phone power-on password"),
    ("公司邮箱的登录密码现在是 Mail_Corp_77", "zh password with filler"),
    ("「密码」：“Qwer!2345”", "zh quoted password"),
    # --- keys and tokens next to a credential word --------------------------------------
    (f"The API key for the weather service is {_tok('kw-1', 32, _HEX)}", "en api key hex"),
    (f"x-api-key: {_tok('kw-2', 40)}", "en x-api-key header"),
    (f"高德地图的 API Key 是 {_tok('kw-3', 32, _HEX)}", "zh amap api key"),
    (f"阿里云 AccessKey ID: LTAI5t{_tok('kw-4', 18)}, AccessKey Secret: {_tok('kw-5', 30)}", "zh aliyun accesskey"),
    (f"腾讯云 SecretId AKID{_tok('kw-6', 32)} SecretKey {_tok('kw-7', 32)}", "zh tencent secretid"),
    (f"my 2FA secret is {_tok('kw-8', 32, _BASE32)}", "en totp seed"),
    (f"我的钱包私钥是 0x{_tok('kw-9', 64, _HEX)}", "zh wallet private key hex"),
    (f"client_secret: {_tok('kw-10', 40, _URLSAFE)}", "en client secret"),
    (f"微信公众号 AppSecret：{_tok('kw-11', 32, _HEX)}", "zh wechat appsecret"),
    (f"Shopify admin token shpat_{_tok('kw-12', 32, _HEX)}", "shopify admin token"),
    (f"DigitalOcean token dop_v1_{_tok('kw-13', 64, _HEX)}", "digitalocean token"),
    (f"SECRET_KEY = 'django-insecure-{_tok('kw-14', 50, _ALNUM + '!@#%^&*(-_=+)')}'", "django secret key"),
    (f"Mailchimp key {_tok('kw-15', 32, _HEX)}-us21", "mailchimp key"),
    (f"refresh token: {_tok('kw-16', 64, _URLSAFE)}", "en refresh token"),
    (f"用这个访问令牌调用接口：{_tok('kw-17', 40)}", "zh access token"),
    (f"加密用的主密钥是 {_b64_bytes('kw-18', 32)}", "zh master key base64"),
    # --- recovery material --------------------------------------------------------------
    (
        "my wallet seed phrase is: canyon velvet orbit wander humble pistol rookie sugar "
        "lecture frozen middle galaxy",
        "en seed phrase",
    ),
    ("助记词：ladder velvet mango crisp oyster ribbon tunnel absorb vivid clerk planet hazard", "zh mnemonic"),
    ("GitHub recovery codes: 8f3a1-c92d7 1b7e4-a0c9f 77d2e-5b1c0", "en recovery codes"),
    ("谷歌账号的备用码是 4829 1735 9062 5518", "zh backup codes"),
    # --- more phrasings -------------------------------------------------------------
    ("remember the wifi: network CoffeeShop, password latte2024", "en wifi network and password"),
    ("FYI the admin pw for Jenkins is j3nk1ns!Adm", "en jenkins admin pw"),
    ("can you save my Amazon password? it's Prime#Shopper9", "en password across question"),
    ("Here are the creds: user ops, pass 0ps-Team-2026", "en creds user pass"),
    ("my login for the portal: alice / Portal2026!", "en portal login pair"),
    ("Zoom passcode is 482913", "en zoom passcode"),
    ("The master password for my vault is 'purple rain falling 1999'", "en quoted master password"),
    ("The safe combination is 12-34-56", "en safe combination"),
    ("my ssh password for 10.0.0.5 is Ubuntu@2204", "en ssh password for ip"),
    ("I set the password as hunter22", "en set password as"),
    ("the password i use everywhere is dragon99", "en password relative clause"),
    ("my passcode's 8842", "en passcode contraction"),
    ("my PIN number is 5567", "en pin number"),
    ("my pin is 1234", "en lowercase pin"),
    ("my netflix pass is movienight88", "en netflix pass"),
    ("the code to the safe is 7741", "en code to the safe"),
    ("psw: qwerty2024", "en psw abbreviation"),
    ("The admin credentials are admin:Sup3rS3cret", "en credentials colon pair"),
    ("credentials are bob/B0bSecret!", "en credentials slash pair"),
    ("mot de passe: Soleil2024", "fr mot de passe"),
    (f"Save this token for later: {_tok('more-1', 40, _HEX)}", "en save this token"),
    (f"API_SECRET={_tok('more-2', 32)}", "en api secret env"),
    ("帮我存一下亚马逊密码：Prime#Shopper9", "zh amazon password"),
    ("我的网银 U 盾密码是 135799", "zh usb key password"),
    ("我的社保卡密码 202611", "zh social security card password"),
    ("公司内网账号 zhangsan 密码 Zs@123456", "zh intranet account password"),
    (f"秘钥是 {_tok('more-3', 32)}", "zh miyao"),
    ("我的支付密码设成了 147258", "zh payment password set to"),
    ("登录用 root/Passw0rd!", "zh login with pair"),
    ("信用卡密码 6 位：902134", "zh credit card password with length"),
    # Issue 17 decided that resident ID numbers (valid check digit) are refused too; this
    # line used to be a look-alike.
    ("身份证号 11010519491231002X", "zh id card"),
    ("路由器后台 192.168.1.1，密码 admin123", "zh router admin password"),
    ("微信密码是wx_123456", "zh wechat password no space"),
    ("pin码：884422", "zh lowercase pin code"),
]

HARMLESS: list[tuple[str, str]] = [
    # --- talking about passwords ---------------------------------------------------------
    ("I forgot my password again", "en forgot password"),
    ("Remind me to change my password tomorrow", "en remind change password"),
    ("My password is too weak, I need a better one", "en password too weak"),
    ("The password is incorrect, it says.", "en password incorrect"),
    ("My password expired last week.", "en password expired"),
    ("Password must be at least 12 characters long.", "en password policy"),
    ("The password is 16 characters long and uses symbols.", "en password length"),
    ("I keep my passwords in 1Password.", "en password manager 1password"),
    ("The password is stored in our team vault.", "en password stored in vault"),
    ("Don't use password123 as your password", "en password123 advice"),
    ("The most common password is still 123456", "en most common password"),
    ("In the xkcd comic the example password Tr0ub4dor&3 is hard to remember", "en xkcd example password"),
    ("Password: ********", "en masked password"),
    ("Enter your password: <password>", "en password placeholder"),
    ("the password reset link expired", "en password reset link"),
    ("What is a good password manager?", "en password manager question"),
    ("Set a passcode on your phone.", "en set passcode"),
    ("The PIN is printed on the back of the card.", "en pin location"),
    ("Pin the tweet to the top of my profile", "en pin the tweet"),
    ("The PIN pad at the store was broken", "en pin pad"),
    ("My password is the same as my work one", "en password same as"),
    ("password is required", "en password required"),
    ("If the password is wrong three times the account locks", "en password wrong three times"),
    ("the default password policy requires rotation every 90 days", "en password policy rotation"),
    ("sign in with email/password or Google", "en sign in email/password"),
    ("log in with Google / Apple", "en log in with google / apple"),
    ("The login was at 10:30:45 on 2024/03/15", "en login time and date"),
    ("Your one-time password is 482913, valid for 5 minutes", "en one-time password otp"),
    ("my verification code is 771234", "en verification code"),
    ("We hash passwords with bcrypt and a cost factor of 12", "en hash passwords"),
    ("the password field is optional for SSO users", "en password field"),
    ("She whispered the password to the guard and walked in", "en whispered password"),
    ("Use a passphrase of four random words instead", "en passphrase advice"),
    ("my password is expiring, remind me on Friday", "en password expiring"),
    # --- code without secrets ----------------------------------------------------------
    ("password_hash = bcrypt.hashpw(password, bcrypt.gensalt())", "code bcrypt hashpw"),
    ("def login(username: str, password: str) -> bool:", "code signature with password"),
    ("password = os.environ['DB_PASSWORD']", "code password from environ"),
    ("DB_PASSWORD=${DB_PASSWORD} in docker-compose", "code compose variable"),
    ("after cd, pwd = /home/alice/projects", "code pwd path"),
    ('password: "{{ vault_db_password }}"', "code ansible template"),
    ("secret = get_secret('prod/db')", "code get_secret call"),
    ("const token = await getToken();", "code getToken"),
    ('curl -H "Authorization: Bearer $TOKEN" https://api.example.com', "code curl bearer variable"),
    ("mysql -u root -p", "code mysql prompt"),
    ("if password != confirm_password: raise ValueError", "code password comparison"),
    ("api_key = os.environ['OPENAI_API_KEY']", "code api key from environ"),
    ("export OPENAI_API_KEY=$(cat ~/.config/openai)", "code export from file"),
    ("OPENAI_API_KEY=your-api-key-here", "code api key placeholder"),
    ("token = jwt.encode(payload, key, algorithm='HS256')", "code jwt encode"),
    # --- API talk ------------------------------------------------------------------------
    ("use the OpenAI API with gpt-4o", "api openai gpt-4o"),
    ("sk-learn is great for quick baselines", "api sk-learn"),
    ("Set OPENAI_API_KEY in your .env before running", "api set env var"),
    ("Authorization: Bearer <token>", "api bearer placeholder"),
    ("Bearer tokens go in the Authorization header", "api bearer tokens explained"),
    ("Basic authentication is fine for the internal tool", "api basic authentication"),
    ("The access token expires in 3600 seconds", "api token expiry"),
    ("We used 128000 tokens yesterday", "api token usage"),
    ("token limit: 4096", "api token limit"),
    ("The API key goes in the X-API-Key header", "api key header name"),
    ("Use the Google Maps API, it needs an API key", "api needs a key"),
    ("the secret to good bread is time", "en secret to bread"),
    ("GitHub's classic tokens start with ghp_ and fine-grained ones with github_pat_", "api token prefixes"),
    ("glpat- is the prefix for GitLab personal access tokens", "api gitlab prefix"),
    ("hf_hub_download fetches files from the Hub", "api hf_hub_download"),
    ("npm_config_registry points to the internal mirror", "api npm_config_registry"),
    (f"my Stripe publishable key is pk_live_{_tok('pk-1', 24)}", "api stripe publishable key"),
    ("OAuth client ID 1234567890-abc123def456.apps.googleusercontent.com", "api oauth client id"),
    ("Twilio account SID is on the console dashboard", "api twilio sid location"),
    ("the JWT header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 decodes to alg HS256", "api jwt header only"),
    ("My id_rsa file starts with -----BEGIN OPENSSH PRIVATE KEY-----, is that normal?", "api pem header only"),
    # --- public keys, hashes, IDs ------------------------------------------------------
    (f"my public key is ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_tok('ssh-pub', 43)} alice@laptop", "id ssh public key"),
    (f"public key: {_pem('pub-1', 'PUBLIC KEY', prefix='MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA')}", "id pem public key"),
    (f"the cert: {_pem('cert-1', 'CERTIFICATE', prefix='MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa')}", "id pem certificate"),
    ("git commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it", "id git commit sha"),
    ("request id 550e8400-e29b-41d4-a716-446655440000 failed", "id uuid"),
    (f"sha256: {_tok('sha-1', 64, _HEX)}", "id sha256 digest"),
    (f'<script integrity="sha384-{_b64_bytes("sri-1", 48)}" crossorigin="anonymous">', "id sri hash"),
    ("send the BTC to 1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "id bitcoin address"),
    ("pinned on IPFS as QmXoypizjW3WknFiJnKLwHCnL72vedxjQkDDP1mXWo6uco", "id ipfs cid"),
    (f"docker pull nginx@sha256:{_tok('sha-2', 64, _HEX)}", "id docker digest"),
    ("the doc is https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit", "id google docs url"),
    ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", "id youtube url"),
    ("https://example.com/search?q=password+reset", "id url with password word"),
    ("upgrade to v2.3.1-rc.2 before Friday", "id version"),
    ("AWS account 123456789012, role arn:aws:iam::123456789012:role/Admin", "id aws account and arn"),
    ("region us-east-1, bucket acme-logs-2024", "id aws region bucket"),
    ("the brand colour is #1E90FF", "id hex colour"),
    ("ping 8.8.8.8 and 203.0.113.7:8080", "id ip addresses"),
    ("ISBN 978-0-13-468599-1", "id isbn"),
    ("UPS tracking number 1Z999AA10123456784", "id ups tracking"),
    ("it costs $1,299.00 plus tax", "id price"),
    ("product code QX7K9ZP44TRBLK2M is out of stock", "id product code"),
    ("MAC address 00:1A:2B:3C:4D:5E", "id mac address"),
    ("email me at alice@example.com", "id email"),
    ("postgres://localhost/db", "id postgres url no credentials"),
    ("postgres://app@localhost:5432/app", "id postgres url user only"),
    ("postgres://user:password@localhost:5432/mydb is the example from the docs", "id postgres placeholder credentials"),
    ("postgresql://app:${DB_PASSWORD}@db:5432/app", "id postgres templated password"),
    ("mongodb://localhost:27017/test", "id mongodb local"),
    ("1Password and Bitwarden are both password managers", "id password managers"),
    # --- Chinese ------------------------------------------------------------------------
    ("我又忘记密码了", "zh forgot password"),
    ("提醒我明天改密码", "zh remind change password"),
    ("密码要至少12位", "zh password at least 12"),
    ("密码长度是 8 到 16 位，要有大小写", "zh password length range"),
    ("密码是8位数字", "zh password is 8 digits"),
    ("密码错误，请重新输入", "zh wrong password"),
    ("订单号 2026112912345678", "zh order number"),
    ("手机号 138-0013-8000", "zh phone dashed"),
    ("我的手机号是 +86 13800138000", "zh phone +86"),
    ("快递单号 SF1234567890123", "zh sf tracking"),
    ("银行卡号 6222 0212 3456 7890 123", "zh bank card number"),
    ("验证码是 482913，五分钟内有效", "zh verification code"),
    ("动态密码 482913 五分钟内有效", "zh dynamic one-time password"),
    ("复制这段淘口令 ￥Xk9dL2mP￥ 打开淘宝", "zh taobao share code"),
    ("链接: https://pan.baidu.com/s/1AbCdEfGhIjK 提取码: a1b2", "zh baidu pan extraction code"),
    ("我的快递取件码是 3-2-1108", "zh parcel pickup code"),
    ("我在学密码学，RSA 是 1977 年提出的", "zh cryptography"),
    ("买了个密码箱，放行李用", "zh suitcase"),
    ("最常见的密码是 123456", "zh most common password"),
    ("不要用 123456 这种弱密码", "zh weak password advice"),
    ("密码：******", "zh masked password"),
    ("用户名/密码登录失败", "zh login failed"),
    ("密码加密用的是 bcrypt", "zh password encryption"),
    ("数据库里的密码是 bcrypt 哈希过的", "zh passwords hashed with bcrypt"),
    ("WiFi 名称是 TP-LINK_5G_8A2F", "zh wifi ssid"),
    ("版本号 v3.2.1-beta", "zh version"),
    ("会议号 123 456 789，周五下午三点", "zh meeting id"),
    ("价格 ¥1,299.00，包邮", "zh price"),
    ("车牌号 京A·12345", "zh licence plate"),
    ("路由器 IP 是 192.168.1.1", "zh private ip"),
    ("用 OpenAI 的 API 调 gpt-4o", "zh openai api"),
    ("这个月 token 用量 128000", "zh token usage"),
    ("Token 数超限了，换个短点的 prompt", "zh token limit"),
    ("帮我把 API Key 配到环境变量里", "zh configure api key"),
    ("密钥轮换周期是 90 天", "zh key rotation"),
    ("私钥不要上传到 GitHub", "zh do not upload private key"),
    (f"公钥是 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_tok('ssh-pub-zh', 43)}", "zh ssh public key"),
    ("commit 号 9fceb02d0ae598e95dc970b74767f19372d61af8", "zh commit sha"),
    ("订单号是 E20261129123456789", "zh order number with letter"),
    ("UUID 是 550e8400-e29b-41d4-a716-446655440000", "zh uuid"),
    ("颜色用 #FF5733", "zh hex colour"),
    ("数据库地址 postgres://localhost/db", "zh postgres no credentials"),
    ("ISBN 978-7-115-42802-8", "zh isbn"),
    ("火车票 G1234 次，座位 05车12F", "zh train ticket"),
    ("密码输错三次就锁了", "zh three wrong tries"),
    ("支付密码忘了怎么办", "zh forgot payment password"),
    ("银行卡密码是六位数字", "zh bank password six digits"),
    ("密码需要包含大小写字母和数字，比如 Abc12345 这种格式", "zh password format example"),
    ("发票代码 044031900111", "zh invoice code"),
    ("学号 2021123456", "zh student id"),
    ("PIN 码要 6 位", "zh pin must be 6 digits"),
    ("验证码 771234 请勿泄露", "zh verification code do not share"),
    ("公司的 wifi 没有密码", "zh wifi has no password"),
    ("这个 sk-learn 教程不错", "zh sk-learn"),
    ("我的 GitHub 用户名是 alice-dev", "zh github username"),
    ("快递柜取件码 58213946", "zh locker pickup code"),
    ("物流单号 YT2026112912345678", "zh yto tracking"),
    ("密码学课的作业 DDL 是 2026-12-01", "zh cryptography homework"),
    ("帮我生成一个 16 位的随机密码", "zh generate random password"),
    ("我的 token 过期了，帮我重新登录", "zh token expired"),
    ("把密码改成更复杂的", "zh make password stronger"),
    ("二维码里是 https://example.cn/pay?order=2026112912345678", "zh qr url order"),
    ("运单号 JD0012345678901 到哪了", "zh jd tracking"),
    ("客服电话 400-820-8820", "zh service hotline"),
    # --- more look-alikes ------------------------------------------------------------
    ("What's the wifi password?", "en what's the wifi password"),
    ("the password is on a sticky note under the keyboard", "en password on sticky note"),
    ("my password has 3 numbers in it", "en password has numbers"),
    ("the password was changed by IT yesterday", "en password changed by it"),
    ("the passwords didn't match", "en passwords didn't match"),
    ("password123 is a terrible password", "en password123 terrible"),
    ("the pin is stuck in the cushion", "en lowercase pin object"),
    ("I use a 4-digit PIN", "en four digit pin"),
    ("My boarding pass is on my phone", "en boarding pass"),
    ("the season pass is 299 dollars", "en season pass price"),
    ("I'll pass: too tired tonight", "en pass verb"),
    ("pass the salt please", "en pass the salt"),
    ("our API key is stored in AWS Secrets Manager", "en api key stored"),
    ("The token was revoked at 2024-06-01T10:00:00Z", "en token revoked"),
    ("the secret ingredient is cinnamon", "en secret ingredient"),
    ("git push with a personal access token instead of a password", "en use a pat"),
    ("The Zoom meeting ID is 842 1234 5678 and the passcode is on the invite", "en zoom passcode on invite"),
    ("session id: 8f14e45fceea167a5a36dedd4bea2543", "en session id hex"),
    ("my wallet address 0x742d35Cc6634C0532925a3b844Bc454e4438f44e", "en wallet address"),
    ("the public key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8", "en key fingerprint"),
    ("https://user@example.com:8080/path", "en url with user only"),
    ("ssh://git@github.com/acme/app.git", "en ssh url"),
    ("key=value; path=/; HttpOnly", "en cookie attributes"),
    ("zip code 94107, area code 415", "en zip and area code"),
    ("promo code SAVE20 gives 20% off", "en promo code"),
    ("error code 0x80070005", "en error code"),
    ("Always sign commits with my GPG key 3AA5C34371567BD2", "en gpg key id"),
    ("The Docker image is ghcr.io/acme/api:1.4.2", "en docker image"),
    ("The conference code SPEAKER2026 gives free entry", "en conference code"),
    ("My frequent flyer number is MU 6402 3391 27", "en frequent flyer"),
    ("密码是多少来着？", "zh what is the password"),
    ("wifi密码是什么", "zh wifi password question"),
    ("我的密码是我女儿的生日", "zh password is a birthday hint"),
    ("PIN码错误三次会锁卡", "zh pin wrong three times"),
    ("密码在路由器背面的标签上", "zh password on router label"),
    ("腾讯会议号 842 123 456，会议密码见邀请", "zh meeting password in invite"),
    ("请输入6位数字密码", "zh enter 6 digit password"),
    ("请设置 8-20 位密码", "zh set 8-20 password"),
    ("密码不能和用户名相同", "zh password not same as username"),
    ("我把密码本放在抽屉里了", "zh password notebook"),
    ("新买的密码锁是 6 位数字的", "zh combination lock six digits"),
    ("密码：见飞书文档", "zh password see doc"),
    ("我的账号被盗了，密码已经改了", "zh account stolen password changed"),
    ("门锁是指纹加密码的", "zh fingerprint and password lock"),
    ("我用 1Password 管理密码", "zh uses 1password"),
    ("密码规则：至少 12 位，含大小写和符号", "zh password rules"),
    ("银行卡尾号 8821", "zh card last four"),
    ("微信号 alice_2026", "zh wechat id"),
    ("报销单号 BX20261129001", "zh reimbursement number"),
]
