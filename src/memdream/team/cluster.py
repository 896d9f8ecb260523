"""A throwaway PostgreSQL cluster: for the team server's tests, benchmarks and demo act.

`initdb` in a temporary folder, the server listening on a Unix socket in that folder only
(no TCP port), trust authentication for the local socket, stopped and removed afterwards.
initdb refuses to run as root, so as root the cluster is created and run as the `postgres`
user (Debian's package creates it). Debian keeps the binaries in /usr/lib/postgresql/N/bin.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for cand in sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True):
        return cand
    return None


def available() -> str:
    """'' when a cluster can be started here, else why not."""
    if not find_bin("initdb") or not find_bin("pg_ctl"):
        return "PostgreSQL's initdb/pg_ctl are not installed (Debian: apt-get install postgresql-15)"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run initdb as"
    return ""


class Cluster:
    """`with Cluster() as c: c.dsn` is a superuser DSN for the database `postgres`."""

    def __init__(self) -> None:
        # As root the server runs as the postgres user, who must reach the folder: a private
        # temporary folder (pytest's, a user's TMPDIR) may not be traversable, /tmp is.
        self.dir = Path(tempfile.mkdtemp(prefix="memdream-pg-", dir="/tmp" if os.geteuid() == 0 and Path("/tmp").is_dir() else None))
        self.data = self.dir / "data"
        self.sock = self.dir
        self.user = "postgres"
        self._as: list[str] = []
        if os.geteuid() == 0:
            import pwd

            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    @property
    def dsn(self) -> str:
        return f"postgresql://{self.user}@/postgres?host={self.sock}"

    def url(self, user: str, dbname: str = "postgres", password: str = "") -> str:
        auth = f"{user}:{password}" if password else user
        return f"postgresql://{auth}@/{dbname}?host={self.sock}"

    def start(self) -> "Cluster":
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> "Cluster":
        env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
        subprocess.run(
            [*self._as, find_bin("initdb"), "-D", str(self.data), "-U", self.user, "-A", "trust", "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, env=env,
        )
        opts = f"-c listen_addresses='' -c unix_socket_directories='{self.sock}' -c fsync=off -c max_connections=200 -c shared_buffers=128MB"
        subprocess.run(
            [*self._as, find_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "server.log"), "-o", opts, "-w", "-t", "60", "start"],
            check=True, capture_output=True, env=env,
        )
        for _ in range(100):  # pg_ctl -w waited for the socket; make sure it answers
            if (self.sock / ".s.PGSQL.5432").exists():
                break
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        if self.data.exists():
            subprocess.run([*self._as, find_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def new_database(self, name: str, owner: str = "memdream") -> str:
        """A fresh database owned by a fresh non-superuser role (row-level security applies to
        it: a superuser would bypass the policies); returns its DSN."""
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (owner,)).fetchone()
            if not exists:
                conn.execute(f'CREATE ROLE "{owner}" LOGIN')
            conn.execute(f'CREATE DATABASE "{name}" OWNER "{owner}"')
        return self.url(owner, name)
