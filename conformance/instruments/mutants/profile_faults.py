"""Profile mutants: one profile's variant played under another (SPEC.md 0.5).

Each fault replaces one field of the session's profile (``reference.profiles``)
right after ``begin``, so the engine plays the wrong contract for one varying
ID: the newest release's relaxed read-before-write under ``documented``, the
documented refusal under ``claude-code-latest``, and so on. Each runs under
the profile it breaks (``Mutant.profile``), so the scenarios that hold there,
the variant scenarios included, are the ones that must kill it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from conformance.instruments.mutants.base import MutantEngine, session_fault
from reference.profiles import BINARY_EXTENSIONS_2188


def _play(engine: MutantEngine, **variant: Any) -> None:
    """Give the open session its profile with ``variant``'s fields replaced."""
    session = engine.live_session
    session.profile = dataclasses.replace(session.profile, **variant)


# -- the newest release's variants under documented ---------------------------------


@session_fault(
    "documented-plays-latest-write-unread",
    "Under documented, Write replaces a never-read text file (claude-code-latest's WRITE-READ-1)",
    breaks=("WRITE-READ-1",),
)
def _documented_write_unread(engine: MutantEngine) -> None:
    _play(engine, write_read="unread-text")


@session_fault(
    "documented-plays-latest-edit-unread",
    "Under documented, Edit changes a never-read file (claude-code-latest's EDIT-READ-1)",
    breaks=("EDIT-READ-1",),
)
def _documented_edit_unread(engine: MutantEngine) -> None:
    _play(engine, edit_needs_read=False)


@session_fault(
    "documented-plays-latest-stale-edit",
    "Under documented, a stale Edit is applied with a note (claude-code-latest's STATE-STALE-2)",
    breaks=("STATE-STALE-2",),
)
def _documented_stale_edit(engine: MutantEngine) -> None:
    _play(engine, stale_edit_applied=True)


@session_fault(
    "documented-plays-latest-no-dedup",
    "Under documented, an unchanged re-read gets the content (latest's READ-DEDUP-1)",
    breaks=("READ-DEDUP-1",),
)
def _documented_no_dedup(engine: MutantEngine) -> None:
    _play(engine, dedup=False)


@session_fault(
    "documented-plays-2188-read-deny",
    "Under documented, a Read deny rule lets a file be created (2.1.88's PERM-READDENY-1)",
    breaks=("PERM-READDENY-1",),
)
def _documented_read_deny(engine: MutantEngine) -> None:
    _play(engine, read_deny_blocks_edits="existing")


# -- the documented contract under the measured profiles ------------------------------


@session_fault(
    "latest-plays-documented-edit-read",
    "Under claude-code-latest, Edit of a never-read file is refused (documented EDIT-READ-1)",
    breaks=("EDIT-READ-1",),
    profile="claude-code-latest",
)
def _latest_edit_read(engine: MutantEngine) -> None:
    _play(engine, edit_needs_read=True)


@session_fault(
    "latest-plays-documented-staleness",
    "Under claude-code-latest, a file touched with the same text is stale (STATE-STALE-1)",
    breaks=("STATE-STALE-1",),
    profile="claude-code-latest",
)
def _latest_staleness(engine: MutantEngine) -> None:
    _play(engine, stale_by_content=False)


@session_fault(
    "latest-plays-2188-write-read",
    "Under claude-code-latest, Write needs some record of a text file (2.1.88's WRITE-READ-1)",
    breaks=("WRITE-READ-1",),
    profile="claude-code-latest",
)
def _latest_write_read(engine: MutantEngine) -> None:
    _play(engine, write_read="any")


@session_fault(
    "2188-plays-documented-write-read",
    "Under claude-code-2.1.88, a partial Read does not let Write through (documented WRITE-READ-1)",
    breaks=("WRITE-READ-1",),
    profile="claude-code-2.1.88",
)
def _2188_write_read(engine: MutantEngine) -> None:
    _play(engine, write_read="full")


@session_fault(
    "2188-plays-documented-read-deny",
    "Under claude-code-2.1.88, a Read deny rule refuses a new file (PERM-READDENY-1)",
    breaks=("PERM-READDENY-1",),
    profile="claude-code-2.1.88",
)
def _2188_read_deny(engine: MutantEngine) -> None:
    _play(engine, read_deny_blocks_edits="always")


@session_fault(
    "documented-plays-2188-no-thinspace-retry",
    "Under documented, a screenshot name is not retried with the other space (READ-THINSPACE-1)",
    breaks=("READ-THINSPACE-1",),
)
def _documented_no_thinspace_retry(engine: MutantEngine) -> None:
    _play(engine, thin_space_retry=False)


@session_fault(
    "latest-plays-documented-thinspace-retry",
    "Under claude-code-latest, a screenshot name is retried with the other space",
    breaks=("READ-THINSPACE-1",),
    profile="claude-code-latest",
)
def _latest_thinspace_retry(engine: MutantEngine) -> None:
    _play(engine, thin_space_retry=True)


# -- the variants modelled after the whole 2.1.332 run ---------------------------------


@session_fault(
    "documented-plays-latest-state-note",
    "Under documented, Write and Edit texts end with 2.1.332's file-state note",
    breaks=("WRITE-RESULT-1", "EDIT-RESULT-1"),
)
def _documented_state_note(engine: MutantEngine) -> None:
    _play(engine, write_state_note=True, edit_state_note=True)


@session_fault(
    "documented-plays-latest-bom",
    "Under documented, Write and an Edit filling a BOM-only file keep the byte order mark",
    breaks=("WRITE-ENC-1", "EDIT-CREATE-1"),
)
def _documented_bom(engine: MutantEngine) -> None:
    _play(engine, write_keeps_bom=True, fill_keeps_bom=True)


@session_fault(
    "documented-plays-latest-cell-types",
    "Under documented, a cell whose type changes gets its new type's keys (latest's variant)",
    breaks=("NBEDIT-REPLACE-1",),
)
def _documented_cell_types(engine: MutantEngine) -> None:
    _play(engine, notebook_type_fields=True)


@session_fault(
    "latest-plays-documented-notebook-end",
    "Under claude-code-latest, a written notebook has no final newline (documented NBEDIT-WRITE-1)",
    breaks=("NBEDIT-WRITE-1",),
    profile="claude-code-latest",
)
def _latest_notebook_end(engine: MutantEngine) -> None:
    _play(engine, notebook_final_newline=False)


@session_fault(
    "latest-plays-documented-insert-name",
    "Under claude-code-latest, an insert into a 4.4 notebook names cell-N (documented text)",
    breaks=("NBEDIT-RESULT-1",),
    profile="claude-code-latest",
)
def _latest_insert_name(engine: MutantEngine) -> None:
    _play(engine, unnamed_insert_text=False)


# -- the variants modelled after the profiled runs of 2026-12-04 ------------------------


@session_fault(
    "2188-plays-documented-glob-switches",
    "Under claude-code-2.1.88, CLAUDE_CODE_GLOB_HIDDEN leaves every dot file out and "
    "_NO_IGNORE is read (documented)",
    breaks=("GLOB-HIDDEN-1", "GLOB-IGNORE-1"),
    profile="claude-code-2.1.88",
)
def _2188_glob_switches(engine: MutantEngine) -> None:
    _play(engine, glob_hidden_switch="leaves-out", glob_ignore_switch=True)


@session_fault(
    "documented-plays-2188-glob-switches",
    "Under documented, a Glob pattern wins over CLAUDE_CODE_GLOB_HIDDEN and _NO_IGNORE is "
    "not read (2.1.88's)",
    breaks=("GLOB-HIDDEN-1", "GLOB-IGNORE-1"),
)
def _documented_glob_switches(engine: MutantEngine) -> None:
    _play(engine, glob_hidden_switch="pattern-wins", glob_ignore_switch=False)


@session_fault(
    "2188-plays-documented-call-error-wrap",
    "Under claude-code-2.1.88, a call() error's text is wrapped in <tool_use_error>",
    breaks=("ERR-CODE-2",),
    profile="claude-code-2.1.88",
)
def _2188_call_error_wrap(engine: MutantEngine) -> None:
    _play(engine, texts={})


@session_fault(
    "documented-plays-release-call-error-text",
    "Under documented, a call() error's text is not wrapped (the releases' rendering)",
    breaks=("ERR-CODE-2",),
)
def _documented_call_error_text(engine: MutantEngine) -> None:
    _play(engine, texts={"call_error": "{message}"})


@session_fault(
    "2188-plays-documented-search-paths",
    "Under claude-code-2.1.88, Glob and Grep name files by absolute paths (documented)",
    breaks=("GLOB-OUTPUT-1", "GREP-OUTPUT-1"),
    profile="claude-code-2.1.88",
)
def _2188_search_paths(engine: MutantEngine) -> None:
    _play(engine, glob_paths_relative=False, grep_paths_relative=False)


@session_fault(
    "documented-plays-2188-search-paths",
    "Under documented, Glob and Grep name files relative to the cwd (2.1.88's rendering)",
    breaks=("GLOB-OUTPUT-1", "GREP-OUTPUT-1"),
)
def _documented_search_paths(engine: MutantEngine) -> None:
    _play(engine, glob_paths_relative=True, grep_paths_relative=True)


@session_fault(
    "2188-plays-documented-cascade",
    "Under claude-code-2.1.88, a failed Bash cancels the rest of its batch (documented)",
    breaks=("SCHED-CASCADE-1",),
    profile="claude-code-2.1.88",
)
def _2188_cascade(engine: MutantEngine) -> None:
    _play(engine, bash_cascade=True)


@session_fault(
    "documented-plays-release-no-cascade",
    "Under documented, a failed Bash cancels nothing (the releases' SCHED-CASCADE-1)",
    breaks=("SCHED-CASCADE-1",),
)
def _documented_no_cascade(engine: MutantEngine) -> None:
    _play(engine, bash_cascade=False)


@session_fault(
    "2188-plays-documented-hook-update",
    "Under claude-code-2.1.88, the first allowing hook's updatedInput counts (documented)",
    breaks=("HOOK-UPDATE-1",),
    profile="claude-code-2.1.88",
)
def _2188_hook_update(engine: MutantEngine) -> None:
    _play(engine, hook_updated_input="with-allow-or-ask")


@session_fault(
    "latest-plays-documented-hook-update",
    "Under claude-code-latest, updatedInput needs its hook's allow or ask (documented)",
    breaks=("HOOK-UPDATE-1",),
    profile="claude-code-latest",
)
def _latest_hook_update(engine: MutantEngine) -> None:
    _play(engine, hook_updated_input="with-allow-or-ask")


@session_fault(
    "documented-plays-2188-hook-update",
    "Under documented, only the hook that ended last gives updatedInput (2.1.88's)",
    breaks=("HOOK-UPDATE-1",),
)
def _documented_hook_update(engine: MutantEngine) -> None:
    _play(engine, hook_updated_input="last-ended")


@session_fault(
    "2188-plays-documented-temp-cleanup",
    "Under claude-code-2.1.88, a write removes a killed writer's temporary file (documented)",
    breaks=("WRITE-ATOMIC-2",),
    profile="claude-code-2.1.88",
)
def _2188_temp_cleanup(engine: MutantEngine) -> None:
    _play(engine, killed_writer_cleanup=True)


@session_fault(
    "documented-plays-release-temp-left",
    "Under documented, a killed writer's temporary file is left (the releases' WRITE-ATOMIC-2)",
    breaks=("WRITE-ATOMIC-2",),
)
def _documented_temp_left(engine: MutantEngine) -> None:
    _play(engine, killed_writer_cleanup=False)


@session_fault(
    "latest-plays-documented-notebook-check",
    "Under claude-code-latest, an empty old_string does not create a notebook (documented)",
    breaks=("EDIT-CREATE-1",),
    profile="claude-code-latest",
)
def _latest_notebook_check(engine: MutantEngine) -> None:
    _play(engine, notebook_created_by_edit=False)


@session_fault(
    "documented-plays-release-notebook-creation",
    "Under documented, an empty old_string creates a new notebook (the releases' EDIT-CREATE-1)",
    breaks=("EDIT-CREATE-1",),
)
def _documented_notebook_creation(engine: MutantEngine) -> None:
    _play(engine, notebook_created_by_edit=True)


@session_fault(
    "2188-plays-documented-hook-texts",
    "Under claude-code-2.1.88, hook texts are in the result and blocks say Blocked by (documented)",
    breaks=("HOOK-BLOCK-1", "HOOK-CONTEXT-1"),
    profile="claude-code-2.1.88",
)
def _2188_hook_texts(engine: MutantEngine) -> None:
    _play(engine, hook_texts_in_result=True, texts={"call_error": "{message}"})


@session_fault(
    "latest-plays-2188-hook-block",
    "Under claude-code-latest, a JSON deny's reason is shown alone (2.1.88's HOOK-BLOCK-1)",
    breaks=("HOOK-BLOCK-1",),
    profile="claude-code-latest",
)
def _latest_hook_block(engine: MutantEngine) -> None:
    texts = dict(engine.live_session.profile.texts)
    texts.pop("hook_denial", None)
    _play(engine, texts=texts)


@session_fault(
    "documented-plays-release-hook-context",
    "Under documented, hook texts stay out of the tool_result (the releases' HOOK-CONTEXT-1)",
    breaks=("HOOK-CONTEXT-1",),
)
def _documented_hook_context(engine: MutantEngine) -> None:
    _play(engine, hook_texts_in_result=False)


@session_fault(
    "latest-plays-documented-read-reminder",
    "Under claude-code-latest, a text view ends with the malware reminder (documented)",
    breaks=("READ-REMINDER-1",),
    profile="claude-code-latest",
)
def _latest_read_reminder(engine: MutantEngine) -> None:
    texts = dict(engine.live_session.profile.texts)
    texts.pop("read_reminder", None)
    _play(engine, texts=texts)


@session_fault(
    "latest-plays-no-model-exception",
    "Under claude-code-latest, an older model still lets a never-read file be written",
    breaks=("WRITE-READ-1", "EDIT-READ-1"),
    profile="claude-code-latest",
)
def _latest_no_model_exception(engine: MutantEngine) -> None:
    _play(engine, read_kept_for_models=())


@session_fault(
    "2188-plays-documented-bash-texts",
    "Under claude-code-2.1.88, Bash's output, reset line and shortening are documented ones",
    breaks=("BASH-RESULT-1", "BASH-CWD-1", "BASH-FAIL-2"),
    profile="claude-code-2.1.88",
)
def _2188_bash_texts(engine: MutantEngine) -> None:
    _play(
        engine,
        bash_output="documented",
        bash_failure_reset_line=True,
        bash_failure_shortens_message=False,
    )


@session_fault(
    "documented-plays-release-bash-texts",
    "Under documented, Bash answers the releases' output shape, reset line and shortening",
    breaks=("BASH-RESULT-1", "BASH-CWD-1", "BASH-FAIL-2"),
)
def _documented_bash_texts(engine: MutantEngine) -> None:
    _play(
        engine,
        bash_output="release",
        bash_failure_reset_line=False,
        bash_failure_shortens_message=True,
    )


@session_fault(
    "2188-plays-documented-permission-texts",
    "Under claude-code-2.1.88, a deny rule's and dontAsk's refusals read as documented",
    breaks=("PERM-MESSAGE-1",),
    profile="claude-code-2.1.88",
)
def _2188_permission_texts(engine: MutantEngine) -> None:
    kept = ("deny_rule_command", "deny_rule_search", "deny_rule_read", "dont_ask")
    texts = {k: v for k, v in engine.live_session.profile.texts.items() if k not in kept}
    _play(engine, texts=texts)


@session_fault(
    "2188-plays-documented-grep-output",
    "Under claude-code-2.1.88, Grep's structured output has every field, nulls included",
    breaks=("GREP-OUTPUT-1",),
    profile="claude-code-2.1.88",
)
def _2188_grep_output(engine: MutantEngine) -> None:
    _play(engine, grep_output="documented")


@session_fault(
    "2188-plays-documented-result-paths",
    "Under claude-code-2.1.88, results name the expanded path (documented FILE-PATH-1)",
    breaks=("FILE-PATH-1",),
    profile="claude-code-2.1.88",
)
def _2188_result_paths(engine: MutantEngine) -> None:
    _play(engine, result_paths_as_given=False)


@session_fault(
    "latest-plays-documented-edit-sentence",
    "Under claude-code-latest, a replace_all Edit says All occurrences were replaced",
    breaks=("EDIT-RESULT-1",),
    profile="claude-code-latest",
)
def _latest_edit_sentence(engine: MutantEngine) -> None:
    texts = dict(engine.live_session.profile.texts)
    texts.pop("edit_done_all", None)
    _play(engine, texts=texts)


@session_fault(
    "2188-plays-documented-modifier-timing",
    "Under claude-code-2.1.88, a cd holds for the later batches of its own message (documented)",
    breaks=("SCHED-CONTEXT-1",),
    profile="claude-code-2.1.88",
)
def _2188_modifier_timing(engine: MutantEngine) -> None:
    _play(engine, modifiers_between_batches=True)


@session_fault(
    "latest-plays-documented-modifier-timing",
    "Under claude-code-latest, a cd holds for the later batches of its own message (documented)",
    breaks=("SCHED-CONTEXT-1",),
    profile="claude-code-latest",
)
def _latest_modifier_timing(engine: MutantEngine) -> None:
    _play(engine, modifiers_between_batches=True)


@session_fault(
    "documented-plays-release-modifier-timing",
    "Under documented, a modifier applies only once its message has run (the releases')",
    breaks=("SCHED-CONTEXT-1",),
)
def _documented_modifier_timing(engine: MutantEngine) -> None:
    _play(engine, modifiers_between_batches=False)


@session_fault(
    "latest-plays-documented-bash-texts",
    "Under claude-code-latest, Bash's output, reset line and shortening are documented ones",
    breaks=("BASH-RESULT-1", "BASH-CWD-1", "BASH-FAIL-2"),
    profile="claude-code-latest",
)
def _latest_bash_texts(engine: MutantEngine) -> None:
    _play(
        engine,
        bash_output="documented",
        bash_failure_reset_line=True,
        bash_failure_shortens_message=False,
    )


@session_fault(
    "latest-plays-documented-permission-texts",
    "Under claude-code-latest, a deny rule's and dontAsk's refusals read as documented",
    breaks=("PERM-MESSAGE-1",),
    profile="claude-code-latest",
)
def _latest_permission_texts(engine: MutantEngine) -> None:
    kept = ("deny_rule_command", "deny_rule_read", "dont_ask")
    texts = {k: v for k, v in engine.live_session.profile.texts.items() if k not in kept}
    _play(engine, texts=texts)


@session_fault(
    "latest-plays-documented-result-paths",
    "Under claude-code-latest, results name the expanded path (documented FILE-PATH-1)",
    breaks=("FILE-PATH-1",),
    profile="claude-code-latest",
)
def _latest_result_paths(engine: MutantEngine) -> None:
    _play(engine, result_paths_as_given=False)


@session_fault(
    "documented-plays-release-result-paths",
    "Under documented, results name the path as the call gave it (the releases' FILE-PATH-1)",
    breaks=("FILE-PATH-1",),
)
def _documented_result_paths(engine: MutantEngine) -> None:
    _play(engine, result_paths_as_given=True)


@session_fault(
    "documented-plays-2188-grep-output",
    "Under documented, Grep's structured output has only its mode's fields (2.1.88's)",
    breaks=("GREP-OUTPUT-1",),
)
def _documented_grep_output(engine: MutantEngine) -> None:
    _play(engine, grep_output="release")


@session_fault(
    "2188-plays-documented-edit-sentence",
    "Under claude-code-2.1.88, a replace_all Edit says All occurrences were replaced",
    breaks=("EDIT-RESULT-1",),
    profile="claude-code-2.1.88",
)
def _2188_edit_sentence(engine: MutantEngine) -> None:
    texts = dict(engine.live_session.profile.texts)
    texts.pop("edit_done_all", None)
    _play(engine, texts=texts)


@session_fault(
    "2188-plays-documented-grep-edges",
    "Under claude-code-2.1.88, Grep errs on a bad pattern, notes an offset past the end and "
    "totals a file searched alone (documented)",
    breaks=("GREP-ERROR-1", "GREP-PAGE-1", "GREP-COUNT-1"),
    profile="claude-code-2.1.88",
)
def _2188_grep_edges(engine: MutantEngine) -> None:
    _play(
        engine,
        grep_invalid_pattern_errs=True,
        grep_past_end_notice=True,
        grep_count_totals_alone=True,
    )


@session_fault(
    "documented-plays-2188-grep-invalid-pattern",
    "Under documented, an invalid Grep pattern finds nothing (2.1.88's GREP-ERROR-1)",
    breaks=("GREP-ERROR-1",),
)
def _documented_grep_invalid_pattern(engine: MutantEngine) -> None:
    _play(engine, grep_invalid_pattern_errs=False)


@session_fault(
    "documented-plays-2188-grep-past-end",
    "Under documented, an offset past the end answers as an empty search (2.1.88's)",
    breaks=("GREP-PAGE-1",),
)
def _documented_grep_past_end(engine: MutantEngine) -> None:
    _play(engine, grep_past_end_notice=False)


@session_fault(
    "documented-plays-2188-grep-count-totals",
    "Under documented, a file searched alone totals zero in count mode (2.1.88's)",
    breaks=("GREP-COUNT-1",),
)
def _documented_grep_count_totals(engine: MutantEngine) -> None:
    _play(engine, grep_count_totals_alone=False)


@session_fault(
    "2188-plays-documented-spaced-matcher",
    "Under claude-code-2.1.88, a hook list matcher tolerates spaces (documented HOOK-MATCH-1)",
    breaks=("HOOK-MATCH-1",),
    profile="claude-code-2.1.88",
)
def _2188_spaced_matcher(engine: MutantEngine) -> None:
    _play(engine, hook_spaced_lists=True)


@session_fault(
    "documented-plays-2188-spaced-matcher",
    "Under documented, a hook list matcher with spaces is a regular expression (2.1.88's)",
    breaks=("HOOK-MATCH-1",),
)
def _documented_spaced_matcher(engine: MutantEngine) -> None:
    _play(engine, hook_spaced_lists=False)


@session_fault(
    "2188-plays-documented-read-inputs",
    "Under claude-code-2.1.88, Read refuses offset 0 and numbers given as strings (documented)",
    breaks=("READ-RANGE-1", "DISP-SCHEMA-1"),
    profile="claude-code-2.1.88",
)
def _2188_read_inputs(engine: MutantEngine) -> None:
    _play(engine, read_offset_zero=False, numeric_strings=False)


@session_fault(
    "latest-plays-documented-read-inputs",
    "Under claude-code-latest, Read refuses offset 0 and numbers given as strings (documented)",
    breaks=("READ-RANGE-1", "DISP-SCHEMA-1"),
    profile="claude-code-latest",
)
def _latest_read_inputs(engine: MutantEngine) -> None:
    _play(engine, read_offset_zero=False, numeric_strings=False)


@session_fault(
    "documented-plays-release-read-inputs",
    "Under documented, Read takes offset 0 and numbers given as strings (the releases')",
    breaks=("READ-RANGE-1", "DISP-SCHEMA-1"),
)
def _documented_read_inputs(engine: MutantEngine) -> None:
    _play(engine, read_offset_zero=True, numeric_strings=True)


@session_fault(
    "2188-plays-documented-default-limit",
    "Under claude-code-2.1.88, Read without limit stops at 2000 lines (documented READ-RANGE-2)",
    breaks=("READ-RANGE-2",),
    profile="claude-code-2.1.88",
)
def _2188_default_limit(engine: MutantEngine) -> None:
    _play(engine, read_default_limit=True)


@session_fault(
    "documented-plays-2188-no-default-limit",
    "Under documented, Read without limit shows the whole file (2.1.88's READ-RANGE-2)",
    breaks=("READ-RANGE-2",),
)
def _documented_no_default_limit(engine: MutantEngine) -> None:
    _play(engine, read_default_limit=False)


@session_fault(
    "latest-plays-2188-failure-limit",
    "Under claude-code-latest, a failure's message over the limit is shortened whatever its "
    "output (2.1.88's BASH-FAIL-2)",
    breaks=("BASH-FAIL-2",),
    profile="claude-code-latest",
)
def _latest_failure_limit(engine: MutantEngine) -> None:
    _play(engine, bash_failure_limit_on_output=False)


@session_fault(
    "2188-plays-documented-utf16-read",
    "Under claude-code-2.1.88, Read decodes a UTF-16LE file (documented TEXT-ENC-1)",
    breaks=("TEXT-ENC-1",),
    profile="claude-code-2.1.88",
)
def _2188_utf16_read(engine: MutantEngine) -> None:
    _play(engine, read_decodes_utf16=True)


@session_fault(
    "documented-plays-2188-utf16-read",
    "Under documented, Read shows a UTF-16LE file's bytes as UTF-8 (2.1.88's TEXT-ENC-1)",
    breaks=("TEXT-ENC-1",),
)
def _documented_utf16_read(engine: MutantEngine) -> None:
    _play(engine, read_decodes_utf16=False)


@session_fault(
    "2188-plays-documented-empty-image",
    "Under claude-code-2.1.88, an empty file named like an image reads as text (documented)",
    breaks=("IMG-DETECT-1",),
    profile="claude-code-2.1.88",
)
def _2188_empty_image(engine: MutantEngine) -> None:
    _play(engine, empty_image_is_text=True)


@session_fault(
    "documented-plays-release-empty-image",
    "Under documented, an empty file named like an image is refused (the releases')",
    breaks=("IMG-DETECT-1",),
)
def _documented_empty_image(engine: MutantEngine) -> None:
    _play(engine, empty_image_is_text=False)


# -- Bash allow rules and file commands (PERM-BASH-1) ----------------------------------


@session_fault(
    "2188-plays-documented-bash-file-commands",
    "Under claude-code-2.1.88, a Bash(touch:*) rule allows touch (documented PERM-BASH-1)",
    breaks=("PERM-BASH-1",),
    profile="claude-code-2.1.88",
)
def _2188_bash_file_commands(engine: MutantEngine) -> None:
    _play(engine, bash_rules_cover_file_commands=True)


@session_fault(
    "documented-plays-2188-bash-file-commands",
    "Under documented, a Bash(mkdir:*) rule leaves mkdir asking (2.1.88's PERM-BASH-1)",
    breaks=("PERM-BASH-1",),
)
def _documented_bash_file_commands(engine: MutantEngine) -> None:
    _play(engine, bash_rules_cover_file_commands=False)


# -- binary files told by name (READ-BINARY-1) -------------------------------------------


@session_fault(
    "2188-plays-documented-binary-by-bytes",
    "Under claude-code-2.1.88, binary is told by the bytes (documented READ-BINARY-1)",
    breaks=("READ-BINARY-1",),
    profile="claude-code-2.1.88",
)
def _2188_binary_by_bytes(engine: MutantEngine) -> None:
    _play(engine, binary_extensions=None)


@session_fault(
    "documented-plays-2188-binary-by-name",
    "Under documented, binary is told by the name (2.1.88's READ-BINARY-1)",
    breaks=("READ-BINARY-1",),
)
def _documented_binary_by_name(engine: MutantEngine) -> None:
    _play(engine, binary_extensions=BINARY_EXTENSIONS_2188)


@session_fault(
    "latest-plays-2188-binary-names",
    "Under claude-code-latest, the shorter list of 2.1.88 tells binary files (READ-BINARY-1)",
    breaks=("READ-BINARY-1",),
    profile="claude-code-latest",
)
def _latest_binary_names(engine: MutantEngine) -> None:
    _play(engine, binary_extensions=BINARY_EXTENSIONS_2188)


# -- notebooks, NotebookEdit and PDFs ---------------------------------------------------

_NOTEBOOK_PDF_TEXTS = (
    "nbedit_not_notebook",
    "nbedit_not_json",
    "nbedit_no_cells",
    "nbedit_index_not_found",
    "notebook_not_json",
    "notebook_too_large",
    "pdf_pages_invalid",
    "pdf_pages_too_many",
    "pdf_too_large",
    "pdf_whole_read",
    "pdf_pages_required",
    "read_empty",
    "notebook_too_many_tokens",
    "pdf_invalid",
    "pdf_page_out_of_range",
)


def _documented_notebook_pdf_texts(engine: MutantEngine) -> None:
    """The session's profile with the documented notebook and PDF texts."""
    texts = engine.live_session.profile.texts
    _play(engine, texts={k: v for k, v in texts.items() if k not in _NOTEBOOK_PDF_TEXTS})


@session_fault(
    "2188-plays-documented-notebook-pdf-texts",
    "Under claude-code-2.1.88, NotebookEdit's and PDF Read's refusals and notes are documented",
    breaks=(
        "NBEDIT-VALIDATE-1",
        "NB-RENDER-1",
        "NB-TOKENS-1",
        "PDF-PAGES-1",
        "PDF-PAGES-2",
        "PDF-REQUIRE-1",
        "PDF-SIZE-1",
        "PDF-SEND-1",
    ),
    profile="claude-code-2.1.88",
)
def _2188_notebook_pdf_texts(engine: MutantEngine) -> None:
    _documented_notebook_pdf_texts(engine)


@session_fault(
    "latest-plays-documented-notebook-pdf-texts",
    "Under claude-code-latest, notebook and PDF refusals and notes are documented",
    breaks=(
        "NBEDIT-VALIDATE-1",
        "NB-SIZE-1",
        "NB-PARSE-1",
        "NB-TOKENS-1",
        "PDF-OPEN-1",
        "PDF-PAGES-1",
        "PDF-PAGES-2",
        "PDF-RANGE-1",
        "PDF-REQUIRE-1",
        "PDF-SIZE-1",
        "PDF-SEND-1",
    ),
    profile="claude-code-latest",
)
def _latest_notebook_pdf_texts(engine: MutantEngine) -> None:
    _documented_notebook_pdf_texts(engine)


@session_fault(
    "2188-plays-documented-nbedit-result",
    "Under claude-code-2.1.88, NotebookEdit names a cell without an id cell-N, documented output",
    breaks=("NBEDIT-RESULT-1",),
    profile="claude-code-2.1.88",
)
def _2188_nbedit_result(engine: MutantEngine) -> None:
    _play(engine, notebook_edit_output="documented", unnamed_cell=None)


@session_fault(
    "2188-plays-documented-nameless-cell",
    "Under claude-code-2.1.88, a cell without an id is named cell-N (documented NBEDIT-RESULT-1)",
    breaks=("NBEDIT-RESULT-1",),
    profile="claude-code-2.1.88",
)
def _2188_nameless_cell(engine: MutantEngine) -> None:
    _play(engine, unnamed_cell=None)


@session_fault(
    "documented-plays-2188-nameless-cell",
    "Under documented, a cell without an id is named undefined (2.1.88's NBEDIT-RESULT-1)",
    breaks=("NBEDIT-RESULT-1",),
)
def _documented_nameless_cell(engine: MutantEngine) -> None:
    _play(engine, unnamed_cell="undefined")


@session_fault(
    "documented-plays-release-nbedit-output",
    "Under documented, NotebookEdit's output is the releases' (language, files, call's type)",
    breaks=("NBEDIT-RESULT-1",),
)
def _documented_nbedit_output(engine: MutantEngine) -> None:
    _play(engine, notebook_edit_output="release")


@session_fault(
    "latest-plays-2188-nbedit-output",
    "Under claude-code-latest, NotebookEdit's output has no old_source (2.1.88's)",
    breaks=("NBEDIT-RESULT-1",),
    profile="claude-code-latest",
)
def _latest_nbedit_output(engine: MutantEngine) -> None:
    _play(engine, notebook_old_source=False)


@session_fault(
    "latest-plays-documented-cell-ids",
    "Under claude-code-latest, a new cell's id is 11 letters and digits (documented)",
    breaks=("NBEDIT-INSERT-1",),
    profile="claude-code-latest",
)
def _latest_cell_ids(engine: MutantEngine) -> None:
    _play(engine, new_cell_id_hex=False)


@session_fault(
    "2188-plays-documented-missing-notebook",
    "Under claude-code-2.1.88, a missing notebook is refused as missing (documented order)",
    breaks=("NBEDIT-VALIDATE-1",),
    profile="claude-code-2.1.88",
)
def _2188_missing_notebook(engine: MutantEngine) -> None:
    _play(engine, notebook_missing_unread=False)


@session_fault(
    "documented-plays-release-missing-notebook",
    "Under documented, a missing notebook is refused as never read (the releases' order)",
    breaks=("NBEDIT-VALIDATE-1",),
)
def _documented_missing_notebook(engine: MutantEngine) -> None:
    _play(engine, notebook_missing_unread=True)


@session_fault(
    "2188-plays-documented-pdf-document",
    "Under claude-code-2.1.88, a whole PDF read's document is in the tool_result (documented)",
    breaks=("PDF-SEND-1",),
    profile="claude-code-2.1.88",
)
def _2188_pdf_document(engine: MutantEngine) -> None:
    _play(engine, pdf_document_in_result=True)


@session_fault(
    "documented-plays-2188-pdf-document",
    "Under documented, a whole PDF read's document is beside the tool_result (2.1.88's)",
    breaks=("PDF-SEND-1",),
)
def _documented_pdf_document(engine: MutantEngine) -> None:
    _play(engine, pdf_document_in_result=False)


@session_fault(
    "2188-plays-documented-pdf-output",
    "Under claude-code-2.1.88, a whole PDF read's output counts its pages (documented)",
    breaks=("PDF-SEND-1",),
    profile="claude-code-2.1.88",
)
def _2188_pdf_output(engine: MutantEngine) -> None:
    _play(engine, pdf_whole_output_counts_pages=True)


@session_fault(
    "documented-plays-release-pdf-output",
    "Under documented, a whole PDF read's output has no page count (the releases')",
    breaks=("PDF-SEND-1",),
)
def _documented_pdf_output(engine: MutantEngine) -> None:
    _play(engine, pdf_whole_output_counts_pages=False)


@session_fault(
    "2188-plays-documented-notebook-view",
    "Under claude-code-2.1.88, a notebook's blocks are documented (one per cell and output)",
    breaks=("NB-RENDER-1", "NB-OUTPUT-1"),
    profile="claude-code-2.1.88",
)
def _2188_notebook_view(engine: MutantEngine) -> None:
    _play(engine, notebook_joined_text=False, notebook_release_outputs=False)


@session_fault(
    "latest-plays-documented-notebook-outputs",
    "Under claude-code-latest, notebook outputs lose ANSI codes, show every image (documented)",
    breaks=("NB-OUTPUT-1",),
    profile="claude-code-latest",
)
def _latest_notebook_outputs(engine: MutantEngine) -> None:
    _play(engine, notebook_release_outputs=False)


@session_fault(
    "documented-plays-release-notebook-view",
    "Under documented, a notebook's text blocks are joined into one (the releases' NB-RENDER-1)",
    breaks=("NB-RENDER-1",),
)
def _documented_notebook_view(engine: MutantEngine) -> None:
    _play(engine, notebook_joined_text=True)


@session_fault(
    "2188-plays-documented-notebook-output",
    "Under claude-code-2.1.88, a notebook read's output holds the cells as stored (documented)",
    breaks=("NB-RENDER-1",),
    profile="claude-code-2.1.88",
)
def _2188_notebook_output(engine: MutantEngine) -> None:
    _play(engine, notebook_shown_cells=False)


@session_fault(
    "documented-plays-release-notebook-output",
    "Under documented, a notebook read's output holds the cells as shown (the releases')",
    breaks=("NB-RENDER-1",),
)
def _documented_notebook_output(engine: MutantEngine) -> None:
    _play(engine, notebook_shown_cells=True)


# -- validation, schema error, read, registry, MCP and hook-input texts --------------


def _drop_texts(engine: MutantEngine, *keys: str) -> None:
    """Give the open session its profile without its own templates for ``keys``."""
    texts = {k: v for k, v in engine.live_session.profile.texts.items() if k not in keys}
    _play(engine, texts=texts)


@session_fault(
    "2188-plays-documented-integer-type",
    "Under claude-code-2.1.88, an integer field given a boolean is expected as `integer` "
    "(documented DISP-SCHEMA-2)",
    breaks=("DISP-SCHEMA-2",),
    profile="claude-code-2.1.88",
)
def _2188_integer_type(engine: MutantEngine) -> None:
    _drop_texts(engine, "schema_integer_type")


@session_fault(
    "latest-plays-documented-integer-fraction",
    "Under claude-code-latest, an integer field given 1.5 is expected as `integer` "
    "(documented DISP-SCHEMA-2)",
    breaks=("DISP-SCHEMA-2",),
    profile="claude-code-latest",
)
def _latest_integer_fraction(engine: MutantEngine) -> None:
    _drop_texts(engine, "schema_integer_fraction")


@session_fault(
    "2188-plays-documented-not-object-line",
    "Under claude-code-2.1.88, a non-object input's line names the input (documented)",
    breaks=("DISP-SCHEMA-2",),
    profile="claude-code-2.1.88",
)
def _2188_not_object_line(engine: MutantEngine) -> None:
    _drop_texts(engine, "schema_not_object")


@session_fault(
    "2188-plays-documented-constraint-lines",
    "Under claude-code-2.1.88, a breached constraint gets its line (documented DISP-SCHEMA-2)",
    breaks=("DISP-SCHEMA-2",),
    profile="claude-code-2.1.88",
)
def _2188_constraint_lines(engine: MutantEngine) -> None:
    _play(engine, schema_constraints="lines")


@session_fault(
    "documented-plays-release-constraint-issues",
    "Under documented, a breached constraint alone is shown as an issue list (the releases')",
    breaks=("DISP-SCHEMA-2",),
)
def _documented_constraint_issues(engine: MutantEngine) -> None:
    _play(engine, schema_constraints="issues")


@session_fault(
    "latest-plays-2188-non-object-input",
    "Under claude-code-latest, a non-object input other than null is refused (2.1.88's)",
    breaks=("DISP-SCHEMA-2",),
    profile="claude-code-latest",
)
def _latest_non_object(engine: MutantEngine) -> None:
    _play(engine, non_object_input="null-empty")


@session_fault(
    "2188-plays-latest-non-object-input",
    "Under claude-code-2.1.88, a non-object input is spread into an object (latest's)",
    breaks=("DISP-SCHEMA-2",),
    profile="claude-code-2.1.88",
)
def _2188_non_object(engine: MutantEngine) -> None:
    _play(engine, non_object_input="spread")


@session_fault(
    "2188-plays-documented-similar-names",
    "Under claude-code-2.1.88, a name differing only in case is suggested (documented)",
    breaks=("READ-SUGGEST-1",),
    profile="claude-code-2.1.88",
)
def _2188_similar_names(engine: MutantEngine) -> None:
    _play(engine, similar_names="case-or-stem")


@session_fault(
    "latest-plays-documented-similar-names",
    "Under claude-code-latest, a name differing only in case is suggested (documented)",
    breaks=("READ-SUGGEST-1",),
    profile="claude-code-latest",
)
def _latest_similar_names(engine: MutantEngine) -> None:
    _play(engine, similar_names="case-or-stem")


@session_fault(
    "2188-plays-documented-suggestion-path",
    "Under claude-code-2.1.88, a suggestion names the file's whole path (documented)",
    breaks=("READ-SUGGEST-1",),
    profile="claude-code-2.1.88",
)
def _2188_suggestion_path(engine: MutantEngine) -> None:
    _drop_texts(engine, "did_you_mean")


@session_fault(
    "latest-plays-documented-read-missing-wrap",
    "Under claude-code-latest, Read's refusal of a missing file is wrapped (documented)",
    breaks=("READ-MISSING-1",),
    profile="claude-code-latest",
)
def _latest_read_missing_wrap(engine: MutantEngine) -> None:
    _drop_texts(engine, "read_missing")


@session_fault(
    "latest-plays-documented-unknown-denied",
    "Under claude-code-latest, a call of a tool a deny rule removed gets the plain text "
    "(documented DISP-FIND-1)",
    breaks=("DISP-FIND-1",),
    profile="claude-code-latest",
)
def _latest_unknown_denied(engine: MutantEngine) -> None:
    _drop_texts(engine, "unknown_tool_denied")


@session_fault(
    "latest-plays-documented-unknown-case",
    "Under claude-code-latest, a tool name in other case gets the plain text (documented)",
    breaks=("DISP-FIND-1",),
    profile="claude-code-latest",
)
def _latest_unknown_case(engine: MutantEngine) -> None:
    _drop_texts(engine, "unknown_tool_case")


@session_fault(
    "latest-plays-documented-empty-file-notice",
    "Under claude-code-latest, an empty file gets the shorter-than-offset notice (documented)",
    breaks=("READ-EMPTY-1",),
    profile="claude-code-latest",
)
def _latest_empty_file_notice(engine: MutantEngine) -> None:
    _drop_texts(engine, "read_empty_file")


@session_fault(
    "latest-plays-documented-empty-view-notice",
    "Under claude-code-latest, a view of empty lines inside a file is the notice (documented)",
    breaks=("READ-OFFSET-1",),
    profile="claude-code-latest",
)
def _latest_empty_view_notice(engine: MutantEngine) -> None:
    _play(engine, empty_view_notice="any")


@session_fault(
    "documented-plays-latest-empty-view-notice",
    "Under documented, a view of empty lines inside a file shows them (latest's READ-OFFSET-1)",
    breaks=("READ-OFFSET-1",),
)
def _documented_empty_view_notice(engine: MutantEngine) -> None:
    _play(engine, empty_view_notice="past-end")


@session_fault(
    "latest-plays-documented-timeout-text",
    "Under claude-code-latest, a timed-out command says its timeout to the millisecond "
    "(documented BASH-TIMEOUT-2)",
    breaks=("BASH-TIMEOUT-2",),
    profile="claude-code-latest",
)
def _latest_timeout_text(engine: MutantEngine) -> None:
    _drop_texts(engine, "bash_timeout")


@session_fault(
    "latest-plays-documented-hook-input-refusal",
    "Under claude-code-latest, a hook's refused replacement gets the model's schema text "
    "(documented HOOK-UPDATE-1)",
    breaks=("HOOK-UPDATE-1",),
    profile="claude-code-latest",
)
def _latest_hook_input_refusal(engine: MutantEngine) -> None:
    _drop_texts(engine, "hook_input_invalid")


@session_fault(
    "latest-plays-documented-hook-input-keys",
    "Under claude-code-latest, a hook's unknown input key is refused (documented HOOK-UPDATE-1)",
    breaks=("HOOK-UPDATE-1",),
    profile="claude-code-latest",
)
def _latest_hook_input_keys(engine: MutantEngine) -> None:
    _play(engine, hook_input_unknown_keys="refused")


@session_fault(
    "latest-plays-documented-hook-input-paths",
    "Under claude-code-latest, call() gets a hook's relative path as given (documented)",
    breaks=("HOOK-UPDATE-1",),
    profile="claude-code-latest",
)
def _latest_hook_input_paths(engine: MutantEngine) -> None:
    _play(engine, hook_input_expanded=False)


@session_fault(
    "2188-plays-documented-background-disabled",
    "Under claude-code-2.1.88, run_in_background with background tasks off gets the "
    "documented refusal (BASH-VALIDATE-1)",
    breaks=("BASH-VALIDATE-1",),
    profile="claude-code-2.1.88",
)
def _2188_background_disabled(engine: MutantEngine) -> None:
    _drop_texts(engine, "bash_background_disabled")


@session_fault(
    "latest-plays-documented-nul-command",
    "Under claude-code-latest, a command with NUL gets the documented refusal (BASH-VALIDATE-1)",
    breaks=("BASH-VALIDATE-1",),
    profile="claude-code-latest",
)
def _latest_nul_command(engine: MutantEngine) -> None:
    _drop_texts(engine, "bash_nul_command")


@session_fault(
    "latest-plays-documented-deferred-hint",
    "Under claude-code-latest, a deferred MCP tool's failure has no schema note (documented)",
    breaks=("REG-DEFER-1",),
    profile="claude-code-latest",
)
def _latest_deferred_hint(engine: MutantEngine) -> None:
    _drop_texts(engine, "deferred_schema_hint")


# -- claude-code-latest's own variants (2.1.332) flipped back -------------------------


@session_fault(
    "latest-plays-documented-symlink-write",
    "Under claude-code-latest, Write and Edit replace a symbolic link's target (WRITE-ATOMIC-1)",
    breaks=("WRITE-ATOMIC-1",),
    profile="claude-code-latest",
)
def _latest_symlink_write(engine: MutantEngine) -> None:
    _play(engine, write_through_symlinks=True)


@session_fault(
    "latest-plays-documented-undecodable-write",
    "Under claude-code-latest, Write replaces a file that is not valid UTF-8 (WRITE-CONTENT-1)",
    breaks=("WRITE-CONTENT-1",),
    profile="claude-code-latest",
)
def _latest_undecodable_write(engine: MutantEngine) -> None:
    _play(engine, write_over_undecodable=True)


@session_fault(
    "latest-plays-documented-limit-zero",
    "Under claude-code-latest, Read refuses limit 0 in its schema (documented READ-RANGE-2)",
    breaks=("READ-RANGE-2",),
    profile="claude-code-latest",
)
def _latest_limit_zero(engine: MutantEngine) -> None:
    _play(engine, read_limit_zero=False)


@session_fault(
    "latest-plays-documented-unsplittable-allow",
    "Under claude-code-latest, an allow rule covers a command that cannot be split (PERM-BASH-2)",
    breaks=("PERM-BASH-2",),
    profile="claude-code-latest",
)
def _latest_unsplittable_allow(engine: MutantEngine) -> None:
    _play(engine, allow_unsplittable_whole=True)


@session_fault(
    "latest-plays-documented-redirect-allow",
    "Under claude-code-latest, an exact rule covers a file redirection (PERM-BASH-3)",
    breaks=("PERM-BASH-3",),
    profile="claude-code-latest",
)
def _latest_redirect_allow(engine: MutantEngine) -> None:
    _play(engine, allow_redirects_and_quoted=True)


@session_fault(
    "latest-plays-documented-project-bypass",
    "Under claude-code-latest, bypassPermissions from localSettings applies (PERM-MODE-4)",
    breaks=("PERM-MODE-4",),
    profile="claude-code-latest",
)
def _latest_project_bypass(engine: MutantEngine) -> None:
    _play(engine, project_bypass=True)


@session_fault(
    "latest-plays-documented-concurrency-limit",
    "Under claude-code-latest, the knob limits how many safe calls run at once (SCHED-LIMIT-1)",
    breaks=("SCHED-LIMIT-1",),
    profile="claude-code-latest",
)
def _latest_concurrency_limit(engine: MutantEngine) -> None:
    _play(engine, concurrency_limited=True)


@session_fault(
    "latest-plays-documented-search-digits",
    'Under claude-code-latest, ToolSearch refuses max_results "2" (documented REG-SEARCH-1)',
    breaks=("REG-SEARCH-1",),
    profile="claude-code-latest",
)
def _latest_search_digits(engine: MutantEngine) -> None:
    _play(engine, search_numeric_strings=False)


@session_fault(
    "latest-plays-documented-hook-fields",
    "Under claude-code-latest, permissionDecision allow beats a deprecated block (HOOK-DECISION-1)",
    breaks=("HOOK-DECISION-1",),
    profile="claude-code-latest",
)
def _latest_hook_fields(engine: MutantEngine) -> None:
    _play(engine, hook_block_wins=False)


@session_fault(
    "latest-plays-documented-read-only-list",
    "Under claude-code-latest, printf and `wc -l < a.txt` ask (documented BASH-READONLY-1)",
    breaks=("BASH-READONLY-1",),
    profile="claude-code-latest",
)
def _latest_read_only_list(engine: MutantEngine) -> None:
    _play(engine, bash_wider_read_only=False)


@session_fault(
    "latest-plays-documented-plan-mode",
    "Under claude-code-latest, plan mode decides as default mode (documented PERM-MODE-3)",
    breaks=("PERM-MODE-3",),
    profile="claude-code-latest",
)
def _latest_plan_mode(engine: MutantEngine) -> None:
    _play(engine, plan_as_default=True)


@session_fault(
    "latest-plays-documented-token-refusal",
    "Under claude-code-latest, a whole-file Read over the cap is refused (TOK-GATE-2)",
    breaks=("TOK-GATE-2",),
    profile="claude-code-latest",
)
def _latest_token_refusal(engine: MutantEngine) -> None:
    _play(engine, token_cap_pages=False)


@session_fault(
    "latest-plays-documented-early-stop",
    'Under claude-code-latest, a refusal says "more than N tokens" (documented TOK-EXACT-2)',
    breaks=("TOK-EXACT-2",),
    profile="claude-code-latest",
)
def _latest_early_stop(engine: MutantEngine) -> None:
    _play(engine, count_whole_view=False)


# -- PDFs: encrypted with an empty password, the pages syntax (PDF-OPEN-1, PDF-PAGES-1) ----


@session_fault(
    "2188-plays-documented-encrypted-pdf",
    "Under claude-code-2.1.88, an encrypted PDF with an empty password is refused (documented)",
    breaks=("PDF-OPEN-1",),
    profile="claude-code-2.1.88",
)
def _2188_encrypted_pdf(engine: MutantEngine) -> None:
    _play(engine, pdf_empty_password_read=False)


@session_fault(
    "documented-plays-release-encrypted-pdf",
    "Under documented, an encrypted PDF with an empty password is read (the releases')",
    breaks=("PDF-OPEN-1",),
)
def _documented_encrypted_pdf(engine: MutantEngine) -> None:
    _play(engine, pdf_empty_password_read=True)


@session_fault(
    "2188-plays-documented-pages-syntax",
    "Under claude-code-2.1.88, pages must be N or N-M exactly (documented PDF-PAGES-1)",
    breaks=("PDF-PAGES-1",),
    profile="claude-code-2.1.88",
)
def _2188_pages_syntax(engine: MutantEngine) -> None:
    _play(engine, pdf_pages_syntax="strict")


@session_fault(
    "latest-plays-2188-pages-syntax",
    "Under claude-code-latest, a list is read by its first page and empty pages refused",
    breaks=("PDF-PAGES-1",),
    profile="claude-code-latest",
)
def _latest_pages_syntax(engine: MutantEngine) -> None:
    _play(engine, pdf_pages_syntax="lenient", pdf_empty_pages_absent=False)


@session_fault(
    "documented-plays-release-pages-syntax",
    "Under documented, pages is read by leading integers (the releases' PDF-PAGES-1)",
    breaks=("PDF-PAGES-1",),
)
def _documented_pages_syntax(engine: MutantEngine) -> None:
    _play(engine, pdf_pages_syntax="lenient")


# -- validation, schema error, read texts (continued) ---------------------------------


@session_fault(
    "latest-plays-documented-default-limit",
    "Under claude-code-latest, Read without limit stops at 2000 lines (documented READ-RANGE-2)",
    breaks=("READ-RANGE-2",),
    profile="claude-code-latest",
)
def _latest_default_limit(engine: MutantEngine) -> None:
    _play(engine, read_default_limit=True)


# -- a shell killed by a signal (BASH-FAIL-1) --------------------------------------------


@session_fault(
    "2188-plays-documented-signal-exit",
    "Under claude-code-2.1.88, a shell killed by signal 9 answers Exit code 137 (documented)",
    breaks=("BASH-FAIL-1",),
    profile="claude-code-2.1.88",
)
def _2188_signal_exit(engine: MutantEngine) -> None:
    _play(engine, signal_death_code=None)


@session_fault(
    "documented-plays-release-signal-exit",
    "Under documented, a shell killed by a signal answers Exit code 1 (the releases')",
    breaks=("BASH-FAIL-1",),
)
def _documented_signal_exit(engine: MutantEngine) -> None:
    _play(engine, signal_death_code=1)


# -- the concurrency limit read by its leading digits (SCHED-LIMIT-1) ---------------------


@session_fault(
    "2188-plays-documented-limit-digits",
    "Under claude-code-2.1.88, a limit of 2.5 is ignored for 10 (documented SCHED-LIMIT-1)",
    breaks=("SCHED-LIMIT-1",),
    profile="claude-code-2.1.88",
)
def _2188_limit_digits(engine: MutantEngine) -> None:
    _play(engine, concurrency_leading_digits=False)


@session_fault(
    "documented-plays-2188-limit-digits",
    "Under documented, a limit of 2.5 is read as 2 (2.1.88's SCHED-LIMIT-1)",
    breaks=("SCHED-LIMIT-1",),
)
def _documented_limit_digits(engine: MutantEngine) -> None:
    _play(engine, concurrency_leading_digits=True)
