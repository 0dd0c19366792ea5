"""The exceptions of the conformance runner, in two families.

``ScenarioError`` and its subclass ``ScenarioLoadError`` are problems of the
suite itself (a malformed file, an fs step that cannot be carried out): the
scenario is reported as ``error``. ``AdapterFailure`` and its subclasses are
failures of the implementation under test at the protocol level (it crashed,
hung, or broke the wire contract): the scenario is reported as ``crash``,
``timeout`` or ``error``, and the connection is restarted before the next one.
``ImplementationUnavailable`` is neither: the implementation cannot be
installed or run on this machine at all, so the run ends with its message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

__all__ = [
    "AdapterCrash",
    "AdapterError",
    "AdapterFailure",
    "AdapterInternalError",
    "AdapterTimeout",
    "AdapterUnsupported",
    "ConformanceError",
    "ImplementationUnavailable",
    "MissingExtra",
    "Problem",
    "ProtocolError",
    "ScenarioError",
    "ScenarioLoadError",
    "SchemaViolation",
    "VersionMismatch",
]


class ConformanceError(Exception):
    """Root of every exception the runner raises on purpose."""


class ImplementationUnavailable(ConformanceError):
    """The implementation cannot be installed or run on this machine (no node, no npm, no
    registry, a missing platform package or program).

    No scenario can run, so the run ends; the message is one line saying what is
    missing and how to fix it.
    """


class MissingExtra(ConformanceError):
    """A part of the package needs an optional dependency that is not installed.

    The message names the part, the extra and the pip command that installs it.
    """

    EXTRAS: ClassVar[dict[str, str]] = {
        "mcp": "mcp",
        "anyio": "mcp",
        "uvicorn": "mcp",
        "starlette": "mcp",
        "pytest": "pytest",
        "hypothesis": "properties",
        "pytest_benchmark": "bench",
        "selenium": "test",
    }
    """Top-level module -> the extra of pyproject.toml that installs it."""

    def __init__(self, what: str, module: str) -> None:
        self.extra = self.extra_of(module) or "test"
        super().__init__(
            f"{what} needs the {self.extra} extra: pip install 'toolsys-reference[{self.extra}]' "
            f"(No module named {module!r})"
        )

    @classmethod
    def extra_of(cls, module: str | None) -> str | None:
        """The extra that installs ``module`` (or its top-level package), if one does."""
        return cls.EXTRAS.get((module or "").partition(".")[0])


@dataclass(frozen=True, slots=True)
class Problem:
    """One located complaint about a file: what `lint` and the loader report.

    ``line`` is 1-based, or None when the problem concerns the file as a whole;
    ``field`` is a dotted path into the document such as ``steps[2].expect``.
    """

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class ScenarioError(ConformanceError):
    """The scenario (not the implementation) is at fault; reported as ``error``."""


class ScenarioLoadError(ScenarioError):
    """A scenario file failed to parse or validate; carries every problem found."""

    def __init__(self, path: Path | str, problems: list[Problem]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class AdapterFailure(ConformanceError):
    """The implementation broke the protocol; the connection must be restarted.

    ``outcome`` is the scenario outcome this failure maps to.
    """

    outcome: ClassVar[str] = "error"
    kind: ClassVar[str] = "protocol"
    restart: ClassVar[bool] = True


class AdapterCrash(AdapterFailure):
    """The adapter exited, closed its stdout, or raised in-process."""

    outcome = "crash"
    kind = "crash"


class AdapterTimeout(AdapterFailure):
    """No response within the per-request timeout."""

    outcome = "timeout"
    kind = "timeout"


class ProtocolError(AdapterFailure):
    """A response that is not one JSON object, has the wrong seq, or the wrong shape."""


class SchemaViolation(ProtocolError):
    """A message that breaks ``schema/protocol-v1.json``; ``path`` is its JSON path (``$.a[0]``)."""

    kind = "schema_violation"

    def __init__(self, what: str, path: str, reason: str) -> None:
        self.what = what
        self.path = path
        self.reason = reason
        super().__init__(f"{what} breaks protocol v1 at {path}: {reason}")


class VersionMismatch(ProtocolError):
    """The adapter's hello announced a protocol this runner does not speak."""

    kind = "version_mismatch"

    def __init__(self, expected: int, got: object) -> None:
        self.expected = expected
        self.got = got
        super().__init__(f"adapter speaks protocol {got!r}, this runner speaks {expected}")


class AdapterError(AdapterFailure):
    """The adapter answered with ``{"error": ...}``: it refused a request it should accept.

    The adapter keeps serving after such an answer, so no restart is needed.
    """

    kind = "adapter_error"
    restart = False

    def __init__(self, message: str, error_kind: str = "bad_request") -> None:
        self.error_kind = error_kind
        """The ``kind`` of the error answer (PROTO-BAD-1: ``bad_request``)."""
        super().__init__(message)


class AdapterUnsupported(AdapterFailure):
    """The adapter answered ``kind: "unsupported"`` (PROTO-UNSUPPORTED-1).

    It cannot be given what the scenario sets up or sends (a settings source
    with no counterpart, say), so the scenario is not applicable; it keeps
    serving.
    """

    outcome = "not_applicable"
    kind = "unsupported"
    restart = False


class AdapterInternalError(AdapterFailure):
    """The adapter answered ``kind: "internal"`` (PROTO-INTERNAL-1): it failed on its own.

    It keeps serving, but what state the failure left behind is unknown, so the
    next scenario gets a fresh instance.
    """

    kind = "internal"
