"""The per-scenario sandbox: a fresh directory tree on the real disk.

Layout under one temporary directory: ``root/`` (the session root the
implementation works in, with ``root/home`` as HOME) and ``session-N/`` (one
session directory per ``begin``, outside the root). The runner writes and
checks files here directly; mtimes are set explicitly so that coarse
filesystem clocks never decide a result.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from conformance.errors import ScenarioError
from conformance.suite.matchers import MISSING, Mismatch
from conformance.suite.scenario import MAX_REPEATED_BYTES, FileSpec, FinalFile, FsStep
from conformance.suite.yamlsource import format_path
from conformance.trees import remove_tree

__all__ = ["MIN_MTIME_STEP_NS", "Sandbox"]

MIN_MTIME_STEP_NS = 2_000_000_000
"""An fs write or touch moves the mtime forward by at least this much (2 s)."""


class Sandbox:
    """One scenario's directories and the placeholders that name them."""

    def __init__(
        self,
        fixtures: Path,
        *,
        prefix: str = "toolconf-",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.extra = dict(extra or {})
        """Placeholders that name no directory (PROFILE-SCENARIO-2's)."""
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix=prefix)))
        self.root = self.base / "root"
        self.home = self.root / "home"
        self.fixtures = fixtures
        self.sessions = 0
        self.session_dir = self.base / "session-0"
        self.root.mkdir()
        self.home.mkdir()

    def new_session_dir(self) -> Path:
        """A fresh, empty session directory outside the root; placeholders follow it."""
        self.sessions += 1
        self.session_dir = self.base / f"session-{self.sessions}"
        self.session_dir.mkdir()
        return self.session_dir

    # -- placeholders ------------------------------------------------------

    @property
    def placeholders(self) -> Mapping[str, str]:
        """``{root}``, ``{home}``, ``{fixtures}``, ``{session_dir}`` -> absolute paths, and
        the profile's placeholders (PROFILE-SCENARIO-2) -> their texts."""
        return {
            **self.extra,
            "{root}": str(self.root),
            "{home}": str(self.home),
            "{fixtures}": str(self.fixtures),
            "{session_dir}": str(self.session_dir),
        }

    def expand(self, value: Any) -> Any:
        """Replace placeholders in every string (keys too) of a JSON value."""
        return _expand(value, self.placeholders, expect=False)

    def expand_expect(self, value: Any) -> Any:
        """As ``expand``, but inside ``{regex: ...}`` the paths are regex-escaped."""
        return _expand(value, self.placeholders, expect=True)

    def path(self, relative: str) -> Path:
        """The absolute path of a root-relative path from the scenario."""
        return self.root / str(self.expand(relative))

    # -- setup -------------------------------------------------------------

    def materialize(self, files: Sequence[FileSpec], cwd: str | None) -> Path:
        """Create the setup files, then their mtimes and modes; return the cwd.

        Raises:
            ScenarioError: a file cannot be created.
        """
        now = time.time_ns()
        try:
            for spec in files:
                self._create(spec)
            deepest_first = sorted(files, key=lambda s: s.path.count("/"), reverse=True)
            for spec in deepest_first:
                if spec.mtime is not None:
                    _set_mtime(
                        self.path(spec.path), now + _ns(spec.mtime), link=spec.kind == "symlink"
                    )
            for spec in deepest_first:
                if spec.mode is not None:
                    os.chmod(self.path(spec.path), spec.mode)
            where = self.path(cwd) if cwd else self.root
            where.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ScenarioError(f"setup: {exc}") from exc
        return where

    def _create(self, spec: FileSpec) -> None:
        path = self.path(spec.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if spec.kind == "text":
            _write_repeated(path, self.expand(spec.text).encode("utf-8"), spec.repeat)
        elif spec.kind == "b64":
            _write_repeated(path, spec.data or b"", spec.repeat)
        elif spec.kind == "dir":
            path.mkdir(exist_ok=True)
        elif spec.kind == "symlink":
            os.symlink(self.expand(spec.target), path)
        elif spec.kind == "fifo":
            os.mkfifo(path)
        else:
            with path.open("wb") as handle:
                handle.truncate(spec.size or 0)

    # -- fs steps ----------------------------------------------------------

    def apply(self, step: FsStep) -> None:
        """Carry out one fs step.

        Raises:
            ScenarioError: the step cannot be carried out (say, deleting nothing).
        """
        path = self.path(step.path)
        try:
            previous = _mtime_ns(path)
            if step.op in ("write", "touch", "symlink", "mkfifo", "mkdir"):
                path.parent.mkdir(parents=True, exist_ok=True)
            if step.op == "write":
                data = (
                    step.data if step.data is not None else self.expand(step.text).encode("utf-8")
                )
                with path.open("wb") as handle:
                    handle.write(data)
            elif step.op == "touch" and previous is None:
                path.touch()
            elif step.op == "delete":
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            elif step.op == "chmod":
                os.chmod(path, step.mode or 0)
            elif step.op == "symlink":
                os.symlink(self.expand(step.target), path)
            elif step.op == "mkfifo":
                os.mkfifo(path)
            elif step.op == "mkdir":
                path.mkdir(exist_ok=True)
            if step.op in ("write", "touch"):
                _bump_mtime(path, previous, step.mtime)
        except OSError as exc:
            raise ScenarioError(f"fs {step.op} {step.path}: {exc}") from exc

    # -- final -------------------------------------------------------------

    def check_final(self, files: Iterable[FinalFile]) -> list[Mismatch]:
        """Compare the disk with ``final.files``; one mismatch per broken promise."""
        out: list[Mismatch] = []
        for want in files:
            where = format_path(("final", "files", want.path))
            path = self.path(want.path)
            exists = os.path.lexists(path)
            if want.absent:
                if exists:
                    out.append(
                        Mismatch(f"{where}.absent", True, _describe(path), "expected no file")
                    )
                continue
            if not exists:
                out.append(Mismatch(where, "a file", MISSING, "the file does not exist"))
                continue
            out.extend(self._check_content(want, path, where))
            if want.mode is not None:
                mode = stat.S_IMODE(os.stat(path).st_mode)
                if mode != want.mode:
                    out.append(Mismatch(f"{where}.mode", f"{want.mode:04o}", f"{mode:04o}"))
        return out

    def _check_content(self, want: FinalFile, path: Path, where: str) -> list[Mismatch]:
        if want.text is None and want.data is None and want.contains is None:
            return []
        try:
            data = path.read_bytes()
        except OSError as exc:
            return [Mismatch(where, "readable file", MISSING, f"cannot read: {exc}")]
        if want.text is not None:
            expected = self.expand(want.text)
            if data != expected.encode("utf-8"):
                return [Mismatch(f"{where}.text", expected, _text_or_b64(data))]
        elif want.data is not None:
            if data != want.data:
                return [Mismatch(f"{where}.b64", _b64(want.data), _b64(data))]
        elif want.contains is not None:
            needle = self.expand(want.contains)
            text = data.decode("utf-8", "replace")
            if needle not in text:
                return [
                    Mismatch(
                        f"{where}.contains", needle, text, f"{needle!r} not found in {text[:300]!r}"
                    )
                ]
        return []

    # -- cleanup -----------------------------------------------------------

    def cleanup(self) -> None:
        """Remove everything, even read-only directories the scenario made."""
        remove_tree(self.base)


def _expand(value: Any, table: Mapping[str, str], *, expect: bool, regex: bool = False) -> Any:
    if isinstance(value, str):
        for key, replacement in table.items():
            if key in value:
                value = value.replace(key, re.escape(replacement) if regex else replacement)
        return value
    if isinstance(value, dict):
        return {
            _expand(k, table, expect=False): _expand(
                v, table, expect=expect, regex=expect and k == "regex"
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_expand(v, table, expect=expect) for v in value]
    return value


def _ns(seconds: float) -> int:
    return round(seconds * 1_000_000_000)


def _mtime_ns(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _set_mtime(path: Path, mtime_ns: int, *, link: bool = False) -> None:
    if link and os.utime not in os.supports_follow_symlinks:
        return
    os.utime(path, ns=(mtime_ns, mtime_ns), follow_symlinks=not link)


def _bump_mtime(path: Path, previous: int | None, offset: float | None) -> None:
    """Explicit offsets count from the old mtime (or now); otherwise move >= 2 s forward."""
    now = time.time_ns()
    if offset is not None:
        _set_mtime(path, (previous if previous is not None else now) + _ns(offset))
    elif previous is not None:
        _set_mtime(path, max(now, previous + MIN_MTIME_STEP_NS))


def _describe(path: Path) -> str:
    if path.is_symlink():
        return f"a symlink to {os.readlink(path)}"
    if path.is_dir():
        return "a directory"
    return "a file"


def _text_or_b64(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "b64:" + _b64(data)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


REPEAT_BLOCK_BYTES: Final = 1 << 20


def _write_repeated(path: Path, unit: bytes, times: int) -> None:
    """Write ``unit`` ``times`` over, a block of about a MiB at a time (FileSpec.repeat).

    Raises:
        ScenarioError: the file would pass MAX_REPEATED_BYTES (placeholders can
            lengthen a text after the loader checked it).
    """
    if len(unit) * times > MAX_REPEATED_BYTES:
        raise ScenarioError(
            f"setup: {path.name}: repeat makes {len(unit) * times} bytes, "
            f"more than {MAX_REPEATED_BYTES}"
        )
    per_block = max(1, REPEAT_BLOCK_BYTES // max(1, len(unit)))
    full, rest = divmod(times, per_block)
    with path.open("wb") as handle:
        if full:
            block = unit * per_block
            for _ in range(full):
                handle.write(block)
        handle.write(unit * rest)
