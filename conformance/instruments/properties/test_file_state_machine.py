"""Read, Write, Edit and out-of-band changes, held against a model of the read-file state.

The model is two dicts. ``disk``: what each file holds and its mtime, as the
test last saw or made it. ``seen``: the read-file state SPEC.md section 9 says
the implementation keeps (text, mtime, size, range, partial flag, source).
Every rule predicts the outcome from the model alone, sends the call, checks
the answer and updates the model; after every step the real disk must equal
``disk`` byte for byte and mtime for mtime, so a refused call that wrote
anything, or a write over an unseen external change, fails at once.

Out-of-band changes move the mtime to >= 2 s past (or before) every mtime the
file ever had, so that mtime equality means "unchanged" and coarse clocks
never decide a result.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import ClassVar, Final

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from conformance.instruments.properties import strategies as s
from conformance.instruments.properties.driver import DriverSession, Implementation, Result
from conformance.instruments.properties.oracle import (
    DEDUP_STUB,
    DEFAULT_LIMIT,
    EditRefused,
    edit_text,
    read_view,
    to_lf,
    written_text,
)
from conformance.run.sandbox import MIN_MTIME_STEP_NS

pytestmark = [pytest.mark.requires("read", "write", "edit"), pytest.mark.slow]

UNEXPECTEDLY_MODIFIED: Final = ("call", None, "FileUnexpectedlyModifiedError")


@dataclass(frozen=True, slots=True, kw_only=True)
class Seen:
    """The record the implementation keeps for a path (STATE-RECORD-1)."""

    text: str
    mtime_ns: int
    size: int
    offset: int | None
    limit: int | None
    partial: bool
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OnDisk:
    """A file's text and mtime on the real disk."""

    text: str
    mtime_ns: int

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")


def expect_done(result: Result, what: str) -> None:
    event(f"{what}: done")
    assert result.done, f"{what}: expected success, got {result}"


def expect_refused(result: Result, what: str, *accepted: tuple[str, int | None, str]) -> None:
    """The call was refused with one of ``accepted`` ``(stage, error_code, error_name)``."""
    got = (result.stage, result.error_code, result.error_name)
    event(f"{what}: refused")
    expected = " or ".join(map(str, accepted))
    assert result.is_error, f"{what}: expected refusal {expected}, got {result}"
    assert got in accepted, f"{what}: expected refusal {expected}, got {result}"
    wrapped = result.text.startswith("<tool_use_error>") and result.text.endswith(
        "</tool_use_error>"
    )
    assert wrapped, f"{what}: the message is not wrapped in <tool_use_error> (ERR-CODE-1/2)"


@dataclass
class _Mtimes:
    """Every mtime each file has had in this run."""

    by_path: dict[str, list[int]] = field(default_factory=dict)

    def add(self, path: str, mtime_ns: int) -> None:
        self.by_path.setdefault(path, []).append(mtime_ns)

    def fresh(self, path: str, move: str) -> int:
        """2 s past every mtime the file had and not before now, or 2 s before all of them."""
        had = self.by_path.get(path, [])
        now = time.time_ns()
        if move == "forward":
            return max([now, *(m + MIN_MTIME_STEP_NS for m in had)])
        return min([now, *had]) - MIN_MTIME_STEP_NS


class FileToolsMachine(RuleBasedStateMachine):
    """One session; the files of ``strategies.PATHS``; the model of section 9."""

    implementation: ClassVar[Implementation]

    def __init__(self) -> None:
        super().__init__()
        self._stack = contextlib.ExitStack()
        self.session: DriverSession = self._stack.enter_context(self.implementation.session())
        self.dedup = "dedup" in self.implementation.hello.features
        self.disk: dict[str, OnDisk] = {}
        self.seen: dict[str, Seen] = {}
        self.mtimes = _Mtimes()
        self.ranges: dict[str, tuple[int | None, int | None]] = {}

    def teardown(self) -> None:
        self._stack.close()

    # -- helpers ---------------------------------------------------------------

    def _abs(self, path: str) -> str:
        return str(self.session.path(path))

    def _stale(self, path: str) -> bool:
        """STATE-STALE-1, first check: the file's mtime is later than the record's."""
        seen, disk = self.seen[path], self.disk[path]
        return disk.mtime_ns > seen.mtime_ns

    def _written(self, path: str, text: str, source: str) -> None:
        """After a successful Write or Edit: the bytes are ``text``; record per STATE-UPDATE-1."""
        actual = self.session.stat(path)
        data = text.encode("utf-8")
        assert actual is not None, f"{path}: missing after a successful {source}"
        assert actual[0] == data, f"{path}: after {source} holds {actual[0]!r}, expected {data!r}"
        mtime = actual[1]
        self.disk[path] = OnDisk(text=text, mtime_ns=mtime)
        self.mtimes.add(path, mtime)
        self.seen[path] = Seen(
            text=text,
            mtime_ns=mtime,
            size=len(data),
            offset=None,
            limit=None,
            partial=False,
            source=source,
        )

    @initialize(
        texts=st.tuples(*(s.file_texts for _ in s.PATHS)),
        read=st.tuples(*(st.booleans() for _ in s.PATHS)),
    )
    def create_files(self, texts: tuple[str, ...], read: tuple[bool, ...]) -> None:
        """Every file exists at the start, written before the session began; some are read."""
        for path, text, first in zip(s.PATHS, texts, read, strict=True):
            self.external_write(path, text, "backward")
            if first:
                self.read(path, None, None)

    # -- tool calls ------------------------------------------------------------

    @rule(path=st.sampled_from(s.PATHS))
    def read_again(self, path: str) -> None:
        """Repeat the range of the last Read of this path (READ-DEDUP-1); else read it whole."""
        self.read(path, *self.ranges.get(path, (None, None)))

    @rule(path=st.sampled_from(s.PATHS), offset=s.offsets, limit=s.limits)
    def read(self, path: str, offset: int | None, limit: int | None) -> None:
        """READ-FORMAT-1, READ-RANGE-1/2, READ-EMPTY-1, READ-OFFSET-1, READ-DEDUP-1/3."""
        self.ranges[path] = (offset, limit)
        given = {k: v for k, v in (("offset", offset), ("limit", limit)) if v is not None}
        result = self.session.call("Read", file_path=self._abs(path), **given)
        disk = self.disk.get(path)
        if disk is None:
            expect_refused(
                result, "Read of a missing file", ("validate", 5, "FileDoesNotExistError")
            )
            return
        first, count = offset or 1, limit or DEFAULT_LIMIT
        seen = self.seen.get(path)
        hit = (
            self.dedup
            and seen is not None
            and seen.source == "read"
            and (seen.offset, seen.limit) == (first, count)
            and (seen.mtime_ns, seen.size) == (disk.mtime_ns, len(disk.data))
        )
        if hit:
            expect_done(result, "Read of an unchanged range")
            assert result.dedup, f"expected the dedup stub (READ-DEDUP-1), got {result}"
            assert result.text == DEDUP_STUB, f"dedup stub text: {result.text!r}"
            return
        expect_done(result, "Read")
        assert not result.dedup, f"dedup without a matching Read record (READ-DEDUP-3): {result}"
        view = read_view(disk.text, offset, limit)
        assert result.text == view.text, f"Read shows {result.text!r}, expected {view.text!r}"
        self.seen[path] = Seen(
            text=disk.text,
            mtime_ns=disk.mtime_ns,
            size=len(disk.data),
            offset=first,
            limit=count,
            partial=view.partial,
            source="read",
        )

    @rule(path=st.sampled_from(s.PATHS), content=s.file_texts)
    def write(self, path: str, content: str) -> None:
        """WRITE-NEW-1, WRITE-READ-1, WRITE-VALIDATE-1, STATE-STALE-1/2, WRITE-CONTENT-1."""
        result = self.session.call("Write", file_path=self._abs(path), content=content)
        if path in self.disk:
            seen = self.seen.get(path)
            if seen is None or seen.partial:
                what = "Write of an unread file" if seen is None else "Write after a partial Read"
                expect_refused(result, what, ("validate", 2, "FileNotReadError"))
                return
            if self._stale(path):
                expect_refused(
                    result,
                    "Write over an external change",
                    ("validate", 3, "FileModifiedSinceReadError"),
                    UNEXPECTEDLY_MODIFIED,
                )
                return
        expect_done(result, "Write")
        self._written(path, written_text(content, path), "write")

    @rule(
        path=st.sampled_from(s.PATHS),
        new_string=s.new_strings,
        replace_all=st.booleans(),
        crlf_inputs=st.booleans(),
        data=st.data(),
    )
    def edit(
        self,
        path: str,
        new_string: str,
        replace_all: bool,
        crlf_inputs: bool,
        data: st.DataObject,
    ) -> None:
        """EDIT-VALIDATE-1 (codes 1, 3, 4, 6, 7, 8, 9), EDIT-READ-1, EDIT-CREATE-1,
        EDIT-MATCH-1, EDIT-QUOTE-1, EDIT-UNIQUE-1, EDIT-WS-1, EDIT-EOL-1."""
        disk = self.disk.get(path)
        old_string = data.draw(s.old_strings(disk.text if disk else None), label="old_string")
        if crlf_inputs:  # EDIT-MATCH-1: the strings are taken as given, \r\n and all
            old_string = to_lf(old_string).replace("\n", "\r\n")
            new_string = to_lf(new_string).replace("\n", "\r\n")
        result = self.session.call(
            "Edit",
            file_path=self._abs(path),
            old_string=old_string,
            new_string=new_string,
            replace_all=replace_all,
        )
        if old_string == new_string:
            expect_refused(result, "Edit without a change", ("validate", 1, "NoChangesError"))
            return
        if disk is None:
            if old_string:
                expect_refused(
                    result, "Edit of a missing file", ("validate", 4, "FileDoesNotExistError")
                )
                return
            created = edit_text("", "", new_string, replace_all=replace_all, path=path)
            assert isinstance(created, str)
            expect_done(result, "Edit creating a file")
            self._written(path, created, "edit")
            return
        if old_string == "" and disk.text:
            expect_refused(
                result, "Edit with empty old_string", ("validate", 3, "FileAlreadyExistsError")
            )
            return
        seen = self.seen.get(path)
        if seen is None:
            expect_refused(result, "Edit of an unread file", ("validate", 6, "FileNotReadError"))
            return
        if self._stale(path):
            expect_refused(
                result,
                "Edit over an external change",
                ("validate", 7, "FileModifiedSinceReadError"),
                UNEXPECTEDLY_MODIFIED,
            )
            return
        after = edit_text(disk.text, old_string, new_string, replace_all=replace_all, path=path)
        if isinstance(after, EditRefused):
            expect_refused(result, "Edit", ("validate", after.code, after.name))
            return
        expect_done(result, "Edit")
        self._written(path, after, "edit")

    @rule()
    def new_session(self) -> None:
        """``end`` and ``begin`` again: the files stay, the read-file state starts empty."""
        self.session.restart()
        self.seen.clear()
        self.ranges.clear()

    # -- out-of-band changes ---------------------------------------------------

    @rule(path=st.sampled_from(s.PATHS), text=s.file_texts, move=s.mtime_moves)
    def external_write(self, path: str, text: str, move: str) -> None:
        """Someone else (a user, a linter) rewrites the file."""
        mtime = self.mtimes.fresh(path, move)
        self.session.write_file(path, text.encode("utf-8"), mtime_ns=mtime)
        self.disk[path] = OnDisk(text=text, mtime_ns=mtime)
        self.mtimes.add(path, mtime)

    @rule(path=st.sampled_from(s.PATHS), move=s.mtime_moves, delete=s.rarely)
    def touch(self, path: str, move: str, delete: bool) -> None:
        """``touch`` (a new mtime, the same bytes; an empty file when there was none),
        or ``rm`` with ``delete``."""
        if delete:
            if self.disk.pop(path, None) is not None:
                self.session.path(path).unlink()
            return
        text = self.disk[path].text if path in self.disk else ""
        self.external_write(path, text, move)

    # -- invariants ------------------------------------------------------------

    @invariant()
    def disk_matches_model(self) -> None:
        """Nothing is lost: every file holds exactly what the model says, same mtime."""
        for path in s.PATHS:
            actual = self.session.stat(path)
            disk = self.disk.get(path)
            expected = None if disk is None else (disk.data, disk.mtime_ns)
            assert actual == expected, f"{path}: on disk {actual!r}, model says {expected!r}"


def bind(implementation: Implementation) -> type[FileToolsMachine]:
    """The machine class for one implementation (Hypothesis builds machines from a class)."""
    return type("FileToolsMachine", (FileToolsMachine,), {"implementation": implementation})


def test_read_write_edit_agree_with_the_read_file_state_model(
    implementation: Implementation,
) -> None:
    """Refusals change nothing; stale and unread writes are refused; dedup only on a Read record.

    SPEC: STATE-RECORD-1, STATE-PARTIAL-1, STATE-UPDATE-1, STATE-UPDATE-2, STATE-STALE-1,
    STATE-STALE-2, STATE-SESSION-1, ERR-CODE-1, ERR-CODE-2, READ-FORMAT-1, READ-RANGE-1,
    READ-RANGE-2, READ-EMPTY-1, READ-OFFSET-1, READ-VALIDATE-1, READ-DEDUP-1, READ-DEDUP-3,
    WRITE-VALIDATE-1, WRITE-NEW-1, WRITE-READ-1, WRITE-CONTENT-1, WRITE-STATE-1,
    EDIT-VALIDATE-1, EDIT-READ-1, EDIT-CREATE-1, EDIT-MATCH-1, EDIT-QUOTE-1, EDIT-UNIQUE-1,
    EDIT-WS-1, EDIT-EOL-1, EDIT-STATE-1, TEXT-QUOTE-2.
    """
    run_state_machine_as_test(bind(implementation), settings=settings())
