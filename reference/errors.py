"""The error classes of SPEC.md, one per named error, and their one home.

Four families are kept apart (SPEC 0.4):

* :class:`Refusal` subclasses are raised by a tool's ``validate_input``; the
  dispatch pipeline turns them into stage ``validate`` with the integer code the
  tool's own table gives (``Tool.error_codes``), so one class can carry a
  different code per tool, exactly as the per-tool tables in SPEC.md do.
* :class:`ToolCallError` subclasses are raised inside ``call()``; they end the
  call at stage ``call`` with their ``error_name``.
* :class:`PipelineError` subclasses are never raised: they name the outcomes the
  dispatch pipeline itself produces (an unknown tool, a schema failure, a hook
  block, a permission deny, the two aborts), so that every ``error_name`` in an
  outcome comes from a class here.
* :class:`EngineError` is misuse of the engine by its caller, raised to the
  caller; :class:`BadRequest` is a protocol request the engine cannot serve,
  answered with an error response.

A class's ``error_name`` is its own name (:meth:`ToolSystemError.__init_subclass__`);
only a class whose Python name cannot be the SPEC name sets it:
:class:`NotADirectoryRefusal` (``NotADirectoryError`` is a Python built-in).

The last section holds the internal exceptions of the Grep and Glob engines and
of the MCP schema translation. They are not SPEC errors and stay outside
:class:`ToolSystemError` on purpose: one that escapes a ``call()`` is classified
(DISP-CLASSIFY-1), so its message, which may hold a pattern or a path, never
reaches the model.
"""

from __future__ import annotations

from typing import Any, ClassVar


class ToolSystemError(Exception):
    """Root of every error this package raises on purpose."""

    error_name: ClassVar[str] = "ToolSystemError"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """ERR-CODE-2: the ``error_name`` is the class name unless the class sets its own."""
        super().__init_subclass__(**kwargs)
        if "error_name" not in vars(cls):
            cls.error_name = cls.__name__

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(ToolSystemError):
    """The request cannot be served; the response says why and the engine goes on."""


class EngineError(ToolSystemError):
    """The engine was used wrongly (a bug in the caller, never a tool outcome)."""


# --- validateInput refusals (stage "validate") -----------------------------


class Refusal(ToolSystemError):
    """A validateInput check failed; the tool's table maps the class to a code.

    ``text`` is the key of ``reference.texts.TEXTS`` the model's text is rendered
    through (ERR-CODE-1: wrapped in ``<tool_use_error>``), so a profile whose release
    shows one refusal otherwise names it by that key.
    """

    def __init__(self, message: str, *, text: str = "refusal") -> None:
        super().__init__(message)
        self.text = text


class InvalidPathError(Refusal):
    """FILE-PATH-2: the path contains NUL."""


class UncPathError(Refusal):
    """FILE-PATH-3: a Windows UNC path, refused before any I/O."""


class ReadDeniedError(Refusal):
    pass


class WriteDeniedError(Refusal):
    pass


class EditDeniedError(Refusal):
    pass


class BlockedDevicePathError(Refusal):
    pass


class FileDoesNotExistError(Refusal):
    pass


class NotARegularFileError(Refusal):
    pass


class InvalidPagesError(Refusal):
    pass


class BinaryFileNameError(Refusal):
    """READ-BINARY-1 under a profile whose release tells binary files by their name."""


class FileNotReadError(Refusal):
    pass


class FileModifiedSinceReadError(Refusal):
    pass


class NoChangesError(Refusal):
    pass


class FileAlreadyExistsError(Refusal):
    pass


class NotebookFileError(Refusal):
    pass


class FileTooLargeError(Refusal):
    pass


class UnsupportedEncodingError(Refusal):
    pass


class StringNotFoundError(Refusal):
    pass


class MultipleMatchesError(Refusal):
    pass


class NotebookEditDeniedError(Refusal):
    pass


class NotANotebookError(Refusal):
    pass


class CellTypeRequiredError(Refusal):
    pass


class CellIdRequiredError(Refusal):
    pass


class CellNotFoundError(Refusal):
    """NBEDIT-CELL-1: no cell has the id, nor the index of a ``cell-N`` name."""


class InvalidCommandError(Refusal):
    """BASH-VALIDATE-1 code 2: the command contains NUL."""


class BackgroundTasksDisabledError(Refusal):
    """BASH-VALIDATE-1 code 3: ``run_in_background`` while background tasks are off."""


class PathDoesNotExistError(Refusal):
    """GLOB-VALIDATE-1 / GREP-VALIDATE-1 code 3: nothing exists at ``path``."""


class NotADirectoryRefusal(Refusal):
    """GLOB-VALIDATE-1 code 4 (named apart from the built-in ``NotADirectoryError``)."""

    error_name = "NotADirectoryError"


class TaskNotFoundError(Refusal):
    """BASH-TASKCHECK-1 code 1: no task of this session has the id."""


class TaskNotRunningError(Refusal):
    """BASH-TASKCHECK-1 code 2: TaskStop of a task that is not running."""


# --- errors raised inside call() (stage "call") ----------------------------


class ToolCallError(ToolSystemError):
    """An error a tool's call() raises on purpose, reported by its name."""


class MaxFileReadTokenExceededError(ToolCallError):
    """TOK-GATE-2: thrown, never truncated."""


class MaxFileReadSizeExceededError(ToolCallError):
    """READ-SIZE-1: decided by stat before any byte is read."""


class BinaryFileError(ToolCallError):
    pass


class FileUnexpectedlyModifiedError(ToolCallError):
    """STATE-STALE-2: the critical-section re-check found the file changed."""


class FileLockTimeoutError(ToolCallError):
    """STATE-LOCK-1: another writer held the file's directory lock for too long."""


class CallAbortedError(ToolCallError):
    """Raised by a tool that noticed its abort signal; the reason decides the outcome."""


class FileVanishedError(ToolCallError):
    """The file stopped being a regular file between validateInput and call()."""


class SymlinkWriteError(ToolCallError):
    """WRITE-ATOMIC-1 under a profile whose release does not write through a symbolic link."""


class UndecodableFileWriteError(ToolCallError):
    """WRITE-CONTENT-1 under a profile whose release does not replace a file it cannot decode."""


class OpenedFileDeniedError(ToolCallError):
    """FILE-OPEN-1: what was opened is covered by a deny rule (a link changed after the check)."""


class InvalidNotebookError(Refusal, ToolCallError):
    """Not a JSON object with a ``cells`` list.

    One name, two stages: NotebookEdit refuses it in validateInput
    (NBEDIT-VALIDATE-1 code 10) and Read raises it in call() (NB-PARSE-1), so the
    class is both a refusal and a call error.
    """


class NotebookValidationError(ToolCallError):
    """NBEDIT-WRITE-1: the edited notebook fails the nbformat 4 schema; nothing is written."""


# --- Read of images, PDFs and notebooks (SPEC.md section 16, stage "call") --


class UnsupportedImageFormatError(ToolCallError):
    """IMG-UNSUPPORTED-1: a binary file with a BMP, TIFF, ICO, HEIC or AVIF signature."""


class EmptyImageError(ToolCallError):
    """IMG-DETECT-1 where the session's profile goes by the name: an empty file named like
    an image."""


class CorruptImageError(ToolCallError):
    """IMG-DECODE-1: the image does not decode in full."""


class ImageResizeError(ToolCallError):
    """IMG-DECODE-1: more pixels than Pillow's decompression-bomb limit."""


class ImageTooLargeError(ToolCallError):
    """IMG-BUDGET-1: over the byte budget even as a quality-20 JPEG."""


class InvalidPdfError(ToolCallError):
    """PDF-OPEN-1: the PDF library cannot parse the file."""


class PdfPasswordProtectedError(ToolCallError):
    """PDF-OPEN-1: encrypted, whatever the password."""


class PdfPagesRequiredError(ToolCallError):
    """PDF-REQUIRE-1: more than 10 pages and no ``pages``."""


class PdfPageOutOfRangeError(ToolCallError):
    """PDF-RANGE-1: the range starts past the last page."""


class PdfTooLargeError(ToolCallError):
    """PDF-SIZE-1: the bytes to send exceed 20 MiB."""


class NotebookTooLargeError(ToolCallError):
    """NB-SIZE-1: over 100 MiB, decided by ``stat`` alone."""


class ShellError(ToolCallError):
    """BASH-FAIL-1: the command exited with a failing code."""


class BashTimeoutError(ToolCallError):
    """BASH-TIMEOUT-2: the command was stopped at its timeout."""


class InvalidPatternError(ToolCallError):
    """GREP-ERROR-1: the pattern is not a valid regular expression."""


class UnknownFileTypeError(ToolCallError):
    """GREP-FILES-1: ``type`` names no ripgrep file type."""


class InvalidGlobError(ToolCallError):
    """A ``glob`` ripgrep refuses (unclosed ``[`` or ``{``, a bad range, nested braces).

    SPEC.md names no error for it; this is the reference's name.
    """


class McpToolError(ToolCallError):
    """REG-MCP-1: the server answered with ``isError``; the message is its text."""


class ProbeTimeoutError(ToolCallError):
    """PROTO-PROBE-2: a label in ``await_started`` did not start within ``timeout_ms``."""


class ProbeFailure(ToolCallError):
    """PROTO-PROBE-2: ``fail`` was true; with ``bash_error`` it cascades (SCHED-CASCADE-1)."""


# --- outcomes of the pipeline itself (never raised) ---------------------------


class PipelineError(ToolSystemError):
    """A name the dispatch pipeline reports for an outcome no tool raised."""


class UnknownToolError(PipelineError):
    """DISP-FIND-1: no tool in the pool answers to the name."""


class InputValidationError(PipelineError):
    """DISP-SCHEMA-1: the input does not satisfy the tool's strict schema."""


class HookBlockedError(PipelineError):
    """HOOK-BLOCK-1: a PreToolUse hook blocked the call."""


class PermissionDeniedError(PipelineError):
    """DISP-PERM-1: the permission decision is ``deny``."""


class SiblingErrorAbort(PipelineError):
    """SCHED-CASCADE-2: cancelled because a sibling in its batch failed."""


class UserInterruptAbort(PipelineError):
    """SCHED-INTERRUPT-2: cancelled, or never started, because the user interrupted."""


# --- internal exceptions: not SPEC errors, classified if they escape ----------


class RegexError(ValueError):
    """A pattern ``rg`` would refuse; the message is the diagnostic (GREP-ERROR-1)."""


class GlobSyntaxError(ValueError):
    """A glob that ripgrep refuses (unclosed class or alternation, bad range...)."""


class SearchTimeoutError(ToolCallError):
    """GLOB-TIMEOUT-1, GREP-TIMEOUT-1: a search ran past its time limit and was stopped."""


class RipgrepFailure(Exception):
    """``rg`` could not run or said something this runner does not know (DISP-CLASSIFY-1)."""


class UnsupportedSchemaError(ValueError):
    """A server's input schema uses JSON Schema this engine cannot check strictly."""
