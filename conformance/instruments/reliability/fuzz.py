"""A protocol fuzzer (PROTO-STRESS-1; the rules it checks are PROTO-BAD-1 and PROTO-SEQ-1).

Lines of these families, drawn with a seeded generator, inside a begun
session whose prompt is ``deny``: malformed JSON (truncated, bare values,
invalid UTF-8), a valid request with one field (at any depth) replaced by a
value of a wrong type, deep nesting, lone surrogates and NULs in strings,
raw CRs (as JSON whitespace, which is valid, and inside strings, which is
not), huge lines and huge or path-like ids, and ``message`` requests mixing
one such block with a good one (a failure on a worker thread must not hang
the message).

Each line must get exactly one answer line, a JSON object in valid UTF-8,
echoing the line's integer ``seq`` (or ``null`` when the line has none that
can be read); the adapter must neither exit nor stay silent past the line
timeout. A crash or hang is counted, the adapter restarted, the session
begun again. At the end a fresh session must still Write and Read a file.
"""

from __future__ import annotations

import contextlib
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.errors import AdapterCrash, AdapterFailure, AdapterTimeout
from conformance.instruments.reliability.common import RawAdapter, StressSandbox, tool_use
from conformance.wire.connector import ConnectorOptions

__all__ = ["FuzzFigures", "lines", "run_fuzz"]

_SEQ0: Final = 1_000_000


@dataclass
class FuzzFigures:
    """What the fuzzer found; ``failures`` gives the first examples in words."""

    lines: int = 0
    answered: int = 0
    crashes: int = 0
    hangs: int = 0
    wrong_seq: int = 0
    extra_answers: int = 0
    bad_answers: int = 0
    """Answers that are not one JSON object in valid UTF-8."""
    internal_answers: int = 0
    """``kind: "internal"`` answers: the implementation's own fault, where hostile input
    must get a coded error (PROTO-INTERNAL-1, PROTO-BAD-1)."""
    by_family: dict[str, int] = field(default_factory=dict)
    failed_families: dict[str, int] = field(default_factory=dict)
    session_works_after: bool = False
    max_line_bytes: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No crash, hang, wrong or internal answer; the session still works."""
        bad = self.crashes or self.hangs or self.wrong_seq or self.extra_answers
        return not (bad or self.bad_answers or self.internal_answers) and self.session_works_after


@dataclass(frozen=True, slots=True)
class Line:
    """One fuzz line: its bytes, the seq its answer must carry, its family."""

    data: bytes
    seq: int | None
    family: str
    resets: bool = False
    """The line may have begun or ended the session: the harness begins it again after."""


_WRONG: Final[tuple[Any, ...]] = (
    None,
    True,
    0,
    -1,
    2**63,
    10**40,
    1.5,
    "",
    "x",
    "/",
    "../../..",
    [],
    [1, "a"],
    {},
    {"a": None},
)


def _begin(root: str) -> dict[str, Any]:
    session = {
        "root": root,
        "cwd": root,
        "env": {"HOME": f"{root}/home"},
        "home": f"{root}/home",
        "settings": {"userSettings": {"permissions": {"deny": ["Read(/secret/**)"]}}},
        "prompt": "deny",
        "test_tools": False,
        "session_dir": f"{root}/../fuzz-session",
    }
    return {"cmd": "begin", "session": session}


def _templates(root: str) -> list[dict[str, Any]]:
    read = tool_use("Read", {"file_path": f"{root}/a.txt"}, "t-read")
    edit = tool_use(
        "Edit", {"file_path": f"{root}/a.txt", "old_string": "a", "new_string": "b"}, "t-edit"
    )
    write = tool_use("Write", {"file_path": f"{root}/fz.txt", "content": "z\n"}, "t-write")
    bash = tool_use("Bash", {"command": "true", "timeout": 1000}, "t-bash")
    glob = tool_use("Glob", {"pattern": "*", "path": root}, "t-glob")
    grep = tool_use("Grep", {"pattern": "a", "path": root}, "t-grep")
    return [
        {"cmd": "hello", "protocol": 1},
        {"cmd": "tools"},
        {"cmd": "call", "tool_use": read},
        {"cmd": "call", "tool_use": edit},
        {"cmd": "call", "tool_use": write},
        {"cmd": "call", "tool_use": bash},
        {"cmd": "call", "tool_use": glob},
        {"cmd": "call", "tool_use": grep},
        {"cmd": "message", "content": [read, grep]},
        {"cmd": "message", "content": [write, bash, read]},
        _begin(root),
        {"cmd": "end"},
    ]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(copy[path[0]], path[1:], new)
    return copy


def _dump(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=True).encode("ascii")


class _Maker:
    """Draws lines of every family; ``huge`` bounds the size of the largest."""

    def __init__(self, rnd: random.Random, root: str, huge: int) -> None:
        self.rnd = rnd
        self.root = root
        self.huge = huge
        self.templates = _templates(root)
        self.families: list[tuple[str, Callable[[int], Line]]] = [
            ("malformed", self.malformed),
            ("wrong_type", self.wrong_type),
            ("wrong_type", self.wrong_type),
            ("wrong_type", self.wrong_type),
            ("deep", self.deep),
            ("surrogate", self.surrogate),
            ("nul", self.nul),
            ("cr", self.cr),
            ("huge", self.huge_line),
            ("message_mix", self.message_mix),
        ]

    def draw(self, seq: int) -> Line:
        _, make = self.rnd.choice(self.families)
        return make(seq)

    def template(self, seq: int) -> dict[str, Any]:
        return {"seq": seq, **self.rnd.choice(self.templates)}

    def malformed(self, seq: int) -> Line:
        good = _dump(self.template(seq))
        choice = self.rnd.randrange(7)
        if choice == 0:
            data = good[: self.rnd.randrange(1, len(good))]
        elif choice == 1:
            data = self.rnd.choice([b"[]", b"null", b"123", b'"str"', b"{", b"}", b"nul", b"[1,"])
        elif choice == 2:
            data = good + b" trailing"
        elif choice == 3:
            data = bytes(self.rnd.randrange(256) for _ in range(self.rnd.randrange(1, 64)))
            data = data.replace(b"\n", b" ").replace(b"\r", b" ")
        elif choice == 4:
            data = good.replace(b'"cmd"', b'"cmd\xff\xfe"', 1)
        elif choice == 5:
            data = good.replace(b"{", b"{'", 1)
        else:
            data = b"{" + b'"seq": 1, ' * 3 + b"}"
        return Line(data, None, "malformed")

    def wrong_type(self, seq: int) -> Line:
        body = self.template(seq)
        paths = [p for p in _paths(body) if p and p != ("seq",)]
        path = self.rnd.choice(paths)
        resets = body["cmd"] in ("begin", "end")
        return Line(_dump(_replace(body, path, self.rnd.choice(_WRONG))), seq, "wrong_type", resets)

    def deep(self, seq: int) -> Line:
        depth = self.rnd.choice([100, 1000, 5000, 50000])
        if self.rnd.random() < 0.5:  # the whole line, before any seq can be read
            return Line(b"[" * depth + b"]" * depth, None, "deep")
        body = self.template(seq)
        nested = ("[" * depth + "]" * depth).encode()
        text = _dump(body)[:-1] + b', "extra": ' + nested + b"}"
        if b'"input": {' in text:  # inside a tool input, where the engine looks
            text = _dump(body).replace(b'"input": {', b'"input": {"deep": ' + nested + b", ", 1)
        return Line(text, seq, "deep")

    def _string_field(self, seq: int, value: str) -> bytes:
        body = self.template(seq)
        strings = [p for p in _paths(body) if p and isinstance(_get(body, p), str)]
        strings = [p for p in strings if p not in (("cmd",),)] or [("cmd",)]
        path = self.rnd.choice(strings)
        return _dump(_replace(body, path, value))

    def surrogate(self, seq: int) -> Line:
        lone = self.rnd.choice(["\ud800", "\udbff", "\udc80", "\udcff", "\udfff"])
        value = self.rnd.choice([lone, f"a{lone}b", f"{self.root}/x{lone}.txt"])
        return Line(self._string_field(seq, value), seq, "surrogate")

    def nul(self, seq: int) -> Line:
        value = self.rnd.choice(["\0", f"{self.root}/a\0b.txt", "toolu_\0", "a\0" * 50])
        return Line(self._string_field(seq, value), seq, "nul")

    def cr(self, seq: int) -> Line:
        good = _dump(self.template(seq))
        if self.rnd.random() < 0.5:  # JSON whitespace: one valid request
            return Line(good.replace(b", ", b",\r ", 2), seq, "cr")
        at = good.rfind(b'"', 0, len(good) - 2)  # a raw CR inside a string: invalid JSON
        return Line(good[:at] + b"\r" + good[at:], None, "cr")

    def huge_line(self, seq: int) -> Line:
        size = self.rnd.choice([300, 4096, 70_000, self.huge])
        choice = self.rnd.randrange(3)
        if choice == 0:  # a huge id
            use = tool_use("Read", {"file_path": f"{self.root}/a.txt"}, "i" * size)
            return Line(_dump({"seq": seq, "cmd": "call", "tool_use": use}), seq, "huge")
        if choice == 1:  # a huge Write
            use = tool_use(
                "Write", {"file_path": f"{self.root}/huge.txt", "content": "h" * size}, "t-huge"
            )
            return Line(_dump({"seq": seq, "cmd": "call", "tool_use": use}), seq, "huge")
        return Line(_dump({"seq": seq, "cmd": "tools", "pad": "p" * size}), seq, "huge")

    def message_mix(self, seq: int) -> Line:
        good = tool_use("Read", {"file_path": f"{self.root}/a.txt"}, "m-good")
        bad_id = self.rnd.choice(["i" * 300, "a\0b", "x\ud800", "../../m", "/" + "d/" * 50])
        big: dict[str, Any] = {"pattern": "match", "path": f"{self.root}/big.txt"}
        big |= {"output_mode": "content", "head_limit": 5000}
        bad = tool_use(  # a large Grep result is persisted under its id
            self.rnd.choice(["Read", "Bash", "Grep", "Write", "Grep"]),
            self.rnd.choice(
                [{"file_path": f"{self.root}/a.txt"}, {"command": "true"}, {}, big, big]
            ),
            bad_id,
        )
        content = [good, bad] if self.rnd.random() < 0.5 else [bad, good, good]
        return Line(_dump({"seq": seq, "cmd": "message", "content": content}), seq, "message_mix")


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def lines(count: int, seed: int, root: str, huge: int = 1_000_000) -> list[Line]:
    """The ``count`` fuzz lines of ``seed`` (their seqs count up from 1,000,000)."""
    maker = _Maker(random.Random(seed), root, huge)
    return [maker.draw(_SEQ0 + i) for i in range(count)]


def run_fuzz(
    impl: str,
    options: ConnectorOptions,
    *,
    count: int,
    seed: int,
    line_timeout: float = 10.0,
    huge: int = 1_000_000,
) -> FuzzFigures:
    """Send ``count`` fuzz lines of ``seed`` to ``impl``; see the module docstring."""
    figures = FuzzFigures()
    box = StressSandbox()
    (box.root / "a.txt").write_text("a\nb\n")
    (box.root / "big.txt").write_text("".join(f"a match on line {i}\n" for i in range(5000)))
    adapter = RawAdapter(impl, options)
    started = time.perf_counter()
    try:
        _fresh(adapter, box)
        for line in lines(count, seed, str(box.root), huge):
            figures.lines += 1
            figures.by_family[line.family] = figures.by_family.get(line.family, 0) + 1
            figures.max_line_bytes = max(figures.max_line_bytes, len(line.data))
            problem = _one(adapter, line, line_timeout, figures)
            if line.resets and not problem:
                _begin_checked(adapter, box)
            if problem:
                figures.failed_families[line.family] = (
                    figures.failed_families.get(line.family, 0) + 1
                )
                if len(figures.failures) < 20:
                    figures.failures.append(f"{line.family}: {problem}: {line.data[:160]!r}")
                if not adapter.alive() or problem.startswith(("crash", "hang")):
                    _fresh(adapter, box)
                elif not problem.startswith("more than one"):
                    figures.extra_answers += _resync(adapter, line_timeout)
        if adapter.alive():  # back in step first: stray answers were counted already
            figures.extra_answers += _resync(adapter, line_timeout)
        why = _works(adapter, box)
        figures.session_works_after = not why
        if why:
            figures.failures.append(f"after the fuzz lines: {why}")
    except AdapterFailure as exc:
        figures.failures.append(f"the adapter could not be (re)started: {exc}")
    finally:
        figures.seconds = time.perf_counter() - started
        adapter.close()
        box.cleanup()
    return figures


def _fresh(adapter: RawAdapter, box: StressSandbox) -> None:
    adapter.restart()
    _begin_checked(adapter, box)


HOOKED: Final = {
    "hooks": {
        "PreToolUse": [
            {"matcher": "*", "hooks": [{"type": "command", "command": "cat >/dev/null"}]}
        ]
    }
}
"""A PreToolUse hook on every call, so every hostile input also reaches a hook's stdin."""


def _begin_checked(adapter: RawAdapter, box: StressSandbox) -> None:
    """A fresh session, with a hook on every call when the implementation has hooks."""
    hello = adapter.hello
    hooked = hello is not None and "hooks" in hello.features
    box.begin(adapter, prompt="deny", settings=HOOKED if hooked else None)


def _one(adapter: RawAdapter, line: Line, timeout: float, figures: FuzzFigures) -> str:
    """Send one line and judge its answer; the problem in words, or ``""``."""
    try:
        adapter.send_line(line.data)
        answer = adapter.read_line(timeout)
    except AdapterTimeout:
        figures.hangs += 1
        return f"hang: no answer within {timeout:g} s"
    except AdapterCrash as exc:
        figures.crashes += 1
        return f"crash: {exc}"
    figures.answered += 1
    try:
        parsed = json.loads(answer.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        figures.bad_answers += 1
        return f"bad answer ({type(exc).__name__}): {answer[:120]!r}"
    if not isinstance(parsed, dict):
        figures.bad_answers += 1
        return f"bad answer (not an object): {answer[:120]!r}"
    got = parsed.get("seq")
    want_ok = got == line.seq if line.seq is not None else got is None or isinstance(got, int)
    if not want_ok:
        figures.wrong_seq += 1
        return f"answer has seq {got!r}, expected {line.seq!r}"
    error = parsed.get("error")
    if isinstance(error, dict) and error.get("kind") == "internal":
        figures.internal_answers += 1
        return f"internal answer: {str(error.get('message'))[:160]}"
    # An answer without a seq could be one of several (a raw CR splitting the
    # line): a sentinel shows whether more answers come before its own.
    extra = _resync(adapter, timeout) if line.seq is None else len(adapter.drain(0.0))
    if extra:
        figures.extra_answers += extra
        return f"more than one answer to one line ({got!r} first)"
    return ""


_SENTINEL: Final = 999_999


def _resync(adapter: RawAdapter, timeout: float) -> int:
    """A ``tools`` sentinel; the answers that come before its own, counted.

    After a wrong answer this brings the stream back in step (a line
    answered twice is then counted once); after an answer without a seq it
    shows whether the line was answered more than once.
    """
    extra = 0
    try:
        adapter.send_line(_dump({"seq": _SENTINEL, "cmd": "tools"}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = adapter.read_line(max(0.01, deadline - time.monotonic()))
            with contextlib.suppress(UnicodeDecodeError, ValueError, AttributeError):
                if json.loads(answer.decode("utf-8")).get("seq") == _SENTINEL:
                    return extra
            extra += 1
    except AdapterFailure:
        pass
    return extra


def _works(adapter: RawAdapter, box: StressSandbox) -> str:
    """A fresh session Writes then Reads a file: ``""`` when it can, else why not."""
    try:
        if not adapter.alive():
            adapter.restart()
        box.begin(adapter, prompt="allow")
        path = str(box.root / "after.txt")
        wrote = adapter.call("Write", {"file_path": path, "content": "after fuzz\n"})
        read = adapter.call("Read", {"file_path": path})
    except AdapterFailure as exc:
        return f"the session failed: {exc}"
    if wrote.get("error") or read.get("error"):
        return f"refused: {wrote.get('error') or read.get('error')}"
    if "after fuzz" not in json.dumps(read["tool_result"]["content"]):
        return "the Read does not show what the Write wrote"
    return ""
