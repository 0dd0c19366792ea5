"""SIGKILL fault injection during Write and Edit (PROTO-STRESS-1).

Five files of ``size`` bytes each: UTF-8 with non-ASCII text, CRLF line
endings, UTF-16LE with a BOM, a file with mode 0750, and a file reached
through a symlink. Each kill: a fresh adapter and session, a Read of the
whole file (so Write and Edit may change it), then a Write of new content or
an Edit replacing a token on every line, and a SIGKILL of the adapter's whole
process tree at a random moment: for half the kills within the write window
(from the first new directory entry to the file's change, as an unkilled
run of the same operation showed it), for the other half anywhere within
that run's duration.
The file must then hold its old text or its new text (decoded in its
encoding, line endings normalized), never anything else; its mode and the
symlink must survive. Files in the directory that the harness did not make
are leftover temporary files: counted, and each watched to see whether a
later start of the implementation removes it.
"""

from __future__ import annotations

import json
import os
import random
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from conformance.errors import AdapterFailure
from conformance.instruments.reliability.common import RawAdapter, StressSandbox, tool_use
from conformance.wire.connector import ConnectorOptions

__all__ = ["KillFigures", "run_kills"]

_WORDS: Final = ("alpha", "beta", "gamma", "délta", "ëpsilon", "zeta", "漢字", "eta", "θήτα", "🙂")


@dataclass(frozen=True, slots=True)
class _Kind:
    name: str
    encoding: str
    eol: str
    mode: int | None = None
    via_link: bool = False


KINDS: Final = (
    _Kind("utf8", "utf-8", "\n"),
    _Kind("crlf", "utf-8", "\r\n"),
    _Kind("utf16", "utf-16", "\n"),
    _Kind("mode", "utf-8", "\n", mode=0o750),
    _Kind("link", "utf-8", "\n", via_link=True),
)
"""The file kinds; ``utf-16`` writes UTF-16LE with a BOM on little-endian hosts too."""


@dataclass
class KillFigures:
    """What the kills found; ``failures`` lists each defect in words."""

    kills: int = 0
    mid_operation: int = 0
    """Kills that landed before the adapter answered the operation."""
    old: int = 0
    new: int = 0
    torn: int = 0
    missing: int = 0
    mode_lost: int = 0
    link_replaced: int = 0
    leftover_temp_files: int = 0
    """Distinct files left in the directory that the harness did not make."""
    leftovers_cleaned_by_next_start: int = 0
    leftovers_remaining: int = 0
    setup_failures: int = 0
    """Reads or operations refused where they should have run (the kill then proves less)."""
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No torn, missing, mode-losing or link-replacing outcome."""
        return not (self.torn or self.missing or self.mode_lost or self.link_replaced)


def _content(version: int, lines: int, rnd: random.Random) -> str:
    return "".join(
        f"r{version}x {' '.join(rnd.choice(_WORDS) for _ in range(7))} {i}\n" for i in range(lines)
    )


class _File:
    """One stress file: its path (the one calls name), its text and encoding."""

    def __init__(self, kind: _Kind, directory: Path, size: int, rnd: random.Random) -> None:
        self.kind = kind
        self.version = 0
        self.lines = max(1, size // 64)
        self.rnd = rnd
        self.real = directory / f"{kind.name}.txt"
        self.path = directory / f"{kind.name}-link.txt" if kind.via_link else self.real
        self.text = _content(0, self.lines, rnd)
        self._write(self.text)
        if kind.mode is not None:
            os.chmod(self.real, kind.mode)
        if kind.via_link:
            os.symlink(self.real.name, self.path)

    def names(self) -> set[str]:
        return {self.real.name, self.path.name}

    def _write(self, text: str) -> None:
        data = text.replace("\n", self.kind.eol).encode(self.kind.encoding)
        with open(self.real, "wb") as handle:  # keeps the mode
            handle.write(data)

    def advance(self, new: str) -> None:
        """The operation happened: ``new`` is the text now.

        A Write drops a UTF-16LE file's byte order mark (TEXT-ENC-1), after
        which its detected encoding is UTF-8; the harness puts the mark back
        so every kill of this kind starts from UTF-16LE with a BOM.
        """
        self.text, self.version = new, self.version + 1
        if self.kind.encoding == "utf-16" and not self.real.read_bytes().startswith(b"\xff\xfe"):
            self._write(new)

    def restore(self) -> None:
        """Put the old text back after a defect, so the next kill starts clean."""
        self._write(self.text)
        if self.kind.mode is not None:
            os.chmod(self.real, self.kind.mode)
        if self.kind.via_link and not self.path.is_symlink():
            self.path.unlink(missing_ok=True)
            os.symlink(self.real.name, self.path)

    def state(self) -> str | None:
        """The text on disk, decoded and with LF endings; None when unreadable or torn."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        try:
            text = data.decode(self.kind.encoding)
        except UnicodeDecodeError:
            return "\0torn"
        return text.replace("\r\n", "\n")

    def operation(self, op: str, id_: str) -> tuple[dict[str, Any], str]:
        """The tool_use of ``op`` and the text it makes."""
        nxt = self.version + 1
        if op == "Write":
            new = _content(nxt, self.lines, self.rnd)
            given: dict[str, Any] = {"file_path": str(self.path), "content": new}
        else:
            new = self.text.replace(f"r{self.version}x", f"r{nxt}x")
            given = {
                "file_path": str(self.path),
                "old_string": f"r{self.version}x",
                "new_string": f"r{nxt}x",
                "replace_all": True,
            }
        return tool_use(op, given, id_), new


def run_kills(
    impl: str,
    options: ConnectorOptions,
    *,
    kills: int,
    size: int,
    seed: int,
    op_timeout: float = 120.0,
) -> KillFigures:
    """``kills`` SIGKILLs during Write and Edit of files of ``size`` bytes; see the module."""
    rnd = random.Random(seed)
    figures = KillFigures()
    box = StressSandbox()
    work = box.root / "files"
    work.mkdir()
    files = [_File(kind, work, size, rnd) for kind in KINDS]
    expected = set().union(*(f.names() for f in files))
    durations: dict[tuple[str, str], _Timing] = {}
    seen: set[str] = set()
    try:
        for index in range(kills):
            target = files[index % len(files)]
            op = "Write" if rnd.random() < 0.5 else "Edit"
            adapter = RawAdapter(impl, options)
            try:
                adapter.start()
                box.begin(adapter, prompt="allow")
                _track_leftovers(work, expected, seen, figures)
                if not _read_whole(adapter, target):
                    figures.setup_failures += 1
                    figures.failures.append(f"kill {index}: Read of {target.kind.name} refused")
                    continue
                key = (target.kind.name, op)
                if key not in durations:  # calibrate on one unkilled operation
                    durations[key] = _calibrate(adapter, target, op, op_timeout, figures)
                    if not _read_whole(adapter, target):
                        figures.setup_failures += 1
                        continue
                _kill_once(
                    adapter, target, op, durations[key], rnd=rnd, figures=figures, index=index
                )
            except AdapterFailure as exc:
                figures.setup_failures += 1
                figures.failures.append(f"kill {index}: the adapter failed first: {exc}")
            finally:
                adapter.sigkill()
                adapter.close()
        # One more start: does the implementation clean what the kills left?
        adapter = RawAdapter(impl, options)
        try:
            adapter.start()
            box.begin(adapter, prompt="allow")
        except AdapterFailure:
            pass
        finally:
            adapter.close()
        _track_leftovers(work, expected, seen, figures)
        figures.leftovers_remaining = len(_strays(work, expected))
    finally:
        box.cleanup()
    return figures


def _read_whole(adapter: RawAdapter, target: _File) -> bool:
    answer = adapter.call("Read", {"file_path": str(target.path), "limit": target.lines + 10})
    return not answer.get("error") and not answer["tool_result"].get("is_error")


@dataclass(frozen=True, slots=True)
class _Timing:
    """One unkilled operation, timed: the whole call, and when the disk first changed."""

    seconds: float
    write_begins: float
    """When a new entry first appeared in the directory (a temporary file), else the change."""
    write_ends: float
    """When the file itself first changed (its inode, size or mtime)."""

    def delay(self, rnd: random.Random) -> float:
        """Half the kills aim at the write window, half anywhere in the call."""
        if rnd.random() < 0.5 and self.write_ends > 0:
            return rnd.uniform(self.write_begins * 0.8, self.write_ends * 1.1)
        return rnd.uniform(0.0, max(self.seconds, 0.005) * 1.1)


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _calibrate(
    adapter: RawAdapter, target: _File, op: str, timeout: float, figures: KillFigures
) -> _Timing:
    """Run ``op`` once unkilled, watching the disk; the file moves to its new text."""
    use, new = target.operation(op, f"calibrate-{op}")
    directory = target.real.parent
    names, before = set(os.listdir(directory)), _signature(target.real)
    marks: dict[str, float] = {}
    stop = threading.Event()
    started = time.perf_counter()

    def watch() -> None:
        while not stop.is_set() and "changed" not in marks:
            now = time.perf_counter() - started
            if "entry" not in marks and set(os.listdir(directory)) - names:
                marks["entry"] = now
            if _signature(target.real) != before:
                marks["changed"] = now
            time.sleep(0.0005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        answer = adapter.request_raw({"cmd": "call", "tool_use": use})
    finally:
        seconds = time.perf_counter() - started
        stop.set()
        watcher.join(timeout=2)
    changed = marks.get("changed", 0.0)
    timing = _Timing(seconds, marks.get("entry", changed), changed)
    if answer.get("error") or answer["tool_result"].get("is_error"):
        figures.setup_failures += 1
        figures.failures.append(f"calibration {op} of {target.kind.name} refused: {answer}"[:300])
        return timing
    if target.state() == new:
        target.advance(new)
    else:
        figures.failures.append(f"calibration {op} of {target.kind.name}: unexpected content")
        target.restore()
    return timing


def _kill_once(
    adapter: RawAdapter,
    target: _File,
    op: str,
    timing: _Timing,
    *,
    rnd: random.Random,
    figures: KillFigures,
    index: int,
) -> None:
    use, new = target.operation(op, f"kill-{index}")
    seq = 10_000_000 + index
    body = {"seq": seq, "cmd": "call", "tool_use": use}
    delay = timing.delay(rnd)
    adapter.send_line(json.dumps(body).encode("utf-8"))
    time.sleep(delay)
    answered = bool(adapter.drain(0))
    adapter.sigkill()
    figures.kills += 1
    figures.mid_operation += not answered
    state = target.state()
    kind = figures.by_kind.setdefault(target.kind.name, {"old": 0, "new": 0, "bad": 0})
    mode_ok = target.kind.mode is None or (
        target.real.exists() and stat.S_IMODE(os.stat(target.real).st_mode) == target.kind.mode
    )
    link_ok = not target.kind.via_link or target.path.is_symlink()
    if state == target.text:
        figures.old += 1
        kind["old"] += 1
    elif state == new:
        figures.new += 1
        kind["new"] += 1
        target.advance(new)
    else:
        kind["bad"] += 1
        if state is None:
            figures.missing += 1
            figures.failures.append(f"kill {index} ({op} {target.kind.name}): the file is gone")
        else:
            figures.torn += 1
            figures.failures.append(
                f"kill {index} ({op} {target.kind.name}, {delay:.3f} s): torn, "
                f"{len(state)} characters, neither old nor new"
            )
        target.restore()
        return
    if not mode_ok:
        figures.mode_lost += 1
        figures.failures.append(f"kill {index} ({op}): mode {target.kind.mode:o} lost")
        target.restore()
    if not link_ok:
        figures.link_replaced += 1
        figures.failures.append(f"kill {index} ({op}): the symlink became a regular file")
        target.restore()


def _strays(directory: Path, expected: set[str]) -> set[str]:
    return {name for name in os.listdir(directory) if name not in expected}


def _track_leftovers(
    directory: Path, expected: set[str], seen: set[str], figures: KillFigures
) -> None:
    """Count new strays; a stray seen before and gone now was cleaned by a start."""
    now = _strays(directory, expected)
    gone = seen - now
    figures.leftovers_cleaned_by_next_start += len(gone)
    seen.difference_update(gone)
    new = now - seen
    figures.leftover_temp_files += len(new)
    seen.update(new)
