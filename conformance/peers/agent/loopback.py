"""A peer agent's process in a loopback-only network namespace, with its escapes recorded.

``wrap_loopback`` adds a network namespace of its own to the mount and PID
namespaces of ``conformance.isolation.wrap`` (PROTO-ISOLATE-1): inside,
only ``lo`` exists, the scripted model's port is relayed from
``127.0.0.1:PORT`` to its Unix socket outside, and every connection
attempt, datagram or DNS query aimed elsewhere is refused at once and
written to the record (``loopback_stage``). ``read_escapes`` reads that
record back. The agent's whole process group ends with the namespace's
first process (PROTO-KILL-1).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from conformance.peers.isolation import isolation_available, wrap

__all__ = ["STAGE", "Escape", "loopback_available", "read_escapes", "wrap_loopback"]

STAGE: Final = Path(__file__).resolve().parent / "loopback_stage.py"
"""The second stage run inside the namespace (standard library only)."""


@dataclass(frozen=True, slots=True)
class Escape:
    """One attempt to reach beyond the loopback: a connection, a datagram or a DNS query.

    ``kind`` is ``tcp``, ``udp``, ``dns`` or ``unrecorded`` (the namespace
    could not watch: attempts were still blocked, not seen); ``target`` is
    ``address:port`` or the name looked up.
    """

    kind: str
    target: str

    def __str__(self) -> str:
        return f"{self.kind} {self.target}"


def wrap_loopback(
    argv: Sequence[str],
    private: Path,
    *,
    port: int,
    unix_path: Path,
    record: Path,
    readonly: Iterable[Path] = (),
) -> list[str]:
    """``argv`` in fresh network, mount and PID namespaces, its port relayed to ``unix_path``.

    ``private`` is writable inside (it must hold ``unix_path`` and
    ``record``); see ``conformance.isolation.wrap`` for the rest of the file
    system.
    """
    stage = [
        os.path.abspath(sys.executable),
        "-I",
        str(STAGE),
        "--port",
        str(port),
        "--unix",
        str(unix_path),
        "--record",
        str(record),
        "--",
        *argv,
    ]
    wrapped = wrap(stage, private, readonly=readonly)
    if wrapped[:1] != ["unshare"]:
        raise RuntimeError("conformance.isolation.wrap no longer starts with unshare")
    return [wrapped[0], "--net", *wrapped[1:]]


@functools.cache
def loopback_available() -> bool:
    """Whether ``wrap_loopback`` works here (tried once per process with ``true``)."""
    if not isolation_available():
        return False
    with tempfile.TemporaryDirectory(prefix="toolconf-loopback-") as scratch:
        private = Path(scratch)
        argv = wrap_loopback(
            ["true"],
            private,
            port=9,
            unix_path=private / "model.sock",
            record=private / "escapes.jsonl",
        )
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


def read_escapes(record: Path) -> list[Escape]:
    """The attempts ``record`` holds, in the order they were made (none if it is missing)."""
    escapes: list[Escape] = []
    with contextlib.suppress(OSError):
        for line in record.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            kind = str(entry.get("kind"))
            if kind == "dns":
                target = f"{entry.get('name')} (asked of {entry.get('server')})"
            elif kind == "unrecorded":
                target = str(entry.get("reason"))
            else:
                target = f"{entry.get('address')}:{entry.get('port')}"
            escapes.append(Escape(kind, target))
    return escapes
