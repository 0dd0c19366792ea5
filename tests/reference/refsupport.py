"""Helpers shared by the reference engine's unit tests (imported, not fixtures).

pytest puts this directory on ``sys.path`` (rootdir-relative "prepend" import
mode, no ``__init__.py``), so test modules import it as ``refsupport``.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

import pytest

from reference import fileio
from reference.dispatch import CallOutcome
from reference.engine import Engine
from reference.filestate import ReadRecord
from reference.tool import Tool, ToolUseContext

T = TypeVar("T")


class Call(Protocol):
    """The ``call`` fixture: one protocol ``call`` request, the response dict back."""

    def __call__(self, name: str, /, **tool_input: Any) -> dict[str, Any]: ...


class Begin(Protocol):
    """The ``begin`` fixture: (re)begin the engine, overriding session fields."""

    def __call__(self, **session: Any) -> Engine: ...


Unchanged = Callable[..., contextlib.AbstractContextManager[None]]
"""The ``unchanged`` fixture: ``with unchanged(*extra):`` guards the whole root."""


class Use(Protocol):
    """The ``use`` fixture: dispatch one tool_use of a tool in the ``ctx`` fixture."""

    def __call__(self, tool: Tool, /, **tool_input: Any) -> CallOutcome: ...


TEN_SECONDS_NS: Final = 10_000_000_000
BOUNDED_WAIT_S: Final = 5.0
READ_REMINDER: Final = (  # READ-REMINDER-1, written out independently of the engine
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. "
    "But you MUST refuse to improve or augment the code. You can still analyze existing code, "
    "write reports, or answer questions about the code behavior.\n</system-reminder>\n"
)

# Tests that show the engine contradicting SPEC.md. Each test stays as SPEC.md
# says and is expected to fail (conftest.py marks it xfail); the xfail is
# strict, so once the engine is fixed the XPASS fails the run until the entry
# is removed here. A key is "file::test" (every parameter) or
# "file::test[id]" (one parameter); the value says what SPEC.md requires and
# what the engine does instead.
ENGINE_BUGS: Final[dict[str, str]] = {}
_SNAPSHOT_BYTES_LIMIT: Final = 1 << 20  # larger (sparse) files are compared by stat alone


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FileFacts:
    """What a refusal must leave as it was: kind, mode, mtime, size and bytes."""

    mode: int
    mtime_ns: int
    size: int
    content: bytes | None
    link: str | None


def file_facts(path: Path) -> FileFacts:
    st = path.lstat()
    content = None
    if stat.S_ISREG(st.st_mode) and st.st_size <= _SNAPSHOT_BYTES_LIMIT:
        content = path.read_bytes()
    link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    return FileFacts(
        mode=st.st_mode, mtime_ns=st.st_mtime_ns, size=st.st_size, content=content, link=link
    )


def snapshot(root: Path, *extra: Path) -> dict[str, FileFacts]:
    """Every entry under ``root`` (symlinks not followed) plus ``extra`` paths."""
    facts: dict[str, FileFacts] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(directory, name)
            facts[str(path)] = file_facts(path)
    for path in extra:
        facts[str(path)] = file_facts(path)
    return facts


def assert_done(response: dict[str, Any]) -> dict[str, Any]:
    """The call succeeded; returns its structured output."""
    assert response["outcome"]["stage"] == "done", response
    assert response["tool_result"]["is_error"] is False
    output: dict[str, Any] = response["outcome"]["output"]
    return output


def assert_refused(
    response: dict[str, Any], *, stage: str, code: int | None = None, name: str | None = None
) -> None:
    """ERR-CODE-1/2: matched by stage, error_code and error_name, never by message."""
    got = response["outcome"]
    assert (got["stage"], got["error_code"], got["error_name"]) == (stage, code, name), response
    result = response["tool_result"]
    assert result["is_error"] is True
    assert result["content"].startswith("<tool_use_error>")
    assert result["content"].endswith("</tool_use_error>")


def error_text(response: dict[str, Any]) -> str:
    """The message inside ``<tool_use_error>…</tool_use_error>``."""
    content: str = response["tool_result"]["content"]
    return content.removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")


def content(response: dict[str, Any]) -> str:
    text: str = response["tool_result"]["content"]
    return text


def modify_externally(path: Path, data: bytes, *, shift_ns: int = TEN_SECONDS_NS) -> None:
    """Another program rewrites ``path``; its mtime moves by ``shift_ns`` from the old one."""
    before = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + shift_ns))


def touch_forward(path: Path, *, shift_ns: int = TEN_SECONDS_NS) -> None:
    """A watcher touches ``path``: same bytes, new mtime."""
    before = path.stat()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + shift_ns))


def run_bounded(fn: Callable[[], T], *, unblock: Path | None = None) -> T:
    """Run ``fn`` in a daemon thread and fail (never hang) if it does not finish.

    When it hangs on the FIFO ``unblock``, a non-blocking writer is opened and
    closed so that the thread can end.
    """
    box: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # handed to the test thread below
            failure.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(BOUNDED_WAIT_S)
    if worker.is_alive():
        if unblock is not None:
            with contextlib.suppress(OSError):
                os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        raise AssertionError(f"the call blocked for more than {BOUNDED_WAIT_S} s")
    if failure:
        raise failure[0]
    return box[0]


def with_hook_after_validate(tool: Tool, hook: Callable[[], None]) -> Tool:
    """The same tool, with ``hook`` run after a successful validate_input.

    It opens the window STATE-STALE-2's second check exists for: something
    changes the file between validateInput and call().
    """
    validate = tool.validate_input
    assert validate is not None

    def validate_then_hook(inp: Any, ctx: ToolUseContext) -> None:
        validate(inp, ctx)
        hook()

    return dataclasses.replace(tool, validate_input=validate_then_hook)


def forbid_opening(monkeypatch: pytest.MonkeyPatch, *paths: Path | str) -> None:
    """Fail on any attempt to open one of ``paths``, by ``open`` or by ``os.open``.

    An ``O_PATH`` descriptor, which can read nothing (the permission step
    resolves paths with one, PERM-PATH-3), is no opening.
    """
    forbidden = {os.fspath(p) for p in paths}
    real_open = builtins.open
    real_os_open = os.open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, os.PathLike)) and os.fspath(file) in forbidden:
            raise AssertionError(f"opened {file}")
        return real_open(file, *args, **kwargs)

    def guarded_os_open(file: Any, *args: Any, **kwargs: Any) -> int:
        flags = args[0] if args else kwargs.get("flags", 0)
        if os.fspath(file) in forbidden and not flags & getattr(os, "O_PATH", 0):
            raise AssertionError(f"os.open({file})")
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)


def forbid_file_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the engine's byte-reading seam fail: proves a decision read no byte."""

    def no_read(path: str, *_args: Any) -> bytes:
        raise AssertionError(f"read bytes of {path}")

    monkeypatch.setattr(fileio, "read_bytes", no_read)
    monkeypatch.setattr(fileio, "read_head", no_read)


def record_of(engine: Engine, path: Path | str) -> ReadRecord | None:
    """The read-file state record of the engine's current session for ``path``."""
    assert engine.session is not None
    return engine.session.read_state.get(os.fspath(path))
