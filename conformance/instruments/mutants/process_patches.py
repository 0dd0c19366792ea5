"""Process patches: mutants whose fault sits in a helper deep inside a tool.

Each rebinds names inside the ``reference`` package (``rebind`` catches the
``from module import name`` copies too) or replaces a module constant. That
is global, so a process patch is only ever applied in the mutant's own
adapter process (``python -m conformance.instruments.mutants NAME``), never in the
runner's. A survivor is a hole in the scenarios: add the scenario, never
weaken the mutant.
"""

from __future__ import annotations

import os
import sys
from types import MappingProxyType

from conformance.instruments.mutants.base import process_patch, rebind, set_global
from reference import dispatch, errors, fileio, filestate, history, paths, text, tokens
from reference.filestate import ReadRecord
from reference.texts import TEXTS, Text
from reference.tool import Tool, ToolUseContext
from reference.tools import edit, edit_plan, write
from reference.tools.read import tool as read


def _never_stale(record: ReadRecord, *, mtime_ns: int, text: str | None) -> bool:
    return False


def _never_modified(record: ReadRecord, *, mtime_ns: int) -> bool:
    return False


@process_patch(
    "staleness-ignored",
    "Write and Edit never find a record stale",
    breaks=("STATE-STALE-1", "STATE-STALE-2", "WRITE-VALIDATE-1", "EDIT-VALIDATE-1"),
)
def _staleness_ignored() -> None:
    rebind(filestate.is_stale, _never_stale)
    rebind(filestate.modified_since, _never_modified)


@process_patch(
    "stale-recheck-skipped",
    "Write and Edit check staleness in validate_input only, not again inside call()",
    breaks=("STATE-STALE-2", "WRITE-SEQ-1", "EDIT-SEQ-1"),
)
def _stale_recheck_skipped() -> None:
    for tool in (write, edit):  # validate_input goes through _common, which keeps its own
        set_global(tool, "stale_in_call", _never_stale_in_call)


def _never_stale_in_call(*_args: object) -> bool:
    return False


def _stale_by_mtime(record: ReadRecord, *, mtime_ns: int, text: str | None) -> bool:
    return mtime_ns != record.mtime_ns


@process_patch(
    "staleness-by-mtime-only",
    "call() finds any new modification time stale, even when the text is identical",
    breaks=("STATE-STALE-1",),
)
def _staleness_by_mtime_only() -> None:
    rebind(filestate.is_stale, _stale_by_mtime)


def _modified_if_not_equal(record: ReadRecord, *, mtime_ns: int) -> bool:
    return mtime_ns != record.mtime_ns


def _stale_if_not_equal(record: ReadRecord, *, mtime_ns: int, text: str | None) -> bool:
    return mtime_ns != record.mtime_ns and text != record.text


@process_patch(
    "staleness-ne-not-gt",
    "Staleness compares mtimes with != : changed text with an older mtime is refused",
    breaks=("STATE-STALE-1",),
)
def _staleness_ne_not_gt() -> None:
    rebind(filestate.is_stale, _stale_if_not_equal)
    rebind(filestate.modified_since, _modified_if_not_equal)


@process_patch(
    "dedup-ignores-range",
    "Dedup ignores offset and limit: any re-read of an unchanged file gets the stub",
    breaks=("READ-DEDUP-1", "READ-DEDUP-3"),
)
def _dedup_ignores_range() -> None:
    original = read._dedup_record

    def matching(ctx: ToolUseContext, path: str, offset: int, limit: int) -> ReadRecord | None:
        record = ctx.session.read_state.get(path)
        if record is None:
            return None
        return original(ctx, path, record.offset or offset, record.limit or limit)

    rebind(original, matching)


@process_patch(
    "dedup-ignores-mtime",
    "Dedup compares the size only: a same-size change re-read gets the stub",
    breaks=("READ-DEDUP-1", "READ-DEDUP-3"),
)
def _dedup_ignores_mtime() -> None:
    original = read._dedup_hit

    def hit(ctx: ToolUseContext, path: str, offset: int, limit: int) -> bool:
        record = read._dedup_record(ctx, path, offset, limit)
        st = fileio.stat(path)
        return record is not None and st.kind is fileio.FileKind.REGULAR and st.size == record.size

    rebind(original, hit)


def _cutting_format_lines(lines: list[str], start: int) -> str:
    cut = [
        f"{line[:2000]}… [line truncated: {len(line)} characters]" if len(line) > 2000 else line
        for line in lines
    ]
    return _FORMAT_LINES(cut, start)


_FORMAT_LINES = read.format_lines


@process_patch(
    "long-lines-cut",
    "Read cuts lines longer than 2000 characters and marks them, as the original once did",
    breaks=("READ-LINE-3",),
)
def _long_lines_cut() -> None:
    rebind(read.format_lines, _cutting_format_lines)


def _padded_format_lines(lines: list[str], start: int) -> str:
    return "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(lines, start))


@process_patch(
    "line-numbers-padded",
    "Read right-aligns line numbers in 6 columns (the older cat -n form)",
    breaks=("READ-FORMAT-1",),
)
def _line_numbers_padded() -> None:
    rebind(read.format_lines, _padded_format_lines)


@process_patch(
    "binary-read-as-text",
    "Read never sniffs for NUL bytes: binary files come back as text",
    breaks=("READ-BINARY-1",),
)
def _binary_read_as_text() -> None:
    set_global(read, "BINARY_SNIFF_BYTES", 0)


@process_patch(
    "device-paths-not-blocked",
    "Read blocks no device by name; /dev/zero and friends reach the stat check",
    breaks=("READ-DEVICE-1", "READ-VALIDATE-1"),
)
def _device_paths_not_blocked() -> None:
    set_global(paths, "BLOCKED_DEVICE_PATHS", frozenset())


@process_patch(
    "thinspace-not-tried",
    "Read does not try the U+202F / space twin of a missing screenshot name",
    breaks=("READ-THINSPACE-1",),
)
def _thinspace_not_tried() -> None:
    rebind(paths.thin_space_alternative, lambda path: None)


@process_patch(
    "unc-paths-allowed",
    "UNC paths are not refused; they are taken as relative paths",
    breaks=("FILE-PATH-3",),
)
def _unc_paths_allowed() -> None:
    rebind(paths.is_unc, lambda path: False)


@process_patch(
    "symlinks-resolved",
    "Path expansion resolves symlinks, so a link and its target share one record",
    breaks=("FILE-PATH-1",),
)
def _symlinks_resolved() -> None:
    original = paths.expand_path

    def expand(path: str, *, cwd: str, home: str) -> str:
        return os.path.realpath(original(path, cwd=cwd, home=home))

    rebind(original, expand)


@process_patch(
    "token-gate-estimate-only",
    "The token gate decides on the fast estimate alone, never counting exactly",
    breaks=("TOK-GATE-1",),
)
def _token_gate_estimate_only() -> None:
    def gate(content: str, cap: int) -> tokens.GateDecision:
        rough = tokens.estimate(content)
        count = tokens.Count(tokens=rough, complete=True)
        return tokens.GateDecision(passed=rough <= cap, estimate=rough, exact=count)

    rebind(tokens.gate, gate)


@process_patch(
    "token-gate-always-exact",
    "The token gate skips stage one and counts every text exactly",
    breaks=("TOK-GATE-1",),
)
def _token_gate_always_exact() -> None:
    def gate(content: str, cap: int) -> tokens.GateDecision:
        counted = tokens.exact_count(content, stop_above=cap)
        return tokens.GateDecision(
            passed=counted.tokens <= cap, estimate=tokens.estimate(content), exact=counted
        )

    rebind(tokens.gate, gate)


@process_patch(
    "crlf-lost-on-edit",
    "Edit writes the whole file back with LF line endings",
    breaks=("EDIT-EOL-1",),
)
def _crlf_lost_on_edit() -> None:
    rebind(edit_plan.apply_to_original, lambda original, plan: plan.new_text)


@process_patch(
    "curly-quotes-lost",
    "Edit never restores curly quotes: new_string goes in with straight ones",
    breaks=("TEXT-QUOTE-2", "EDIT-QUOTE-1"),
)
def _curly_quotes_lost() -> None:
    rebind(text.restore_quote_style, lambda new_string, matched: new_string)


@process_patch(
    "trailing-whitespace-kept",
    "Edit keeps trailing spaces and tabs in new_string in every file",
    breaks=("EDIT-WS-1",),
)
def _trailing_whitespace_kept() -> None:
    rebind(text.strip_trailing_whitespace, lambda new_string: new_string)


@process_patch(
    "desanitize-skipped",
    "Edit never tries the desanitized old_string",
    breaks=("TEXT-DESANITIZE-1", "EDIT-DESANITIZE-1"),
)
def _desanitize_skipped() -> None:
    rebind(text.desanitize, lambda old_string: (old_string, ()))


@process_patch(
    "first-match-instead-of-unique",
    "Edit replaces the first of several matches instead of refusing",
    breaks=("EDIT-UNIQUE-1", "EDIT-VALIDATE-1"),
)
def _first_match_instead_of_unique() -> None:
    original = edit_plan.plan_edit

    def first_match(
        file_lf: str, old: str, new: str, *, replace_all: bool, file_path: str
    ) -> edit_plan.EditPlan:
        try:
            return original(file_lf, old, new, replace_all=replace_all, file_path=file_path)
        except errors.MultipleMatchesError:
            every = original(file_lf, old, new, replace_all=True, file_path=file_path)
            first = every.spans[:1]
            return edit_plan.EditPlan(spans=first, new_text=edit_plan._splice(file_lf, first))

    rebind(original, first_match)


@process_patch(
    "invalid-encoding-edited",
    "Edit rewrites a file with invalid bytes, replacing them with U+FFFD",
    breaks=("TEXT-ENC-2",),
)
def _invalid_encoding_edited() -> None:
    original = text.decode

    def decode(data: bytes, encoding: text.Encoding, *, strict: bool = False) -> str:
        return original(data, encoding)

    rebind(original, decode)


@process_patch(
    "bom-dropped",
    "Edit writes a file back without its byte order mark",
    breaks=("TEXT-ENC-1", "EDIT-ENC-1"),
)
def _bom_dropped() -> None:
    original = text.encode

    def encode(content: str, encoding: text.Encoding, *, bom: bool = True) -> bytes:
        return original(content, encoding, bom=False)

    rebind(original, encode)


@process_patch(
    "history-not-backed-up",
    "Write and Edit change files without saving the old bytes in the file history",
    breaks=("HIST-1",),
)
def _history_not_backed_up() -> None:
    rebind(history.backup, lambda session_dir, data: "")


@process_patch(
    "nul-paths-allowed",
    "Paths holding a NUL character are not refused before they reach the file system",
    breaks=("FILE-PATH-2",),
)
def _nul_paths_allowed() -> None:
    rebind(paths.has_nul, lambda path: False)


@process_patch(
    "default-limit-off-by-one",
    "Read without a limit shows 2001 lines",
    breaks=("READ-RANGE-2",),
)
def _default_limit_off_by_one() -> None:
    set_global(read, "DEFAULT_LIMIT", read.DEFAULT_LIMIT + 1)


@process_patch(
    "size-gate-off-by-one",
    "The size gate refuses a whole-file read of exactly 256 KiB",
    breaks=("READ-SIZE-1",),
)
def _size_gate_off_by_one() -> None:
    set_global(read, "MAX_WHOLE_FILE_BYTES", read.MAX_WHOLE_FILE_BYTES - 1)


@process_patch(
    "default-limit-off",
    "Read without a limit shows the whole file, not its first 2000 lines",
    breaks=("READ-RANGE-2",),
)
def _default_limit_off() -> None:
    set_global(read, "DEFAULT_LIMIT", sys.maxsize)


@process_patch(
    "token-gate-at-cap-refused",
    "The token gate refuses a text of exactly the cap",
    breaks=("TOK-GATE-1",),
)
def _token_gate_at_cap_refused() -> None:
    original = tokens.gate

    def gate(content: str, cap: int) -> tokens.GateDecision:
        return original(content, cap - 1)

    rebind(original, gate)


@process_patch(
    "estimate-counts-bytes",
    "The fast token estimate counts UTF-8 bytes instead of code points",
    breaks=("TOK-ESTIMATE-1",),
)
def _estimate_counts_bytes() -> None:
    rebind(tokens.estimate, lambda content: -(-len(content.encode("utf-8")) // 4))


@process_patch(
    "count-never-stops-early",
    "The exact count always counts the whole text, so it never says 'more than'",
    breaks=("TOK-EXACT-2",),
)
def _count_never_stops_early() -> None:
    original = tokens.exact_count

    def exact_count(content: str, *, stop_above: int | None = None) -> tokens.Count:
        return original(content)

    rebind(original, exact_count)


@process_patch(
    "eol-tie-is-crlf",
    "A file with as many CRLF as lone LF counts as CRLF",
    breaks=("TEXT-EOL-1",),
)
def _eol_tie_is_crlf() -> None:
    rebind(text.is_crlf, lambda content: 2 * content.count("\r\n") >= content.count("\n"))


@process_patch(
    "edit-strings-crlf-normalized",
    "Edit turns the CRLF in old_string and new_string into LF before matching",
    breaks=("EDIT-MATCH-1",),
)
def _edit_strings_crlf_normalized() -> None:
    original = edit_plan.plan_edit

    def plan_edit(
        file_lf: str, old_string: str, new_string: str, *, replace_all: bool, file_path: str
    ) -> edit_plan.EditPlan:
        return original(
            file_lf,
            text.to_lf(old_string),
            text.to_lf(new_string),
            replace_all=replace_all,
            file_path=file_path,
        )

    rebind(original, plan_edit)


@process_patch(
    "markdown-extension-case-sensitive",
    "Edit keeps trailing whitespace only for lower-case .md and .mdx names",
    breaks=("EDIT-WS-1",),
)
def _markdown_extension_case_sensitive() -> None:
    def normalize(new_string: str, file_path: str) -> str:
        new_string = text.to_lf(new_string)
        if file_path.endswith((".md", ".mdx")):
            return new_string
        return text.strip_trailing_whitespace(new_string)

    rebind(edit_plan.normalize_new_string, normalize)


@process_patch(
    "desanitize-new-string-fully",
    "Edit desanitizes every entry in new_string, not only those old_string used",
    breaks=("TEXT-DESANITIZE-1",),
)
def _desanitize_new_string_fully() -> None:
    rebind(text.apply_replacements, lambda content, applied: text.desanitize(content)[0])


@process_patch(
    "errors-not-wrapped",
    "Error results reach the model without the <tool_use_error> wrapper",
    breaks=("ERR-CODE-1", "ERR-CODE-2"),
)
def _errors_not_wrapped() -> None:
    rebind(dispatch.wrap_error, lambda message: message)
    wrap = ("<tool_use_error>", "</tool_use_error>")
    unwrapped = {
        key: Text(text.rid, text.template.removeprefix(wrap[0]).removesuffix(wrap[1]))
        for key, text in TEXTS.items()
        if text.template.startswith(wrap[0]) and text.template.endswith(wrap[1])
    }
    rebind(TEXTS, MappingProxyType({**TEXTS, **unwrapped}))  # the templates that wrap


@process_patch(
    "raw-exception-text",
    "An unexpected exception reaches the model as its own message",
    breaks=("ERR-CODE-3", "DISP-CLASSIFY-1"),
)
def _raw_exception_text() -> None:
    original = dispatch._model_message

    def message(tool: Tool, exc: BaseException) -> str:
        return exc.message if isinstance(exc, errors.ToolSystemError) else str(exc)

    rebind(original, message)
