"""Read: text files with line numbers, the size and token gates, and dedup.

SPEC.md section 12. The order of work in ``call`` is what makes the gates
cheap: dedup decides from one ``stat`` (READ-DEDUP-2), the size gate from the
same ``stat`` (READ-SIZE-1), and only then is the text read.

Images, PDFs and notebooks (section 16) are routed here by kind (IMG-DETECT-1)
to ``read.image``, ``read.pdf`` and ``read.notebook``; a file small enough to
pass the size gate is read once, whole, and its kind comes from those bytes, a
bigger one's from its first bytes alone.
"""

from __future__ import annotations

import enum
import math
import os
import stat as statmod
import sys
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo
from pydantic_core import PydanticKnownError

from reference import errors, fileio, paths, text, tokens
from reference.filestate import ReadRecord
from reference.permissions.checks import check_read_permissions
from reference.permissions.session_rules import READ_RULES, matching_deny_rule
from reference.permissions.tool_paths import file_path_of
from reference.profiles import Profile, profile_of
from reference.tool import ResultContent, Tool, ToolResult, ToolUseContext, build_tool
from reference.tools.common import (
    LenientJsonInt,
    StrictInput,
    check_path_syntax,
    named_path,
)
from reference.tools.read import image as read_image
from reference.tools.read import notebook as read_notebook
from reference.tools.read import pdf as read_pdf

NAME: Final = "Read"
DEFAULT_LIMIT: Final = 2000  # READ-RANGE-2
MAX_WHOLE_FILE_BYTES: Final = 256 * 1024  # READ-SIZE-1
BINARY_SNIFF_BYTES: Final = 8192  # READ-BINARY-1
HEAD_BYTES: Final = 16  # IMG-DETECT-1: the longest signature is 12 bytes (WebP, HEIC, AVIF)
EMPTY_FORMS: Final = frozenset({b"", b"\xef\xbb\xbf", b"\xff\xfe"})  # READ-EMPTY-1
DEDUP_STUB: Final = (  # READ-DEDUP-1
    "File unchanged since last read. The content from the earlier Read tool_result in this "
    "conversation is still current \u2014 refer to that instead of re-reading."
)
DEDUP_HIT: Final = MappingProxyType({"dedup": True})


def _offset_floor(value: int | None, info: ValidationInfo) -> int | None:
    """READ-RANGE-1: ``offset`` is at least 1, or at least 0 where the session's profile
    takes ``offset: 0`` (the exported schema still says 1); a breach is the ``>=`` constraint
    of the floor that applies (DISP-SCHEMA-2)."""
    floor = 0 if profile_of(info).read_offset_zero else 1
    if value is not None and value < floor:
        raise PydanticKnownError("greater_than_equal", {"ge": floor})
    return value


def _limit_zero(value: object, info: ValidationInfo) -> object:
    """READ-RANGE-2 where the session's profile takes ``limit: 0``: read as if no ``limit``
    were given (else 0 breaks the ``>= 1`` constraint)."""
    zero = value == 0 and not isinstance(value, bool)
    return None if zero and profile_of(info).read_limit_zero else value


class ReadInput(StrictInput):
    file_path: str = Field(description="The absolute path to the file to read")
    offset: Annotated[LenientJsonInt | None, AfterValidator(_offset_floor)] = Field(
        default=None, json_schema_extra={"minimum": 1}, description="1-based line to start at"
    )
    limit: Annotated[LenientJsonInt | None, BeforeValidator(_limit_zero)] = Field(
        default=None, ge=1, description="Number of lines to read"
    )
    pages: str | None = Field(default=None, description="PDF page range, e.g. '1-5'")


def resolve_existing(path: str, *, retry: bool = True) -> tuple[str, fileio.Stat]:
    """The expanded ``path`` and its stat; the thin-space twin when only it exists.

    READ-THINSPACE-1, unless ``retry`` is false (the session's profile does not
    retry). One ``stat`` in the common case.
    """
    st = fileio.stat(path)
    if st.kind is fileio.FileKind.MISSING and retry:
        twin = paths.thin_space_alternative(path)
        if twin is not None:
            twin_st = fileio.stat(twin)
            if twin_st.kind is not fileio.FileKind.MISSING:
                return twin, twin_st
    return path, st


class Kind(enum.Enum):
    """What Read makes of a file (IMG-DETECT-1); binary files are refused as text."""

    TEXT = "text"
    IMAGE = "image"
    PDF = "pdf"
    NOTEBOOK = "notebook"


def detect_kind(path: str, head: bytes) -> tuple[Kind, read_image.ImageFormat | None]:
    """IMG-DETECT-1, in its order, from the name and the first bytes (or all of them).

    ``head`` is the whole file or at least its first ``HEAD_BYTES`` bytes.
    """
    if head in EMPTY_FORMS:  # READ-EMPTY-1: empty, or only a byte order mark
        return Kind.TEXT, None
    image = read_image.image_format(head)
    if image is not None:  # by the bytes, whatever the name
        return Kind.IMAGE, image
    if read_pdf.is_pdf(path, head):
        return Kind.PDF, None
    if read_notebook.is_notebook(path):
        return Kind.NOTEBOOK, None
    return Kind.TEXT, None


def _is_pdf_file(path: str, st: fileio.Stat) -> bool:
    if st.kind is not fileio.FileKind.REGULAR:  # /dev/null reads as an empty text file
        return False
    return detect_kind(path, fileio.read_head(path, HEAD_BYTES))[0] is Kind.PDF


def validate_input(inp: ReadInput, ctx: ToolUseContext) -> None:
    """READ-VALIDATE-1: the table of SPEC.md 12.2, in order."""
    check_path_syntax(inp.file_path)
    path = ctx.expand(inp.file_path)
    if path in paths.BLOCKED_DEVICE_PATHS:  # READ-DEVICE-1: by name, before any stat
        raise errors.BlockedDevicePathError(
            f"Cannot read {path}: it is a device that never ends or waits for input."
        )
    path, st = resolve_existing(path, retry=ctx.session.profile.thin_space_retry)
    rule = matching_deny_rule(ctx.session, path, READ_RULES)
    if rule is not None:
        raise errors.ReadDeniedError(
            f"File is covered by a Read deny rule in your permission settings ({rule.text}) "
            "and cannot be read."
        )
    extension = _binary_extension(ctx, path)
    if extension is not None:  # READ-BINARY-1 by name, where the profile's release tells so
        raise errors.BinaryFileNameError(
            ctx.session.profile.text("binary_file", path=path, extension=extension)
        )
    kind = st.kind
    if kind is fileio.FileKind.MISSING:  # READ-MISSING-1
        raise errors.FileDoesNotExistError(
            paths.file_does_not_exist_message(path, ctx.cwd, ctx.session.profile),
            text="read_missing",
        )
    if kind in (fileio.FileKind.DIRECTORY, fileio.FileKind.OTHER):  # READ-KIND-1
        what = "a directory" if kind is fileio.FileKind.DIRECTORY else "not a regular file"
        raise errors.NotARegularFileError(
            f"Cannot read {path}: it is {what}. Read only reads files."
        )
    given = read_pdf.pages_given(inp.pages, ctx.session.profile)
    if given is not None:  # READ-VALIDATE-1 code 7
        # PDF-PAGES-1 and PDF-PAGES-2 hold whatever the file's kind; on a file
        # that is not a PDF a well-formed pages is then ignored.
        pages = read_pdf.parse_pages(given, ctx.session.profile)
        read_pdf.check_range_length(given, pages, ctx.session.profile)


def format_lines(lines: list[str], start: int) -> str:
    """READ-FORMAT-1 and READ-LINE-3: ``N<TAB>line``, the number unpadded, no line cut."""
    return "\n".join([f"{number}\t{line}" for number, line in enumerate(lines, start)])


def split_lines(content: str) -> list[str]:
    """READ-FORMAT-1: the pieces between ``\n`` (``\r\n`` first turned into ``\n``).

    A final line ending starts one more, empty line, and an empty text is one
    empty line (READ-EMPTY-1), as Claude Code 2.1.88 counts them.
    """
    return text.to_lf(content).split("\n")


def is_partial(lines: list[str], offset: int, shown: int) -> bool:
    """STATE-PARTIAL-1: some text of the file lies outside the view of ``shown`` lines.

    The empty line after a final line ending holds no text, nor does a file
    with no text at all (READ-EMPTY-1, whatever the offset).
    """
    last = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
    has_text = len(lines) > 1 or lines[0] != ""
    return has_text and (offset > 1 or offset - 1 + shown < last)


def _dedup_record(ctx: ToolUseContext, path: str, offset: int, limit: int) -> ReadRecord | None:
    """READ-DEDUP-1, READ-DEDUP-4: the Read record of this very range, when dedup is on."""
    if not ctx.session.dedup_enabled:
        return None
    record = ctx.session.read_state.get(path)
    if record is None or record.offset != offset or record.limit != limit:
        return None
    if record.turn == ctx.session.turn:  # READ-DEDUP-5: made in this very message
        return None
    return record if record.source == "read" else None  # READ-DEDUP-3: not Write, Edit


def _dedup_hit(ctx: ToolUseContext, path: str, offset: int, limit: int) -> bool:
    """READ-DEDUP-1, READ-DEDUP-2: a matching record, and one ``stat`` shows the same regular file.

    The ``stat`` is made only when a record matches, straight from ``os``: this
    is the whole of a hit's work, so it is kept to the floor a hit can reach.
    """
    record = _dedup_record(ctx, path, offset, limit)
    if record is None:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return False
    # READ-DEDUP-1: the modification time alone decides, as the seeds say; the size is not compared.
    return st.st_mtime_ns == record.mtime_ns and statmod.S_ISREG(st.st_mode)


def _unchanged(path: str) -> ToolResult:
    """READ-DEDUP-1: the stub's data; ``map_result`` turns it into DEDUP_STUB."""
    return ToolResult({"type": "file_unchanged", "file": {"filePath": path}}, (), None, DEDUP_HIT)


IMAGE_NAMES: Final = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""IMG-DETECT-1 where a profile's release knows an image by its name: these extensions."""


def _named_like_image(path: str) -> bool:
    return path.lower().endswith(IMAGE_NAMES)


def _default_limit(ctx: ToolUseContext) -> int:
    """READ-RANGE-2: the lines a Read without ``limit`` shows, as the session's profile
    says (no bound of its own: as many as any file can have)."""
    return DEFAULT_LIMIT if ctx.session.profile.read_default_limit else sys.maxsize


def call(inp: ReadInput, ctx: ToolUseContext) -> ToolResult:
    offset = 1 if inp.offset is None else inp.offset  # READ-RANGE-1: line 1 without offset
    limit = inp.limit or _default_limit(ctx)
    expanded = ctx.expand(inp.file_path)
    if _dedup_hit(ctx, expanded, offset, limit):  # READ-DEDUP-2: before anything else
        return _unchanged(expanded)
    path, st = resolve_existing(expanded, retry=ctx.session.profile.thin_space_retry)
    if path != expanded and _dedup_hit(ctx, path, offset, limit):  # the thin-space twin
        return _unchanged(path)
    if st.kind is fileio.FileKind.DEV_NULL:  # READ-EMPTY-1: one empty line
        shown_null = [""][max(offset - 1, 0) : max(offset - 1, 0) + limit]
        return _text_result(named_path(ctx, inp.file_path, path), shown_null, offset, 1)
    if st.kind is not fileio.FileKind.REGULAR:
        raise errors.FileVanishedError(f"{path} is no longer a regular file.")
    # A file that passes the size gate is read once; a bigger one shows its kind by its head.
    data = fileio.read_bytes(path) if st.size <= MAX_WHOLE_FILE_BYTES else None
    head = data if data is not None else fileio.read_head(path, HEAD_BYTES)
    if not head and not ctx.session.profile.empty_image_is_text and _named_like_image(path):
        raise errors.EmptyImageError(f"Image file is empty: {path}")  # IMG-DETECT-1, profile's
    kind, image = detect_kind(path, head)
    if image is not None:  # IMG-DETECT-1
        whole = data if data is not None else fileio.read_bytes(path)
        return read_image.read(path, whole, image, ctx.session.max_read_tokens)
    if kind is Kind.PDF:
        given = read_pdf.pages_given(inp.pages, ctx.session.profile)
        return read_pdf.read(path, st.size, data, given, ctx.session.profile)
    if kind is Kind.NOTEBOOK:
        return read_notebook.read(ctx, path, st, data, (offset, limit))
    unbounded = inp.limit is None  # READ-SIZE-2: only a limit lifts the size gate
    if unbounded and st.size > MAX_WHOLE_FILE_BYTES:  # READ-SIZE-1: stat alone decides
        raise errors.MaxFileReadSizeExceededError(
            f"File content ({st.size} bytes) exceeds maximum allowed size "
            f"({MAX_WHOLE_FILE_BYTES} bytes). Use offset and limit parameters to read "
            "specific portions of the file, or search for specific content instead."
        )
    # READ-BINARY-1, READ-BINARY-2: from the first bytes alone, before the rest is read
    _refuse_binary(
        ctx, path, data if data is not None else fileio.read_head(path, BINARY_SNIFF_BYTES)
    )
    if data is None:
        data = fileio.read_bytes(path)
    encoding = text.detect_encoding(data)
    if encoding is text.Encoding.UTF16LE and not ctx.session.profile.read_decodes_utf16:
        encoding = text.Encoding.UTF8  # TEXT-ENC-1 where the profile's Read reads bytes as UTF-8
    content = text.decode(data, encoding)
    del data  # TOK-BOUND-1: the bytes are not held beside the text while the view is gated
    lines = split_lines(content)
    total = len(lines)
    start = max(offset - 1, 0)  # READ-RANGE-1: offset 0 (a profile's) starts at line 1
    shown = lines[start : start + limit]
    cap = ctx.session.max_read_tokens
    from_start = inp.limit is None and offset == 1  # from the first line, no limit given
    cut = False
    if from_start and ctx.session.profile.token_cap_pages:  # TOK-GATE-2, the profile's first page
        page = _first_page(shown, cap)
        cut = 0 < page < len(shown)
        shown = shown[:page] if cut else shown
    result = _text_result(named_path(ctx, inp.file_path, path), shown, offset, total)
    if cut:
        result.data["file"]["truncatedByTokenCap"] = True
    # READ-TOKENS-1, TOK-GATE-1: the view's text, without prefixes or reminder
    _enforce_token_cap(result.data["file"]["content"], cap, ctx.session.profile)
    partial = is_partial(lines, start + 1, len(shown))  # STATE-PARTIAL-1, READ-EMPTY-1
    ctx.session.read_state.set(  # STATE-UPDATE-2: only once every check has passed
        path,
        ReadRecord(
            text=content,
            mtime_ns=st.mtime_ns,
            size=st.size,
            offset=offset,
            limit=limit,
            partial=partial,
            source="read",
            turn=ctx.session.turn,  # READ-DEDUP-5
        ),
    )
    return result


def _binary_extension(ctx: ToolUseContext, path: str) -> str | None:
    """READ-BINARY-1 where the session's profile tells binary files by name: the
    lowercased extension of ``path`` when it is one of the profile's, else None."""
    names = ctx.session.profile.binary_extensions
    if names is None:
        return None
    extension = os.path.splitext(path)[1].lower()
    return extension if extension[1:] in names else None


def _refuse_binary(ctx: ToolUseContext, path: str, head: bytes) -> None:
    """READ-BINARY-1: a NUL in the first 8192 bytes, without a UTF-16LE mark, is binary.

    READ-BINARY-2: ``head`` is those bytes alone, so a huge (or sparse) file is
    refused without reading the rest of it. Where the session's profile tells
    binary files by name instead (``validate_input``), nothing is refused here.
    """
    if ctx.session.profile.binary_extensions is not None:
        return
    head = head[:BINARY_SNIFF_BYTES]
    if text.detect_encoding(head) is text.Encoding.UTF16LE or b"\x00" not in head:
        return
    unsupported = read_image.unsupported_format(head)
    if unsupported is not None:  # IMG-UNSUPPORTED-1
        raise read_image.unsupported_error(unsupported)
    raise errors.BinaryFileError(ctx.session.profile.text("binary_file", path=path))


def _first_page(lines: list[str], cap: int) -> int:
    """TOK-GATE-2 where the session's profile pages a whole-file read: how many of
    ``lines``, from the first, make a view (TOK-GATE-1's text) within ``cap``; all of them
    when the whole view is. Found by bisection, each probe one bounded gate (TOK-BOUND-1)."""
    if tokens.gate("\n".join(lines), cap).passed:
        return len(lines)
    low, high = 0, len(lines)  # lines[:low] fits, lines[:high] does not
    while high - low > 1:
        middle = (low + high) // 2
        if tokens.gate("\n".join(lines[:middle]), cap).passed:
            low = middle
        else:
            high = middle
    return low


def _enforce_token_cap(view: str, cap: int, profile: Profile) -> None:
    """TOK-GATE-2: over the cap is an error, never a truncation (a profile's first page of a
    whole-file read is cut before this check)."""
    decision = tokens.gate(view, cap)
    if decision.passed:
        return
    amount = decision.amount(cap)  # TOK-GATE-2, TOK-BOUND-1
    stopped = decision.exact is not None and not decision.exact.complete
    if stopped and profile.count_whole_view:  # TOK-EXACT-2, the profile's: the whole view
        amount = f"{tokens.exact_count(view).tokens} tokens"  # within TOK-BOUND-1's bytes
    raise errors.MaxFileReadTokenExceededError(
        profile.text("token_cap_refusal", amount=amount, cap=cap)
    )


def _text_result(path: str, shown: list[str], offset: int, total: int) -> ToolResult:
    """READ-OUTPUT-1."""
    return ToolResult(
        data={
            "type": "text",
            "file": {
                "filePath": path,
                "content": "\n".join(shown),
                "numLines": len(shown),
                "startLine": offset,
                "totalLines": total,
            },
        }
    )


def _notice_for_empty_view(file: Mapping[str, Any], profile: Profile) -> bool:
    """READ-OFFSET-1: a view with no text is the notice; under a profile whose notice is for
    views past the end alone, a view of empty lines inside a file with text shows them."""
    if profile.empty_view_notice == "any":
        return True
    start, total = int(file["startLine"]), int(file["totalLines"])
    return start > total or (total == 1 and start <= 1)


def map_result(data: Mapping[str, Any], profile: Profile) -> ResultContent:
    kind = data["type"]
    if kind == "file_unchanged":
        return DEDUP_STUB
    if kind == "image":
        return read_image.to_blocks(data)  # IMG-BLOCK-1
    if kind == "pdf":
        return read_pdf.to_blocks(data, profile)  # PDF-SEND-1
    if kind == "notebook":
        return read_notebook.to_blocks(data, profile)  # NB-RENDER-1, NB-OUTPUT-1
    file = data["file"]
    if file["content"] == "" and _notice_for_empty_view(file, profile):
        fields = {"offset": file["startLine"], "lines": file["totalLines"]}
        if file["totalLines"] == 1 and file["startLine"] <= 1:  # READ-EMPTY-1: no text at all
            return profile.text("read_empty_file", **fields)
        return profile.text("read_empty_view", **fields)  # READ-OFFSET-1
    # READ-FORMAT-1, READ-REMINDER-1
    lines = format_lines(file["content"].split("\n"), file["startLine"])
    return lines + profile.text("read_reminder")


READ_TOOL: Final[Tool[ReadInput]] = build_tool(
    name=NAME,
    input_model=ReadInput,
    call=call,
    validate_input=validate_input,
    description="Reads a file from the local filesystem.",
    error_codes={
        errors.InvalidPathError: 1,
        errors.UncPathError: 2,
        errors.ReadDeniedError: 3,
        errors.BlockedDevicePathError: 4,
        errors.FileDoesNotExistError: 5,
        errors.NotARegularFileError: 6,
        errors.InvalidPagesError: 7,
        errors.BinaryFileNameError: 8,
    },
    is_concurrency_safe=lambda _inp: True,
    is_read_only=lambda _inp: True,
    map_result=map_result,
    max_result_size_chars=math.inf,  # RES-PERSIST-2: Read's output is the file itself
    path_fields=("file_path",),
    get_path=file_path_of,
    path_rules="read",
    classifier_input=lambda inp: inp.file_path,
    check_permissions=check_read_permissions,  # PERM-READ-1
)
