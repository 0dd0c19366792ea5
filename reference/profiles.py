"""Behaviour profiles: the contracts the engine can play, one per session (SPEC.md 0.5).

A profile names a variant for each SPEC ID whose behaviour differs between
contracts; every other ID is the same under all of them. This module is the
one place that decides what a profile changes: the tools read a field of
``session.profile`` (each field cites its ID), they never test a profile's
name. A new variant is a new field here, its value in the profiles that
have it, and the ``profiles:`` statement of its ID's evidence entry
(``spec/evidence/``), from which SPEC.md's annex of each profile is generated.

``open`` lists the IDs a profile was measured to differ on but does not
model (PROFILE-OPEN-1): the engine plays the documented behaviour there, and
the scenarios of that behaviour do not hold under the profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

__all__ = [
    "DEFAULT_PROFILE",
    "DOCUMENTED",
    "PROFILES",
    "STALE_EDIT_NOTE",
    "STATE_NOTE",
    "VARIANT_IDS",
    "Profile",
    "profile_named",
    "varying_ids",
]

WriteRead = Literal["full", "any", "unread-text"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """One contract's variants (PROFILE-SET-1); the defaults are the documented contract."""

    name: str
    version: str | None = None
    """The measured release the profile plays, when it plays one (PROFILE-SET-1)."""
    write_read: WriteRead = "full"
    """WRITE-READ-1: the record Write needs over an existing file: a full one, any one
    (partial included), or, for a file Read would show as text, none at all
    (``unread-text``; an image, a PDF or a notebook still needs a full one). A record
    there is, is checked for staleness all the same."""
    edit_needs_read: bool = True
    """EDIT-READ-1: Edit of an existing file needs a record."""
    stale_edit_applied: bool = False
    """STATE-STALE-2: a stale record does not refuse an Edit; the edit is applied to
    the file as it is now and the result carries STALE_EDIT_NOTE."""
    stale_by_content: bool = False
    """STATE-STALE-1: a later mtime makes a record stale only when the text differs, line
    endings aside, in both checks of Write and Edit (not only in ``call()``)."""
    dedup: bool = True
    """READ-DEDUP-1: an unchanged re-read answers with the stub."""
    thin_space_retry: bool = True
    """READ-THINSPACE-1: a missing screenshot-style path is retried with the other space."""
    write_state_note: bool = False
    """WRITE-RESULT-1: a successful Write's output has ``userModified: false`` and its
    text ends with STATE_NOTE."""
    edit_state_note: bool = False
    """EDIT-RESULT-1: a successful Edit's text ends with STATE_NOTE (not when STALE_EDIT_NOTE
    is there: the file then holds changes the model has not seen)."""
    write_keeps_bom: bool = False
    """WRITE-ENC-1: Write over a file with a byte order mark keeps the mark."""
    fill_keeps_bom: bool = False
    """EDIT-CREATE-1: an Edit filling a file of only a byte order mark keeps the mark."""
    notebook_final_newline: bool = False
    """NBEDIT-WRITE-1: the written notebook ends with a newline when the file did."""
    notebook_type_fields: bool = False
    """NBEDIT-REPLACE-1: a cell whose type a replace changes gets its new type's fields
    (code: ``execution_count`` and ``outputs``, added last; markdown: neither)."""
    unnamed_insert_text: bool = False
    """NBEDIT-RESULT-1: an insert into a notebook without cell ids (nbformat before 4.5)
    answers ``Inserted a new cell with SOURCE``."""
    read_deny_blocks_edits: Literal["always", "existing"] = "always"
    """PERM-READDENY-1: a ``Read`` deny rule also denies Edit, Write and NotebookEdit of a
    path: always, or only of a path where something exists (creation not denied)."""
    # PROFILE-OPEN-1: the engine plays the documented behaviour for these IDs
    open: frozenset[str] = frozenset()
    """IDs measured to differ that this profile does not model."""


VARIANT_IDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "write_read": "WRITE-READ-1",
        "edit_needs_read": "EDIT-READ-1",
        "stale_edit_applied": "STATE-STALE-2",
        "stale_by_content": "STATE-STALE-1",
        "dedup": "READ-DEDUP-1",
        "read_deny_blocks_edits": "PERM-READDENY-1",
        "thin_space_retry": "READ-THINSPACE-1",
        "write_state_note": "WRITE-RESULT-1",
        "edit_state_note": "EDIT-RESULT-1",
        "notebook_final_newline": "NBEDIT-WRITE-1",
        "notebook_type_fields": "NBEDIT-REPLACE-1",
        "unnamed_insert_text": "NBEDIT-RESULT-1",
        "write_keeps_bom": "WRITE-ENC-1",
        "fill_keeps_bom": "EDIT-CREATE-1",
    }
)
"""Each variant field of :class:`Profile` and the SPEC ID whose annex row states it."""


def varying_ids(profile: Profile) -> dict[str, str]:
    """ID -> ``variant`` or ``open``: where ``profile`` differs from the documented contract."""
    out = dict.fromkeys(profile.open, "open")
    for name, rid in VARIANT_IDS.items():
        if getattr(profile, name) != getattr(DOCUMENTED, name):
            out.setdefault(rid, "variant")
    return out


DOCUMENTED: Final = Profile(name="documented")

_PROFILES: Final = (
    DOCUMENTED,
    Profile(
        name="claude-code-2.1.88",
        version="2.1.88",
        write_read="any",
        read_deny_blocks_edits="existing",
        thin_space_retry=False,
        open=frozenset(
            {
                "BASH-CAPTURE-1",
                "BASH-PERM-2",
                "BASH-TIMEOUT-1",
                "BASH-TIMEOUT-2",
                "DISP-SCHEMA-1",
                "EDIT-CREATE-1",
                "FILE-PATH-2",
                "FILE-PATH-3",
                "GLOB-BASE-1",
                "GLOB-HIDDEN-1",
                "GLOB-IGNORE-1",
                "GREP-COUNT-1",
                "GREP-ERROR-1",
                "GREP-PAGE-1",
                "HOOK-EXIT-1",
                "HOOK-MATCH-1",
                "HOOK-UPDATE-1",
                "IMG-DECODE-1",
                "IMG-DETECT-1",
                "NBEDIT-RESULT-1",
                "PDF-REQUIRE-1",
                "PERM-BASH-1",
                "PERM-BASH-4",
                "PERM-PATH-2",
                "PERM-PATH-3",
                "PERM-PATH-4",
                "PERM-SAFETY-1",
                "READ-BINARY-1",
                "READ-KIND-1",
                "READ-RANGE-1",
                "READ-RANGE-2",
                "REG-MCP-1",
                "SCHED-CASCADE-1",
                "SCHED-CONTEXT-1",
                "STATE-STALE-1",
                "STATE-STALE-2",
                "TEXT-ENC-1",
                "TEXT-ENC-2",
                "WRITE-ATOMIC-2",
            }
        ),
    ),
    Profile(
        name="claude-code-latest",
        version="2.1.332",
        write_read="unread-text",
        edit_needs_read=False,
        stale_edit_applied=True,
        stale_by_content=True,
        dedup=False,
        thin_space_retry=False,
        write_state_note=True,
        edit_state_note=True,
        notebook_final_newline=True,
        notebook_type_fields=True,
        write_keeps_bom=True,
        fill_keeps_bom=True,
        unnamed_insert_text=True,
        open=frozenset(
            {
                "BASH-CAPTURE-1",
                "BASH-CWD-1",
                "BASH-PERM-2",
                "BASH-READONLY-1",
                "BASH-TIMEOUT-1",
                "DISP-SCHEMA-1",
                "FILE-PATH-3",
                "HOOK-CONFIG-1",
                "HOOK-DECISION-1",
                "HOOK-UPDATE-1",
                "IMG-DECODE-1",
                "IMG-DETECT-1",
                "PDF-REQUIRE-1",
                "PERM-BASH-2",
                "PERM-BASH-3",
                "PERM-BASH-4",
                "PERM-MODE-3",
                "PERM-MODE-4",
                "PERM-ORDER-1",
                "PERM-PATH-3",
                "PERM-SAFETY-1",
                "READ-BINARY-1",
                "READ-KIND-1",
                "READ-RANGE-1",
                "READ-RANGE-2",
                "READ-SIZE-1",
                "READ-SIZE-2",
                "REG-MCP-1",
                "REG-SEARCH-1",
                "SCHED-CASCADE-1",
                "SCHED-LIMIT-1",
                "TEXT-ENC-2",
                "TOK-CAP-1",
                "TOK-ESTIMATE-1",
                "TOK-EXACT-1",
                "TOK-EXACT-2",
                "TOK-GATE-2",
                "WRITE-ATOMIC-1",
                "WRITE-ATOMIC-2",
                "WRITE-CONTENT-1",
            }
        ),
    ),
)

PROFILES: Final[Mapping[str, Profile]] = MappingProxyType({p.name: p for p in _PROFILES})
"""Every profile the engine plays, by name, ``documented`` first (PROTO-HELLO-2)."""

DEFAULT_PROFILE: Final = DOCUMENTED.name

STALE_EDIT_NOTE: Final = (  # STATE-STALE-2 under claude-code-latest, as 2.1.332 wrote it
    " (note: the file had been modified on disk since you last read it \u2014 the edit "
    "applied cleanly, but the file contains other changes not in your context. Read it "
    "before edits that depend on surrounding content.)"
)


STATE_NOTE: Final = (  # WRITE-RESULT-1, EDIT-RESULT-1 under claude-code-latest, as 2.1.332
    " (file state is current in your context \u2014 no need to Read it back)"
)


def profile_named(name: str) -> Profile | None:
    """The profile called ``name``, or None when the engine does not play it."""
    return PROFILES.get(name)
