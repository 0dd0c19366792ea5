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

Times are recorded only as ratios, each against a tiny Read's (of a 1 KiB
file) in the same session at that point: the call's against the tiny Read
made just before it, and the trace's median Read against the median of the
tiny Reads made every ``TRACE_TINY_EVERY`` calls. ``WARMUP_READS`` untimed
tiny Reads open each session, the first of which starts the implementation
(an agent starts at its session's first call: that start is not its tools'
cost). A tiny Read next to the call keeps in the comparison what the moment
adds to every call: a conversation grown long, an agent's background work.

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
from conformance.wire.connector import Connector, ConnectorOptions

TINY_SIZE: Final = 1024
WARMUP_READS: Final = 2  # untimed tiny Reads: the first starts an agent
TINY_FILES: Final = 40  # distinct tiny files, so that a dedup stub never answers one
TRACE_TINY_EVERY: Final = 10
EDIT_SIZE: Final = 16 * 1024
TINY_SEED: Final = 10  # corpus seeds: the tiny files take 10, 11, ...
EDIT_SEED: Final = 2
BEGINS_CHARS: Final = 200  # how much of each answer's text the report keeps
KEPT_REFUSALS: Final = 3
SHOWN_ROOT: Final = "ROOT"  # the sandbox root, in the texts the report shows
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
    ends: str  # and its last ones, where the text is longer

    @classmethod
    def of(cls, answer: Answer, baseline: float | None, root: Path | None = None) -> Received:
        """``answer`` sized, timed against ``baseline``; ``root`` shown as ``ROOT`` in its text."""
        text = answer.text if root is None else answer.text.replace(str(root), SHOWN_ROOT)
        return cls(
            bytes=answer.bytes,
            tokens=answer.tokens,
            is_error=answer.is_error,
            dedup=answer.dedup,
            ratio=answer.seconds / baseline if baseline else None,
            begins=text[:BEGINS_CHARS],
            ends=text[BEGINS_CHARS:][-BEGINS_CHARS:],
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
    refusals: list[str] = field(default_factory=list)
    """The first ``KEPT_REFUSALS`` failed calls: the tool and the text's beginning."""

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
    """One session of one part: begun and warmed up by untimed tiny Reads.

    ``tiny()`` then reads the next tiny file and gives its time. Leaving the
    part ends the session; after a failure of the implementation it is
    restarted instead (a fresh adapter, and for an agent a fresh process).
    """

    def __init__(self, session: BenchSession, tiny: Sequence[Path]) -> None:
        self.session = session
        self.files = tiny
        self.used = 0
        self.first_tiny: Answer | None = None

    def __enter__(self) -> _Part:
        self.session.begin()
        for _ in range(WARMUP_READS):  # the first starts an agent: untimed
            self._next()
        return self

    def _next(self) -> Answer:
        path = self.files[self.used % len(self.files)]
        self.used += 1
        return self.session.read(path)

    def tiny(self) -> float:
        """The time of a Read of a tiny file not read yet in this session."""
        answer = self._next()
        if self.first_tiny is None:
            self.first_tiny = answer
        return answer.seconds

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
    specs: tuple[FileSpec, ...]


@dataclass(frozen=True, slots=True)
class Materials:
    """The files every implementation reads: their specs, contents and what the report says."""

    specs: tuple[FileSpec, ...]
    contents: Mapping[str, bytes]
    infos: tuple[FileInfo, ...]


def materials(specs: Sequence[FileSpec] = FILES) -> Materials:
    """The files of ``specs``, made once for every implementation of a run."""
    contents = {spec.name: file_bytes(spec) for spec in specs}
    infos = tuple(
        FileInfo(spec.name, spec.label, spec.size, spec.kind, text_tokens(contents[spec.name]))
        for spec in specs
    )
    return Materials(tuple(specs), contents, infos)


def _workspace(root: Path, made: Materials) -> _Workspace:
    (root / "files").mkdir(parents=True)
    tiny = []
    for index in range(TINY_FILES):
        path = root / f"tiny-{index}.py"
        text = corpus.generate("source", TINY_SIZE, seed=TINY_SEED + index)
        path.write_text(text, encoding="utf-8")
        tiny.append(path)
    files = {}
    for spec in made.specs:
        path = root / "files" / spec.name
        path.write_bytes(made.contents[spec.name])
        files[spec.name] = path
    edit = root / "edited.py"
    edit.write_text(corpus.generate("source", EDIT_SIZE, seed=EDIT_SEED), encoding="utf-8")
    return _Workspace(root, tuple(tiny), files, edit, made.specs)


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
    todo = list(space.specs)
    reread: list[Received | None] = []
    while True:
        current = _TINY
        try:
            with _Part(session, space.tiny) as part:
                before = part.tiny()
                if result.tiny is None and part.first_tiny is not None:
                    result.tiny = Received.of(part.first_tiny, before, space.root)
                while todo:
                    current = todo[0].name
                    try:
                        before = part.tiny()
                        answer = session.read(space.files[current])
                        received = Received.of(answer, before, space.root)
                        result.files.append(FileRead(current, received))
                    except NotApplicable as exc:
                        result.files.append(FileRead(current, None, f"not applicable: {exc}"))
                    todo.pop(0)
                current = _REREAD
                try:
                    _reread(session, part, space.edit, reread)
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


def _reread(session: BenchSession, part: _Part, path: Path, parts: list[Received | None]) -> None:
    """Read ``path``, Edit one line, Read it again: each answer appended to ``parts``."""
    old, new = edit_of(path.read_text(encoding="utf-8"))
    before = part.tiny()
    parts.append(Received.of(session.read(path), before, session.root))
    before = part.tiny()
    edit = session.call("Edit", {"file_path": str(path), "old_string": old, "new_string": new})
    parts.append(Received.of(edit, before, session.root))
    before = part.tiny()
    parts.append(Received.of(session.read(path), before, session.root))


def trace_costs(
    session: BenchSession, trace: Trace, tree: Path, tiny: Callable[[], float] | None
) -> TraceCosts:
    """Replay ``trace`` over ``tree`` (already materialized) in the current session.

    Raises:
        NotApplicable: a call the implementation cannot be given.
    """
    costs = TraceCosts()
    last: dict[tuple[str, int | None, int | None], tuple[int, int]] = {}  # bytes, tokens
    read_seconds: list[float] = []
    tinies: list[float] = []
    for number, step in enumerate(trace.steps):
        if tiny is not None and number % TRACE_TINY_EVERY == 0:
            tinies.append(tiny())
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
            if edit.is_error:
                costs.failed_edits += 1
                _keep(costs.refusals, "Edit", edit, session.root)
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
            _keep(costs.refusals, "Read", answer, session.root)
        else:
            last[key] = (size, tokens)
    if tinies and read_seconds:
        costs.read_ratio = statistics.median(read_seconds) / statistics.median(tinies)
    return costs


def _keep(refusals: list[str], tool: str, answer: Answer, root: Path) -> None:
    if len(refusals) < KEPT_REFUSALS:
        text = answer.text[: BEGINS_CHARS + len(str(root))].replace(str(root), SHOWN_ROOT)
        refusals.append(f"{tool}: {text[:BEGINS_CHARS]}")


def _trace(
    result: ImplementationCosts, session: BenchSession, space: _Workspace, trace: Trace
) -> None:
    tree = space.root / "trace"
    trace.materialize(tree)
    try:
        with _Part(session, space.tiny) as part:
            result.trace = trace_costs(session, trace, tree, part.tiny)
    except NotApplicable as exc:
        result.notes["trace"] = f"not applicable: {exc}"
    except AdapterFailure as exc:
        result.notes["trace"] = _failure(exc)


def measure_costs(
    label: str,
    connector: Connector,
    *,
    spec: str,
    trace: Trace,
    made: Materials,
    say: Callable[[str], None] = print,
) -> ImplementationCosts:
    """Every measurement of one implementation through ``connector`` (closed at the end).

    ``spec`` is how the report names the connector. Never raises for the
    implementation's faults: they are in the result.
    """
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result = ImplementationCosts(
        label=label,
        spec=spec,
        measured=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        load_average_1min=load,
    )
    try:
        hello = connector.start()
        result.name = hello.name
        with tempfile.TemporaryDirectory(prefix="toolconf-costs-") as base:
            space = _workspace(Path(base, "root"), made)
            home, session_dir = Path(base, "home"), Path(base, "session")
            home.mkdir()
            session_dir.mkdir()
            session = BenchSession(
                connector, space.root, session_dir, home=home, unreported=hello.unreported
            )
            say("  one Read of each file, then a re-read after an edit")
            _files_and_reread(result, session, space)
            if result.tiny is None:
                first = next((read.note for read in result.files if read.note), None)
                result.notes["trace"] = first or "no tiny Read answered"
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


def costs(
    specs: Sequence[tuple[str, str]],
    trace: Trace,
    *,
    files: Sequence[FileSpec] = FILES,
    timeout: float = 120.0,
    say: Callable[[str], None] = print,
) -> CostsRun:
    """Measure each ``(label, connector spec)`` in turn, one at a time."""
    made = materials(files)
    run = CostsRun(
        started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        machine=machine(),
        encoding=ENCODING_NAME,
        trace=TraceSummary.of(trace),
        files=list(made.infos),
        tiny_tokens=count_tokens(
            corpus.generate("source", TINY_SIZE, seed=TINY_SEED + WARMUP_READS)
        ),
        edit_tokens=count_tokens(corpus.generate("source", EDIT_SIZE, seed=EDIT_SEED)),
        implementations=[],
    )
    options = ConnectorOptions(timeout=timeout, hello_timeout=max(timeout, 30.0))
    for label, spec in specs:
        say(f"bench --costs: measuring {label} ({spec})")
        connector = connect(spec, options)
        run.implementations.append(
            measure_costs(label, connector, spec=spec, trace=trace, made=made, say=say)
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
