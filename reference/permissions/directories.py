"""The session's working directories (PERM-DIRS-1) and whether a path is inside them.

Read, Glob and Grep's own check (PERM-READ-1), the ``acceptEdits`` mode
(PERM-MODE-2) and Bash's cwd reset consult them.
"""

from __future__ import annotations

import posixpath

from reference.permissions.rules import is_under, resolve_path
from reference.session import Session


def working_directories(session: Session) -> tuple[str, ...]:
    """PERM-DIRS-1: ``root``, the original ``cwd`` and ``permissions.additionalDirectories``.

    Additional directories come from every source; an entry that is neither
    absolute nor ``~``/``~/``-relative is ignored. Entries are normalized,
    symlinks are not resolved here. Memoized on the settings, keyed by the
    session's root, original cwd and home, which the result depends on.
    """

    def collect() -> tuple[str, ...]:
        found = [session.root, session.original_cwd]  # never the current cwd
        for _source, entry in session.settings.permission_entries("additionalDirectories"):
            if entry == "~" or entry.startswith("~/"):
                found.append(posixpath.join(session.home, entry[2:]))
            elif entry.startswith("/"):
                found.append(entry)
        return tuple(dict.fromkeys(posixpath.normpath(d) for d in found))

    key = ("working-directories", session.root, session.original_cwd, session.home)
    return session.settings.memo(key, collect)


def is_inside_working_directories(path: str, session: Session) -> bool:
    """PERM-DIRS-1: the expanded path is under a working directory D and the
    resolved path (PERM-PATH-3) is under D resolved."""
    # The directories come from settings (fixed); their resolved forms are taken
    # now, at the decision, since a link may change during the session.
    directories = [d for d in working_directories(session) if is_under(path, d)]
    if not directories:
        return False
    resolved = resolve_path(path)
    # A resolved path has no symlink in it, so a directory it lies under as
    # written has none either and is its own resolved form: only a directory
    # the resolved path is not under as written needs resolving (PERM-DIRS-1).
    return any(
        is_under(resolved, directory) or is_under(resolved, resolve_path(directory))
        for directory in directories
    )
