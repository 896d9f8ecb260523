"""The detect-secrets side of the credential detector: which of its plugins are used, the
extra test a plugin's match must pass, and the lazy import (see model/secrets.py for why
only the plugins' pure methods are called).
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Callable

# (module in detect_secrets.plugins, class, description, extra acceptance test)
VENDOR_PLUGINS: tuple[tuple[str, str, str, str], ...] = (
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


def _whole_token(match: str, text: str) -> bool:
    """The match is not part of a longer word: "ASIAPACIFIC2026SUMMITX" is no AWS key."""
    return bool(re.search(r"(?<![A-Za-z0-9])" + re.escape(match) + r"(?![A-Za-z0-9])", text))


def _accept_aws(match: str, text: str) -> bool:
    if len(match) == 40:  # the plugin's quoted secret-access-key form
        return True
    return _whole_token(match, text) and any(c.isdigit() for c in match)


def _accept_long_random(min_len: int) -> Callable[[str, str], bool]:
    def accept(match: str, text: str) -> bool:
        token = match.strip(" \t\"=:")
        return len(token) >= min_len and any(c.isdigit() for c in token) and any(c.isalpha() for c in token)

    return accept


_ACCEPT: dict[str, Callable[[str, str], bool]] = {
    "": lambda match, text: True,
    "aws": _accept_aws,
    "whole": _whole_token,
    "long30": _accept_long_random(30),
    "long32": _accept_long_random(32),
}


def import_detect_secrets() -> dict[str, Any]:
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
            for module, cls, description, accept in VENDOR_PLUGINS
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
