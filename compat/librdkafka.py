"""The newest librdkafka on this machine: the one bundled in the confluent-kafka wheel.

kcat links `librdkafka.so.1`; the wheel ships it under an auditwheel-mangled name
(`confluent_kafka.libs/librdkafka-<hash>.so.1`, statically linked apart from libc). A
directory holding one symlink with the plain name, put first on LD_LIBRARY_PATH, makes
Debian's kcat run on the wheel's librdkafka unchanged.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path


class BundledLibrdkafkaMissing(RuntimeError):
    pass


def wheel_library() -> Path:
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or spec.origin is None:
        raise BundledLibrdkafkaMissing("confluent-kafka is not installed")
    libs = Path(spec.origin).resolve().parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*"))
    if not found:
        raise BundledLibrdkafkaMissing(f"no librdkafka in {libs}")
    return found[0]


def library_dir() -> Path:
    """A directory whose `librdkafka.so.1` is the wheel's (created once per machine and user)."""
    library = wheel_library()
    directory = Path(tempfile.gettempdir()) / f"kafka-shim-compat-librdkafka-{os.getuid()}"
    directory.mkdir(exist_ok=True)
    link = directory / "librdkafka.so.1"
    if not link.exists() or link.resolve() != library:
        temporary = directory / f".link-{os.getpid()}"
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(library)
        temporary.replace(link)  # atomic: concurrent runs never see a missing link
    return directory


def version() -> str:
    import confluent_kafka

    return str(confluent_kafka.libversion()[0])
