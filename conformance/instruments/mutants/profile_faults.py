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
