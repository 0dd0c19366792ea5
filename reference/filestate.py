"""The read-file state: what the model has seen, per expanded path (SPEC.md, section 9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Source = Literal["read", "write", "edit"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadRecord:
    """STATE-RECORD-1. ``text`` is the file's full decoded text at the time.

    ``turn`` is the message that made it: a Read's record never dedups a Read
    of the same message (READ-DEDUP-5).
    """

    text: str
    mtime_ns: int
    size: int
    offset: int | None
    limit: int | None
    partial: bool
    source: Source
    turn: int = 0  # READ-DEDUP-5: the message (Session.turn) that made it


class ReadFileState:
    """A map from expanded path to its latest record, safe to share between threads.

    Every method is one dict operation, atomic in CPython (and locked per object
    in free-threaded builds); no method spans two, so none takes a lock. That
    keeps ``get`` off the dedup hit's cost (READ-DEDUP-2).
    """

    def __init__(self) -> None:
        self._records: dict[str, ReadRecord] = {}

    def get(self, path: str) -> ReadRecord | None:
        return self._records.get(path)

    def set(self, path: str, record: ReadRecord) -> None:
        self._records[path] = record

    def __len__(self) -> int:
        return len(self._records)


def modified_since(record: ReadRecord, *, mtime_ns: int) -> bool:
    """STATE-STALE-1, the check of ``validate_input``: the mtime is later than the record's."""
    return mtime_ns > record.mtime_ns


def is_stale(record: ReadRecord, *, mtime_ns: int, text: str | None) -> bool:
    """STATE-STALE-1, the check of ``call()``: mtime later AND text differs.

    ``text`` may be None when the caller has not read the file; it is only
    needed when the mtime is later, so callers read lazily via :func:`needs_text`.
    """
    if not modified_since(record, mtime_ns=mtime_ns):
        return False
    return text != record.text


def needs_text(record: ReadRecord, *, mtime_ns: int) -> bool:
    """Whether deciding staleness in ``call()`` needs the file's current text."""
    return modified_since(record, mtime_ns=mtime_ns)
