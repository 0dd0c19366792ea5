"""What each implementation's model receives from its tools: ``toolconf bench --costs``.

Three measurements per implementation, over files the bench writes itself,
counted as the model receives them (``session.received_text``: an agent's
result exactly as its next model request carried it), in UTF-8 bytes and
cl100k_base tokens (the reference's counter, for every implementation):

- ``files``: one Read of each of ``FILES`` (256 KiB, 2 MiB and 50 MiB of
  source code, a minified file on one line, a binary file), given the path
  alone as a model asks, so each implementation applies its own defaults;
- ``reread``: a Read of a 16 KiB file, an Edit of one of its lines, and a
  Read of it again (READ-DEDUP-3: the model must be shown the change);
- ``trace``: a ``trace.Trace`` replayed with the implementation as it comes
  (dedup on where it has one), its Reads and Edits in order.

Times are recorded only as ratios: each call's against a tiny Read's in the
same session (the median of ``BASELINE_READS`` Reads of 1 KiB files, taken
after one untimed Read that starts the implementation: an agent starts at
its session's first call, and that start is not its tools' cost).

Dedup's saving is read from the run itself: a stub stands in for the answer
the same range got the last time it was answered in full (the stub says the
file is unchanged since), so the saving is those answers' tokens less the
stubs'. Against the reference this equals the difference between replays
with dedup on and off.

A tool the implementation lacks is not applicable (its ``unsupported``
answer, PROTO-UNSUPPORTED-1), never emulated through another tool; a
measurement it cannot finish (a timeout, a crash) says so, and the next one
starts in a fresh session.
"""

from __future__ import annotations

import datetime
import os
import random
import statistics
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from conformance.errors import AdapterFailure, ConformanceError
from conformance.instruments.bench import corpus
from conformance.instruments.bench.run import TraceSummary, machine
from conformance.instruments.bench.session import (
    ENCODING_NAME,
    Answer,
    BenchSession,
    NotApplicable,
    count_tokens,
)
from conformance.instruments.bench.trace import EditStep, Trace
from conformance.peers.registry import connect
from conformance.wire.connector import ConnectorOptions

TINY_SIZE: Final = 1024
BASELINE_READS: Final = 3  # timed tiny Reads after the untimed one
EDIT_SIZE: Final = 16 * 1024
BEGINS_CHARS: Final = 200  # how much of each answer's text the report keeps
REPEATED_CHUNK: Final = 2 << 20  # the largest text file repeats this much source


@dataclass(frozen=True, slots=True)
class FileSpec:
    """One file of ``files``: ``kind`` is ``text`` (source code), ``minified`` or ``binary``."""

    name: str
    label: str
    size: int
    kind: str


FILES: Final[tuple[FileSpec, ...]] = (
    FileSpec("text-256k.py", "256 KiB text", 256 << 10, "text"),
    FileSpec("text-2m.py", "2 MiB text", 2 << 20, "text"),
    FileSpec("text-50m.py", "50 MiB text", 50 << 20, "text"),
    FileSpec("bundle.min.js", "256 KiB minified (one line)", 256 << 10, "minified"),
    FileSpec("blob.bin", "64 KiB binary", 64 << 10, "binary"),
)


def file_bytes(spec: FileSpec) -> bytes:
    """The content of ``spec``'s file, the same on every run.

    Text is the corpus's source code, so the three text files share their
    first lines (a shorter one is a prefix of a longer one) and an
    implementation that shows the head of a file shows the same head of each;
    past ``REPEATED_CHUNK`` the text repeats. The minified file is the
    corpus's minified JavaScript with its few line breaks made spaces; the
    binary file is pseudo-random bytes.
    """
    if spec.kind == "binary":
        return random.Random(0).randbytes(spec.size)
    if spec.kind == "minified":
        return corpus.generate("minified_js", spec.size).replace("\n", " ").encode("utf-8")
    chunk = corpus.generate("source", min(spec.size, REPEATED_CHUNK)).encode("utf-8")
    whole = chunk * -(-spec.size // len(chunk))
    return whole[: spec.size]


def text_tokens(data: bytes) -> int | None:
    """The file's own cl100k_base tokens, had it been read whole; None when it is not UTF-8."""
    try:
        return count_tokens(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True, slots=True)
class Received:
    """One answer as the model received it, and its time against a tiny Read's."""

    bytes: int
    tokens: int
    is_error: bool
    dedup: bool
    ratio: float | None  # None: no tiny Read to compare with
    begins: str  # the text's first BEGINS_CHARS characters

    @classmethod
    def of(cls, answer: Answer, baseline: float | None) -> Received:
        return cls(
            bytes=answer.bytes,
            tokens=answer.tokens,
            is_error=answer.is_error,
            dedup=answer.dedup,
            ratio=answer.seconds / baseline if baseline else None,
            begins=answer.text[:BEGINS_CHARS],
        )


@dataclass(frozen=True, slots=True)
class FileRead:
    """The Read of one of ``FILES``; ``note`` says why ``answer`` is missing."""

    name: str
    answer: Received | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class RereadAfterEdit:
    """A Read, an Edit of one line, the Read again; ``note`` says why a part is missing."""

    first: Received | None
    edit: Received | None
    reread: Received | None
    note: str | None = None


@dataclass(slots=True)
class TraceCosts:
    """A trace replayed once, as the model received it."""

    reads: int = 0
    stubs: int = 0
    failed_reads: int = 0
    edits: int = 0
    failed_edits: int = 0
    bytes: int = 0
    tokens: int = 0
    saved_bytes: int = 0  # what the stubs' ranges returned last time, less the stubs
    saved_tokens: int = 0
    tokens_by_kind: dict[str, int] = field(default_factory=dict)
    read_ratio: float | None = None  # median Read time against a tiny Read's

    @property
    def saved_share(self) -> float:
        """The share of the tokens the model would have received that dedup saved."""
        whole = self.tokens + self.saved_tokens
        return self.saved_tokens / whole if whole else 0.0


@dataclass(slots=True)
class ImplementationCosts:
    """Everything measured for one implementation; ``notes`` say why a part is missing."""

    label: str
    spec: str
    name: str = "?"
    measured: str = ""
    load_average_1min: float | None = None
    tiny: Received | None = None  # the first timed tiny Read
    files: list[FileRead] = field(default_factory=list)
    reread: RereadAfterEdit | None = None
    trace: TraceCosts | None = None
    notes: dict[str, str] = field(default_factory=dict)
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One of ``FILES`` as written: its size and its own tokens (None for binary)."""

    name: str
    label: str
    size: int
    kind: str
    text_tokens: int | None


@dataclass(slots=True)
class CostsRun:
    """One ``toolconf bench --costs`` run (or several merged): the files, the trace, each result."""

    started: str
    machine: dict[str, object]
    encoding: str
    trace: TraceSummary
    files: list[FileInfo]
    tiny_tokens: int
    edit_tokens: int
    implementations: list[ImplementationCosts]


class _Part:
    """One session of one part: begun, started with an untimed Read, then its baseline taken.

    Leaving it ends the session; after a failure of the implementation it is
    restarted instead (a fresh adapter, and for an agent a fresh process).
    """

    def __init__(self, session: BenchSession, tiny: Sequence[Path]) -> None:
        self.session = session
        self.tiny = tiny
        self.baseline: float | None = None
        self.first_tiny: Answer | None = None

    def __enter__(self) -> _Part:
        self.session.begin()
        self.session.read(self.tiny[0])  # starts an agent: untimed
        answers = [self.session.read(path) for path in self.tiny[1:]]
        self.first_tiny = answers[0]
        self.baseline = statistics.median(answer.seconds for answer in answers)
        return self

    def __exit__(self, kind: object, exc: object, traceback: object) -> None:
        if isinstance(exc, AdapterFailure):
            self.session.connector.restart()
            return
        try:
            self.session.end()
        except AdapterFailure:
            self.session.connector.restart()


def _failure(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True, slots=True)
class _Workspace:
    """One implementation's inputs under its sandbox root."""

    root: Path
    tiny: tuple[Path, ...]
    files: Mapping[str, Path]
    edit: Path


def _workspace(root: Path, contents: Mapping[str, bytes]) -> _Workspace:
    (root / "files").mkdir(parents=True)
    tiny = []
    for index in range(1 + BASELINE_READS):
        path = root / f"tiny-{index}.py"
        path.write_text(corpus.generate("source", TINY_SIZE, seed=10 + index), encoding="utf-8")
        tiny.append(path)
    files = {}
    for spec in FILES:
        path = root / "files" / spec.name
        path.write_bytes(contents[spec.name])
        files[spec.name] = path
    edit = root / "edited.py"
    edit.write_text(corpus.generate("source", EDIT_SIZE, seed=2), encoding="utf-8")
    return _Workspace(root, tuple(tiny), files, edit)


def edit_of(text: str) -> tuple[str, str]:
    """An Edit's strings: the first line found once in ``text``, and it with a comment added.

    Raises:
        ConformanceError: no line of at least 12 ASCII characters occurs once.
    """
    for line in text.split("\n"):
        if len(line.strip()) >= 12 and text.count(line) == 1 and line.isascii():
            return line, f"{line}  # edited by the bench"
    raise ConformanceError("no line of the file occurs exactly once")


_TINY = "the tiny Reads"
_REREAD = "the re-read after an edit"


def _files_and_reread(
    result: ImplementationCosts, session: BenchSession, space: _Workspace
) -> None:
    """One Read of each file, then the re-read after an edit.

    A failure of the implementation costs the call it happened in: the
    session is restarted and the next file is read in the new one.
    """
    todo = list(FILES)
    reread: list[Received | None] = []
    while True:
        current = _TINY
        try:
            with _Part(session, space.tiny) as part:
                if result.tiny is None and part.first_tiny is not None:
                    result.tiny = Received.of(part.first_tiny, part.baseline)
                while todo:
                    current = todo[0].name
                    try:
                        answer = session.read(space.files[current])
                        result.files.append(FileRead(current, Received.of(answer, part.baseline)))
                    except NotApplicable as exc:
                        result.files.append(FileRead(current, None, f"not applicable: {exc}"))
                    todo.pop(0)
                current = _REREAD
                try:
                    _reread(session, space.edit, part.baseline, reread)
                    result.reread = _partial(reread, None)
                except NotApplicable as exc:
                    result.reread = _partial(reread, f"not applicable: {exc}")
            return
        except NotApplicable as exc:  # a tiny Read: nothing can be measured
            reason = f"not applicable: {exc}"
            result.files += [FileRead(spec.name, None, reason) for spec in todo]
            result.reread = RereadAfterEdit(None, None, None, reason)
            return
        except AdapterFailure as exc:
            if current == _REREAD:
                result.reread = _partial(reread, _failure(exc))
                return
            if current == _TINY:
                result.files += [FileRead(spec.name, None, _failure(exc)) for spec in todo]
                result.reread = RereadAfterEdit(None, None, None, _failure(exc))
                return
            result.files.append(FileRead(current, None, _failure(exc)))
            todo.pop(0)


def _partial(parts: Sequence[Received | None], note: str | None) -> RereadAfterEdit:
    first, edit, reread = [*parts, None, None, None][:3]
    return RereadAfterEdit(first, edit, reread, note)


def _reread(
    session: BenchSession, path: Path, baseline: float | None, parts: list[Received | None]
) -> None:
    """Read ``path``, Edit one line, Read it again: each answer appended to ``parts``."""
    old, new = edit_of(path.read_text(encoding="utf-8"))
    parts.append(Received.of(session.read(path), baseline))
    edit = session.call("Edit", {"file_path": str(path), "old_string": old, "new_string": new})
    parts.append(Received.of(edit, baseline))
    parts.append(Received.of(session.read(path), baseline))


def trace_costs(
    session: BenchSession, trace: Trace, tree: Path, baseline: float | None
) -> TraceCosts:
    """Replay ``trace`` over ``tree`` (already materialized) in the current session.

    Raises:
        NotApplicable: a call the implementation cannot be given.
    """
    costs = TraceCosts()
    last: dict[tuple[str, int | None, int | None], tuple[int, int]] = {}  # bytes, tokens
    read_seconds: list[float] = []
    for step in trace.steps:
        target = tree / step.path
        if isinstance(step, EditStep):
            edit = session.call(
                "Edit",
                {
                    "file_path": str(target),
                    "old_string": step.old_string,
                    "new_string": step.new_string,
                },
            )
            costs.edits += 1
            costs.failed_edits += edit.is_error
            continue
        ranges = {
            name: value
            for name, value in (("offset", step.offset), ("limit", step.limit))
            if value is not None
        }
        answer = session.read(target, **ranges)
        size, tokens = answer.bytes, answer.tokens
        key = (step.path, step.offset, step.limit)
        costs.reads += 1
        costs.bytes += size
        costs.tokens += tokens
        costs.tokens_by_kind[step.kind] = costs.tokens_by_kind.get(step.kind, 0) + tokens
        read_seconds.append(answer.seconds)
        if answer.dedup:
            costs.stubs += 1
            if key in last:
                costs.saved_bytes += last[key][0] - size
                costs.saved_tokens += last[key][1] - tokens
        elif answer.is_error:
            costs.failed_reads += 1
        else:
            last[key] = (size, tokens)
    if baseline and read_seconds:
        costs.read_ratio = statistics.median(read_seconds) / baseline
    return costs


def _trace(
    result: ImplementationCosts, session: BenchSession, space: _Workspace, trace: Trace
) -> None:
    tree = space.root / "trace"
    trace.materialize(tree)
    try:
        with _Part(session, space.tiny) as part:
            result.trace = trace_costs(session, trace, tree, part.baseline)
    except NotApplicable as exc:
        result.notes["trace"] = f"not applicable: {exc}"
    except AdapterFailure as exc:
        result.notes["trace"] = _failure(exc)


def measure_costs(
    label: str,
    spec: str,
    *,
    trace: Trace,
    contents: Mapping[str, bytes],
    timeout: float = 120.0,
    say: Callable[[str], None] = print,
) -> ImplementationCosts:
    """Every measurement of one implementation; never raises for the implementation's faults."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result = ImplementationCosts(
        label=label,
        spec=spec,
        measured=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        load_average_1min=load,
    )
    connector = connect(spec, ConnectorOptions(timeout=timeout, hello_timeout=max(timeout, 30.0)))
    try:
        hello = connector.start()
        result.name = hello.name
        with tempfile.TemporaryDirectory(prefix="toolconf-costs-") as base:
            space = _workspace(Path(base, "root"), contents)
            home, session_dir = Path(base, "home"), Path(base, "session")
            home.mkdir()
            session_dir.mkdir()
            session = BenchSession(
                connector, space.root, session_dir, home=home, unreported=hello.unreported
            )
            say("  one Read of each file, then a re-read after an edit")
            _files_and_reread(result, session, space)
            if result.tiny is None:
                result.notes["trace"] = result.files[0].note or "no tiny Read answered"
            else:
                say(f"  trace replay: {len(trace.reads)} Reads")
                _trace(result, session, space, trace)
    except AdapterFailure as exc:
        result.failure = _failure(exc)
        if stderr := connector.take_stderr().strip():
            result.failure += f"\n{stderr[-2000:]}"
        say(f"  failed: {result.failure}")
    finally:
        connector.close()
    return result


def materials() -> tuple[dict[str, bytes], list[FileInfo]]:
    """The files' contents, by name, and what the report says of each."""
    contents = {spec.name: file_bytes(spec) for spec in FILES}
    infos = [
        FileInfo(spec.name, spec.label, spec.size, spec.kind, text_tokens(contents[spec.name]))
        for spec in FILES
    ]
    return contents, infos


def costs(
    specs: Sequence[tuple[str, str]],
    trace: Trace,
    *,
    timeout: float = 120.0,
    say: Callable[[str], None] = print,
) -> CostsRun:
    """Measure each ``(label, connector spec)`` in turn, one at a time."""
    contents, infos = materials()
    run = CostsRun(
        started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        machine=machine(),
        encoding=ENCODING_NAME,
        trace=TraceSummary.of(trace),
        files=infos,
        tiny_tokens=count_tokens(corpus.generate("source", TINY_SIZE, seed=11)),
        edit_tokens=count_tokens(corpus.generate("source", EDIT_SIZE, seed=2)),
        implementations=[],
    )
    for label, spec in specs:
        say(f"bench --costs: measuring {label} ({spec})")
        run.implementations.append(
            measure_costs(label, spec, trace=trace, contents=contents, timeout=timeout, say=say)
        )
    return run


def merged(runs: Sequence[CostsRun]) -> CostsRun:
    """Runs of the same files and trace as one: a later run's label replaces an earlier one's.

    Implementations keep the order in which their labels first appear.

    Raises:
        ConformanceError: no run, or runs over different files or traces.
    """
    if not runs:
        raise ConformanceError("no costs run to merge")
    first = runs[0]
    by_label: dict[str, ImplementationCosts] = {}
    for run in runs:
        if run.trace != first.trace or run.files != first.files:
            raise ConformanceError(
                f"the run of {run.started} measured other files or another trace "
                f"than the run of {first.started}"
            )
        for impl in run.implementations:
            by_label[impl.label] = impl  # in the place of the label's first run
    return CostsRun(
        started=min(run.started for run in runs),
        machine=first.machine,
        encoding=first.encoding,
        trace=first.trace,
        files=first.files,
        tiny_tokens=first.tiny_tokens,
        edit_tokens=first.edit_tokens,
        implementations=list(by_label.values()),
    )
