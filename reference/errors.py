"""The error classes of SPEC.md, one per named error.

Three families are kept apart (SPEC 0.4):

* :class:`Refusal` subclasses are raised by a tool's ``validate_input``; the
  dispatch pipeline turns them into stage ``validate`` with the integer code the
  tool's own table gives (``Tool.error_codes``), so one class can carry a
  different code per tool, exactly as the per-tool tables in SPEC.md do.
* :class:`ToolCallError` subclasses are raised inside ``call()``; they end the
  call at stage ``call`` with their ``error_name``.
* :class:`EngineError` is misuse of the engine by its caller (not a tool
  outcome), raised to the caller.
"""

from __future__ import annotations

from typing import ClassVar


class ToolSystemError(Exception):
    """Root of every error this package raises on purpose."""

    error_name: ClassVar[str] = "ToolSystemError"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EngineError(ToolSystemError):
    """The engine was used wrongly (a bug in the caller, never a tool outcome)."""

    error_name = "EngineError"


# --- validateInput refusals (stage "validate") -----------------------------


class Refusal(ToolSystemError):
    """A validateInput check failed; the tool's table maps the class to a code."""

    error_name = "Refusal"


class InvalidPathError(Refusal):
    """FILE-PATH-2: the path contains NUL."""

    error_name = "InvalidPathError"


class UncPathError(Refusal):
    """FILE-PATH-3: a Windows UNC path, refused before any I/O."""

    error_name = "UncPathError"


class ReadDeniedError(Refusal):
    error_name = "ReadDeniedError"


class WriteDeniedError(Refusal):
    error_name = "WriteDeniedError"


class EditDeniedError(Refusal):
    error_name = "EditDeniedError"


class BlockedDevicePathError(Refusal):
    error_name = "BlockedDevicePathError"


class FileDoesNotExistError(Refusal):
    error_name = "FileDoesNotExistError"


class NotARegularFileError(Refusal):
    error_name = "NotARegularFileError"


class InvalidPagesError(Refusal):
    error_name = "InvalidPagesError"


class FileNotReadError(Refusal):
    error_name = "FileNotReadError"


class FileModifiedSinceReadError(Refusal):
    error_name = "FileModifiedSinceReadError"


class NoChangesError(Refusal):
    error_name = "NoChangesError"


class FileAlreadyExistsError(Refusal):
    error_name = "FileAlreadyExistsError"


class NotebookFileError(Refusal):
    error_name = "NotebookFileError"


class FileTooLargeError(Refusal):
    error_name = "FileTooLargeError"


class UnsupportedEncodingError(Refusal):
    error_name = "UnsupportedEncodingError"


class StringNotFoundError(Refusal):
    error_name = "StringNotFoundError"


class MultipleMatchesError(Refusal):
    error_name = "MultipleMatchesError"


class NotebookEditDeniedError(Refusal):
    error_name = "NotebookEditDeniedError"


class NotANotebookError(Refusal):
    error_name = "NotANotebookError"


class CellTypeRequiredError(Refusal):
    error_name = "CellTypeRequiredError"


class CellIdRequiredError(Refusal):
    error_name = "CellIdRequiredError"


class CellNotFoundError(Refusal):
    """NBEDIT-CELL-1: no cell has the id, nor the index of a ``cell-N`` name."""

    error_name = "CellNotFoundError"


# --- errors raised inside call() (stage "call") ----------------------------


class ToolCallError(ToolSystemError):
    """An error a tool's call() raises on purpose, reported by its name."""

    error_name = "ToolCallError"


class MaxFileReadTokenExceededError(ToolCallError):
    """TOK-GATE-2: thrown, never truncated."""

    error_name = "MaxFileReadTokenExceededError"


class MaxFileReadSizeExceededError(ToolCallError):
    """READ-SIZE-1: decided by stat before any byte is read."""

    error_name = "MaxFileReadSizeExceededError"


class BinaryFileError(ToolCallError):
    error_name = "BinaryFileError"


class FileUnexpectedlyModifiedError(ToolCallError):
    """STATE-STALE-2: the critical-section re-check found the file changed."""

    error_name = "FileUnexpectedlyModifiedError"


class CallAbortedError(ToolCallError):
    """Raised by a tool that noticed its abort signal; the reason decides the outcome."""

    error_name = "CallAbortedError"


class FileVanishedError(ToolCallError):
    """The file stopped being a regular file between validateInput and call()."""

    error_name = "FileVanishedError"


class InvalidNotebookError(Refusal, ToolCallError):
    """Not a JSON object with a ``cells`` list.

    One name, two stages: NotebookEdit refuses it in validateInput
    (NBEDIT-VALIDATE-1 code 10) and Read raises it in call() (NB-PARSE-1), so the
    class is both a refusal and a call error.
    """

    error_name = "InvalidNotebookError"


class NotebookValidationError(ToolCallError):
    """NBEDIT-WRITE-1: the edited notebook fails the nbformat 4 schema; nothing is written."""

    error_name = "NotebookValidationError"


# --- Read of images, PDFs and notebooks (SPEC.md section 16, stage "call") --


class UnsupportedImageFormatError(ToolCallError):
    """IMG-UNSUPPORTED-1: a binary file with a BMP, TIFF, ICO, HEIC or AVIF signature."""

    error_name = "UnsupportedImageFormatError"


class CorruptImageError(ToolCallError):
    """IMG-DECODE-1: the image does not decode in full."""

    error_name = "CorruptImageError"


class ImageResizeError(ToolCallError):
    """IMG-DECODE-1: more pixels than Pillow's decompression-bomb limit."""

    error_name = "ImageResizeError"


class ImageTooLargeError(ToolCallError):
    """IMG-BUDGET-1: over the byte budget even as a quality-20 JPEG."""

    error_name = "ImageTooLargeError"


class InvalidPdfError(ToolCallError):
    """PDF-OPEN-1: the PDF library cannot parse the file."""

    error_name = "InvalidPdfError"


class PdfPasswordProtectedError(ToolCallError):
    """PDF-OPEN-1: encrypted, whatever the password."""

    error_name = "PdfPasswordProtectedError"


class PdfPagesRequiredError(ToolCallError):
    """PDF-REQUIRE-1: more than 10 pages and no ``pages``."""

    error_name = "PdfPagesRequiredError"


class PdfPageOutOfRangeError(ToolCallError):
    """PDF-RANGE-1: the range starts past the last page."""

    error_name = "PdfPageOutOfRangeError"


class PdfTooLargeError(ToolCallError):
    """PDF-SIZE-1: the bytes to send exceed 20 MiB."""

    error_name = "PdfTooLargeError"


class NotebookTooLargeError(ToolCallError):
    """NB-SIZE-1: over 100 MiB, decided by ``stat`` alone."""

    error_name = "NotebookTooLargeError"
