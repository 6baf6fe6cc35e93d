"""A throwaway PostgreSQL cluster for Debezium: Debian's server, in a temporary directory, on a
free loopback port, with logical decoding on (wal_level=logical, for the pgoutput plugin).

PostgreSQL will not run as root, and CI runs as root: there the cluster's files belong to the
`postgres` user the Debian package creates, and the server runs as that user (setpriv execs
it, so the process the test holds is PostgreSQL's own and its SIGTERM is the smart shutdown). Trust
authentication on loopback only: the cluster lives for one test and holds nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from compat.targets import free_port

START_DEADLINE_S = 30.0


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries here (Debian's `postgresql` package installs them)."""


def server_bin_dir() -> Path:
    """The newest installed server's bin directory (Debian keeps them per major version)."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name)
    )
    if not found:
        raise PostgresUnavailable("no /usr/lib/postgresql/*/bin/postgres: apt-get install postgresql")
    return found[-1].parent


class ThrowawayPostgres:
    def __init__(self) -> None:
        self.bin = server_bin_dir()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="kafka-shim-pg-"))
        self.data = self.root / "data"
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                raise PostgresUnavailable("running as root and no setpriv to start PostgreSQL as postgres")
            shutil.chown(self.root, "postgres", "postgres")
            self._as_user = [setpriv, "--reuid=postgres", "--regid=postgres", "--clear-groups"]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ThrowawayPostgres:
        initdb = [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*self._as_user, *initdb, "--no-sync", "-E", "UTF8"], check=True, capture_output=True, timeout=60
        )
        server = [
            str(self.bin / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={self.root}",
            "-c",
            "wal_level=logical",
            "-c",
            "fsync=off",  # a test's cluster: crash safety buys nothing, fsyncs cost seconds
        ]
        log = (self.root / "server.log").open("wb")
        self.process = subprocess.Popen([*self._as_user, *server], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + START_DEADLINE_S
        while subprocess.run(self._psql("SELECT 1"), capture_output=True, timeout=10).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                failure = PostgresUnavailable(f"PostgreSQL did not start:\n{self.log_tail()}")
                self.stop()  # the caller holds no cluster to stop: a slow server is not left running
                raise failure
            time.sleep(0.1)
        return self

    def _psql(self, sql: str) -> list[str]:
        return [
            "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ]

    def execute(self, sql: str) -> None:
        done = subprocess.run(self._psql(sql), capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed on {sql!r}: {done.stderr}")

    def log_tail(self) -> str:
        log = self.root / "server.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: PostgreSQL's smart shutdown
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)
