"""Tenants: bearer tokens, one scope each, stored hashed in the database.

A token is shown once, when it is created; the database keeps its SHA-256. A request's
scope comes from its token, never from its arguments.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memdream.errors import NotFound
from memdream.store.vault import Scope

if TYPE_CHECKING:
    from memdream.team.store import TeamStore

PREFIX = "mdt_"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenInfo:
    scope: Scope
    fingerprint: str  # the first 12 hex digits of the hash: names a token without revealing it
    label: str
    created_at: datetime
    revoked_at: datetime | None

    def to_json(self) -> dict:
        return {
            "user": self.scope.user, "agent": self.scope.agent, "fingerprint": self.fingerprint, "label": self.label,
            "created_at": self.created_at.isoformat(), "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


def create(store: "TeamStore", scope: Scope, label: str = "") -> str:
    """A new token for `scope` (printed once; only its hash is stored)."""
    token = PREFIX + secrets.token_urlsafe(32)
    with store.pool.connection() as conn, conn.transaction():
        conn.execute("INSERT INTO memdream_tokens (scope, hash, label) VALUES (%s, %s, %s)", (scope.key, digest(token), label))
        conn.execute("INSERT INTO memdream_scopes (scope) VALUES (%s) ON CONFLICT DO NOTHING", (scope.key,))
    return token


def scope_of(store: "TeamStore", token: str) -> Scope | None:
    """The scope a live token serves, or None."""
    if not token:
        return None
    with store.pool.connection() as conn:
        row = conn.execute("SELECT scope FROM memdream_tokens WHERE hash = %s AND revoked_at IS NULL", (digest(token),)).fetchone()
        conn.rollback()
    return Scope.from_key(row[0]) if row else None


def listing(store: "TeamStore", scope: Scope | None = None, revoked: bool = False) -> list[TokenInfo]:
    sql = "SELECT scope, hash, label, created_at, revoked_at FROM memdream_tokens"
    where, args = [], []
    if scope is not None:
        where.append("scope = %s")
        args.append(scope.key)
    if not revoked:
        where.append("revoked_at IS NULL")
    if where:
        sql += " WHERE " + " AND ".join(where)
    with store.pool.connection() as conn:
        rows = conn.execute(sql + " ORDER BY scope, created_at", args).fetchall()
        conn.rollback()
    return [TokenInfo(Scope.from_key(s), h[:12], label, c, r) for s, h, label, c, r in rows]


def revoke(store: "TeamStore", token_or_fingerprint: str) -> TokenInfo:
    """Revoke a token, given whole or by the fingerprint `token list` shows."""
    value = token_or_fingerprint.strip()
    with store.pool.connection() as conn, conn.transaction():
        if value.startswith(PREFIX):
            rows = conn.execute("SELECT hash FROM memdream_tokens WHERE hash = %s AND revoked_at IS NULL", (digest(value),)).fetchall()
        elif len(value) >= 8 and all(c in "0123456789abcdef" for c in value):
            rows = conn.execute("SELECT hash FROM memdream_tokens WHERE hash LIKE %s AND revoked_at IS NULL", (value + "%",)).fetchall()
        else:
            rows = []
        if len(rows) != 1:
            raise NotFound(
                f"no single live token matches {value[:16]!r}" if not rows else f"{len(rows)} live tokens start with {value!r}",
                "give the whole token, or a fingerprint from 'memdream token list' (at least 8 hex digits)",
            )
        row = conn.execute(
            "UPDATE memdream_tokens SET revoked_at = now() WHERE hash = %s RETURNING scope, hash, label, created_at, revoked_at", (rows[0][0],)
        ).fetchone()
    s, h, label, c, r = row
    return TokenInfo(Scope.from_key(s), h[:12], label, c, r)
