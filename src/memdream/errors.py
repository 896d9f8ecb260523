"""Errors that carry a hint and an exit code.

Every refusal or failure the user can act on is a `MemdreamError` subclass. The CLI
prints ``message`` and ``hint`` and exits with ``exit_code``; the Python API raises.
"""

from __future__ import annotations


class MemdreamError(Exception):
    """Base class: a message, a hint that says what to do next, and an exit code."""

    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class RefusedInput(MemdreamError):
    """The input was refused (empty, too long, control characters, ...); nothing was written."""

    exit_code = 1


class SecretRefused(RefusedInput):
    """The text looks like a credential; credentials never enter memory."""


class InvalidName(MemdreamError):
    """A user, agent or other name is not allowed (path traversal, empty, too long)."""

    exit_code = 2


class NotFound(MemdreamError):
    """No entry, subject or file matches."""

    exit_code = 1


class VaultError(MemdreamError):
    """The vault is missing, unreadable, read-only, or locked for too long."""

    exit_code = 1


class ConfigError(MemdreamError):
    """memdream.toml or an environment variable has an invalid value."""

    exit_code = 2


class ChangedOnDisk(MemdreamError):
    """A change was made against a version of a line that is no longer the one on disk (a hand
    edit or another program changed it meanwhile); nothing was written."""

    exit_code = 1
