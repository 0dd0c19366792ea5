"""Path expansion and the path checks every file tool shares (SPEC.md, section 8)."""

from __future__ import annotations

import os
import posixpath
import re
from typing import Final

from reference.profiles import DOCUMENTED, Profile, SimilarNames

# READ-DEVICE-1: infinite output, waiting for input, standard-stream aliases.
BLOCKED_DEVICE_PATHS: Final = frozenset(
    {
        "/dev/zero",
        "/dev/random",
        "/dev/urandom",
        "/dev/full",
        "/dev/stdin",
        "/dev/tty",
        "/dev/console",
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
    }
)
DEV_NULL: Final = "/dev/null"
NARROW_NO_BREAK_SPACE: Final = "\u202f"
_MERIDIEM: Final = re.compile(r"([ \u202f])(?=[AP]M\b)")


def expand_path(path: str, *, cwd: str, home: str) -> str:
    """FILE-PATH-1: ``~`` to home, relative to cwd, lexically normalized.

    Symlinks are not resolved: the expanded path is what rules, hooks and the
    read-file state see.
    """
    if path.startswith("/") and "//" not in path and "/." not in path and path[-1:] != "/":
        return path  # already absolute and normal: the common case, kept cheap
    if path == "~":
        path = home
    elif path.startswith("~/"):
        path = posixpath.join(home, path[2:])
    if not posixpath.isabs(path):
        path = posixpath.join(cwd, path)
    normalized = posixpath.normpath(path)
    # normpath keeps a leading "//" (POSIX allows it to be special); collapse it.
    if normalized.startswith("//"):
        normalized = "/" + normalized.lstrip("/")
    return normalized


def has_nul(path: str) -> bool:
    """FILE-PATH-2."""
    return "\x00" in path


def is_unc(path: str) -> bool:
    """FILE-PATH-3: ``\\\\server\\share``."""
    return path.startswith("\\\\")


def thin_space_alternative(path: str) -> str | None:
    """READ-THINSPACE-1: swap U+0020 and U+202F before ``AM``/``PM``.

    Returns None when the path has no such place.
    """

    def swap(match: re.Match[str]) -> str:
        return NARROW_NO_BREAK_SPACE if match.group(1) == " " else " "

    alternative = _MERIDIEM.sub(swap, path)
    return alternative if alternative != path else None


def similar_name(path: str, rule: SimilarNames = "case-or-stem") -> str | None:
    """READ-SUGGEST-1: the sibling of ``path`` to suggest, by ``rule`` (the session's
    profile's ``similar_names``): equal ignoring case, else the same stem, in name order;
    or the same stem alone (case counts), in name order or in the directory's listing."""
    directory, name = posixpath.split(path)
    try:
        listed = os.listdir(directory)
    except OSError:
        return None
    siblings = listed if rule == "stem-listed" else sorted(listed)
    if rule == "case-or-stem":
        for candidate in siblings:
            if candidate != name and candidate.lower() == name.lower():
                return posixpath.join(directory, candidate)
    stem = posixpath.splitext(name)[0]
    for candidate in siblings:
        if candidate != name and posixpath.splitext(candidate)[0] == stem:
            return posixpath.join(directory, candidate)
    return None


def file_does_not_exist_message(path: str, cwd: str, profile: Profile = DOCUMENTED) -> str:
    """READ-MISSING-1 / EDIT-SIMILAR-1, the suggestion as ``profile`` picks and words it."""
    message = f"File does not exist. Note: your current working directory is {cwd}."
    suggestion = similar_name(path, profile.similar_names)
    if suggestion is not None:
        message += profile.text(
            "did_you_mean", path=suggestion, name=posixpath.basename(suggestion)
        )
    return message
