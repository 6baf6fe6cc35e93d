"""The private channel between the cluster console (in the supervisor, shim.processes.cluster_console)
and each broker process (shim.processes.view_service): a Unix socket in the broker's own data
directory (mode 0700: only the broker's user reaches it), one connection per question, each
message one JSON document after its 4-byte big-endian length. Light on purpose: a broker process
imports it only when the console is served."""

from __future__ import annotations

import json
import os
import socket
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import trio

SOCKET_NAME = "console.sock"
# AF_UNIX paths are at most 108 bytes with their terminating NUL (Linux's sun_path).
MAX_PATH_BYTES = 107
MAX_QUESTION_BYTES = 64 << 10  # a question names a view and a few parameters
MAX_ANSWER_BYTES = 256 << 20  # a whole process's topics and groups, many times over
_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class Channel:
    """A broker process's listening socket, bound by the supervisor and inherited."""

    sock: socket.socket
    path: Path

    @classmethod
    def bind(cls, directory: Path) -> Channel:
        """Listening at DIRECTORY/console.sock (a stale one from an unclean stop replaced), or
        in a fresh private temporary directory where that path is too long for AF_UNIX."""
        path = directory / SOCKET_NAME
        if len(os.fsencode(path)) > MAX_PATH_BYTES:
            path = Path(tempfile.mkdtemp(prefix="kafka-shim-")) / SOCKET_NAME
        path.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(path))
            os.chmod(path, 0o600)  # the broker's user alone, whatever the directory's mode
            sock.listen(socket.SOMAXCONN)
        except OSError:
            sock.close()
            raise
        return cls(sock, path)

    def remove(self) -> None:
        """The socket's file gone (and the temporary directory that held it)."""
        self.path.unlink(missing_ok=True)
        if self.path.parent.name.startswith("kafka-shim-"):
            self.path.parent.rmdir()


class ChannelError(Exception):
    """The peer closed early, sent more than allowed, or sent what is not JSON."""


async def send_json(stream: trio.abc.SendStream, value: Any) -> None:
    data = json.dumps(value, separators=(",", ":")).encode()
    await stream.send_all(_LENGTH.pack(len(data)) + data)


async def _exactly(stream: trio.abc.ReceiveStream, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = await stream.receive_some(min(left, 1 << 20))
        if not chunk:
            raise ChannelError(f"closed {left} bytes short")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


async def receive_json(stream: trio.abc.ReceiveStream, max_bytes: int) -> Any:
    (size,) = _LENGTH.unpack(await _exactly(stream, _LENGTH.size))
    if size > max_bytes:
        raise ChannelError(f"a message of {size} bytes (at most {max_bytes})")
    try:
        return json.loads(await _exactly(stream, size))
    except ValueError as exc:
        raise ChannelError(f"not JSON: {exc}") from exc
