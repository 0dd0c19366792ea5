"""Read of a PDF: the ``pages`` parameter, the limits, the document block.

SPEC.md section 16. ``pages`` is checked by Read's ``validate_input``
(READ-VALIDATE-1 code 7, PDF-PAGES-1, PDF-PAGES-2); everything else happens
in ``call()``, which sends the file's bytes unchanged or, with ``pages``, a
new PDF of the selected pages written by pypdf (PDF-SEND-1).
"""

from __future__ import annotations

import base64
import io
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from reference import errors, fileio
from reference.profiles import DOCUMENTED, Profile
from reference.tool import ContentBlock, ToolResult

if TYPE_CHECKING:
    from pypdf import PdfReader

# pypdf (and the Pillow it imports) load on the first PDF Read, in ``_open``
# and ``_subset``: every other call, and the engine's start, would pay for them.

MAX_PAGES_PER_CALL: Final = 20  # PDF-PAGES-2
MAX_PAGES_WITHOUT_RANGE: Final = 10  # PDF-REQUIRE-1
MAX_SEND_BYTES: Final = 20 * 1024 * 1024  # PDF-SIZE-1
PDF_SIGNATURE: Final = b"%PDF-"
_PAGES: Final = re.compile(r"\s*([0-9]+)(?:-([0-9]+))?\s*", re.ASCII)  # PDF-PAGES-1

# pypdf logs what it finds wrong in a damaged file; here that is an expected input
# and the diagnosis is InvalidPdfError, so nothing reaches stderr unless the
# application configured logging itself.
logging.getLogger("pypdf").addHandler(logging.NullHandler())

INVALID_PDF: Final = (  # PDF-OPEN-1
    "The PDF file was not valid. Try converting it to text first (e.g., pdftotext)."
)
PASSWORD_PROTECTED: Final = (  # PDF-OPEN-1
    "PDF is password protected. Try using a CLI tool to extract or convert the PDF."
)


class PageRange(NamedTuple):
    """A 1-based inclusive range of pages (a single page has ``first == last``)."""

    first: int
    last: int

    @property
    def length(self) -> int:
        return self.last - self.first + 1


def is_pdf(path: str, head: bytes) -> bool:
    """IMG-DETECT-1: a ``.pdf`` name (any case) or the ``%PDF-`` signature."""
    return path.lower().endswith(".pdf") or head.startswith(PDF_SIGNATURE)


def parse_pages(value: str, profile: Profile = DOCUMENTED) -> PageRange:
    """PDF-PAGES-1: ``N`` or ``N-M``, ``N >= 1``, ``M >= N``, whitespace around allowed;
    the refusal worded as ``profile``'s release words it."""
    match = _PAGES.fullmatch(value)
    first = int(match.group(1)) if match else 0
    last = int(match.group(2) or first) if match else 0
    if match is None or first < 1 or last < first:
        raise errors.InvalidPagesError(profile.text("pdf_pages_invalid", pages=value))
    return PageRange(first, last)


def check_range_length(value: str, pages: PageRange, profile: Profile = DOCUMENTED) -> None:
    """PDF-PAGES-2: at most 20 pages per call, decided from the range alone."""
    if pages.length > MAX_PAGES_PER_CALL:
        raise errors.InvalidPagesError(
            profile.text(
                "pdf_pages_too_many", pages=value, count=pages.length, limit=MAX_PAGES_PER_CALL
            )
        )


def _open(data: bytes, profile: Profile = DOCUMENTED) -> tuple[PdfReader, int]:
    """PDF-OPEN-1: the parsed document and its page count; an encrypted one is refused
    unless ``profile``'s release opens it with the empty user password."""
    from pypdf import PdfReader  # noqa: PLC0415  (deferred, see above)
    from pypdf.errors import DependencyError  # noqa: PLC0415

    try:
        reader = PdfReader(io.BytesIO(data))
    except DependencyError as exc:  # only encryption needs a dependency to open
        raise errors.PdfPasswordProtectedError(PASSWORD_PROTECTED) from exc
    except Exception as exc:  # whatever pypdf cannot parse
        raise errors.InvalidPdfError(INVALID_PDF) from exc
    if reader.is_encrypted and not _opens_without_password(reader, profile):
        raise errors.PdfPasswordProtectedError(PASSWORD_PROTECTED)
    try:
        return reader, len(reader.pages)
    except Exception as exc:
        raise errors.InvalidPdfError(INVALID_PDF) from exc


def _opens_without_password(reader: PdfReader, profile: Profile) -> bool:
    """PDF-OPEN-1: documented, an encrypted PDF is refused even with an empty user password
    (the API refuses it); where the profile's release renders the pages itself, one the
    empty password opens is read."""
    if not profile.pdf_empty_password_opens:
        return False
    try:
        return bool(reader.decrypt(""))
    except Exception:  # an encryption pypdf cannot undo: refused as protected
        return False


def _subset(reader: PdfReader, pages: PageRange) -> bytes:
    """PDF-SEND-1: a new PDF holding exactly the selected pages, in order."""
    from pypdf import PdfWriter  # noqa: PLC0415  (deferred, see above _open)

    writer = PdfWriter()
    buffer = io.BytesIO()
    try:
        for index in range(pages.first - 1, pages.last):
            writer.add_page(reader.pages[index])
        writer.write(buffer)
    except Exception as exc:  # a page pypdf parsed but cannot copy
        raise errors.InvalidPdfError(INVALID_PDF) from exc
    return buffer.getvalue()


def _check_size(size: int, profile: Profile) -> None:
    if size > MAX_SEND_BYTES:  # PDF-SIZE-1
        raise errors.PdfTooLargeError(profile.text("pdf_too_large"))


def read(
    path: str, size: int, data: bytes | None, pages: str | None, profile: Profile = DOCUMENTED
) -> ToolResult:
    """The PDF, whole or the pages of ``pages``; records nothing (IMG-STATE-1).

    ``size`` is the file's size from ``stat``; ``data`` its bytes when the
    caller already read them; ``profile`` the session's, whose release may word
    the refusals otherwise and give a whole read's output without its page
    count (PDF-SEND-1).
    """
    if pages is None:
        # PDF-SIZE-1: a whole read sends the file, so stat decides before any byte is read
        _check_size(size, profile)
    if data is None:
        data = fileio.read_bytes(path)
    if pages is None:
        try:
            count: int | None = _open(data, profile)[1]
        except (errors.InvalidPdfError, errors.PdfPasswordProtectedError):
            count = None  # PDF-OPEN-1: a whole read sends it as it is, as 2.1.88 does
        if count is not None and count > MAX_PAGES_WITHOUT_RANGE:  # PDF-REQUIRE-1
            raise errors.PdfPagesRequiredError(
                profile.text(
                    "pdf_pages_required",
                    count=count,
                    most=MAX_PAGES_WITHOUT_RANGE,
                    limit=MAX_PAGES_PER_CALL,
                )
            )
        sent = data  # PDF-SEND-1: the file's bytes, unchanged
    else:
        reader, count = _open(data, profile)
        wanted = parse_pages(pages, profile)
        if wanted.first > count:  # PDF-RANGE-1
            raise errors.PdfPageOutOfRangeError(
                f"Page {wanted.first} is out of range: the PDF has {count} pages."
            )
        sent = _subset(reader, PageRange(wanted.first, min(wanted.last, count)))  # cut at the end
        _check_size(len(sent), profile)
    file: dict[str, Any] = {
        "filePath": path,
        "base64": base64.b64encode(sent).decode("ascii"),
        "originalSize": len(data),
    }
    if pages is not None or profile.pdf_whole_output_counts_pages:  # PDF-SEND-1
        file.update(numPages=count, pages=pages)
    return ToolResult(data={"type": "pdf", "file": file})


def format_size(size: int) -> str:
    """PDF-SEND-1 under the releases: a size as their whole-read note gives it (``1.2KB``):
    bytes below 1 KiB, else KiB, MiB or GiB with one decimal, a trailing ``.0`` dropped."""
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    shown = f"{value:.1f}".removesuffix(".0")
    return f"{shown}{unit}"


def to_blocks(data: Mapping[str, Any], profile: Profile = DOCUMENTED) -> list[ContentBlock]:
    """PDF-SEND-1: one document block; a whole read's note before it where the profile's
    release writes one (its ``pdf_whole_read`` text is not empty), the note alone where the
    release sends the document beside the tool_result."""
    file = data["file"]
    source = {"type": "base64", "media_type": "application/pdf", "data": file["base64"]}
    blocks: list[ContentBlock] = [{"type": "document", "source": source}]
    if not profile.pdf_document_in_result and file.get("pages") is None:
        blocks = []
    if file.get("pages") is None:
        note = profile.text(
            "pdf_whole_read", path=file["filePath"], size=format_size(file["originalSize"])
        )
        if note:
            blocks.insert(0, {"type": "text", "text": note})
    return blocks
