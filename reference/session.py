"""A session: the state one conversation's tool calls share (SPEC.md 0.3)."""

from __future__ import annotations

import functools
import os
import re
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, cast

from reference.filestate import ReadFileState
from reference.observer import Change, FileChangeObserver
from reference.probeboard import ProbeBoard
from reference.profiles import DOCUMENTED, Profile, WriteRead
from reference.session_dirs import OwnedDir, make_owned_dir
from reference.settings import (
    MODE_SOURCES,
    PERMISSION_MODES,
    PROJECT_SOURCES,
    PermissionMode,
    Settings,
    positive_int,
)
from reference.tasks import TaskBoard

DEFAULT_MAX_READ_TOKENS: Final = 25_000
MAX_READ_TOKENS_ENV: Final = "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"
MODEL_ENV: Final = "ANTHROPIC_MODEL"
_MODEL_DATE: Final = re.compile(r"(-[0-9]{8})?")

PromptAnswer = Literal["allow", "deny"]


@dataclass(kw_only=True)
class Session:
    """Mutable by design: the read-file state and cwd evolve as tools run.

    The knobs read from env and settings are computed once: both are fixed
    for the session's life.
    """

    root: str
    cwd: str
    home: str
    env: Mapping[str, str] = field(default_factory=dict)
    settings: Settings = field(default_factory=Settings)
    session_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="toolsys-session-"))
    prompt: PromptAnswer = "deny"
    test_tools: bool = False
    read_state: ReadFileState = field(default_factory=ReadFileState)  # STATE-SESSION-1
    observers: list[FileChangeObserver] = field(default_factory=list)
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))  # HOOK-INPUT-1
    probe_board: ProbeBoard = field(default_factory=ProbeBoard)
    discovered_tools: set[str] = field(default_factory=set)  # REG-SEARCH-2
    removed_tools: frozenset[str] = frozenset()
    """REG-DENY-1: the names of the built-in tools a whole-tool deny rule took out of the
    pool (set where the pool is built), for DISP-FIND-1's text of a call to one."""
    probe_trail: tuple[str, ...] = ()  # the context's Probe trail between commands
    owned_dir: OwnedDir | None = None  # made by the engine: removed at end (PROTO-END-1)
    original_cwd: str = ""  # TOOL-CONTEXT-1 / PERM-PATH-1: the cwd at begin ("" = cwd)
    tasks: TaskBoard = field(default_factory=TaskBoard)  # BASH-BG-1: background tasks
    turn: int = 0  # READ-DEDUP-5: the number of the message being run (a call is one)
    profile: Profile = DOCUMENTED  # PROTO-BEGIN-3: the contract this session plays

    def __post_init__(self) -> None:
        if not self.original_cwd:
            self.original_cwd = self.cwd

    @classmethod
    def create(
        cls,
        *,
        root: str,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        settings: Settings | None = None,
        session_dir: str | None = None,
        home: str | None = None,
        prompt: PromptAnswer = "deny",
        test_tools: bool = False,
        profile: Profile = DOCUMENTED,
    ) -> Session:
        env = dict(env or {})
        home = home or env.get("HOME") or os.path.expanduser("~")
        owned = make_owned_dir() if session_dir is None else None  # PROTO-BEGIN-2, PROTO-END-2
        return cls(
            root=root,
            cwd=cwd or root,
            original_cwd=cwd or root,
            home=home,
            env=env,
            settings=settings or Settings(),
            prompt=prompt,
            test_tools=test_tools,
            session_dir=owned.path if owned is not None else str(session_dir),
            owned_dir=owned,
            profile=profile,
        )

    @functools.cached_property
    def max_read_tokens(self) -> int:
        """TOK-CAP-1: env over the configured value over 25,000."""
        return (
            positive_int(self.env.get(MAX_READ_TOKENS_ENV))
            or positive_int(self.settings.scalar("fileReadMaxOutputTokens"))
            or DEFAULT_MAX_READ_TOKENS
        )

    @property
    def model(self) -> str | None:
        """The model the session names: ``ANTHROPIC_MODEL``, else the settings' ``model``."""
        named = self.env.get(MODEL_ENV) or self.settings.scalar("model")
        return named if isinstance(named, str) and named else None

    @property
    def read_rules(self) -> tuple[WriteRead, bool]:
        """WRITE-READ-1 and EDIT-READ-1 under the profile: the record Write needs, and
        whether Edit needs one; a model the release keeps the check for needs a record."""
        profile, model = self.profile, self.model
        if model is not None and any(
            _MODEL_DATE.fullmatch(model[len(family) :]) is not None
            for family in profile.read_kept_for_models
            if model.startswith(family)
        ):
            return "any", True
        return profile.write_read, profile.edit_needs_read

    @functools.cached_property
    def dedup_enabled(self) -> bool:
        """READ-DEDUP-4: the killswitch turns dedup off; READ-DEDUP-1: so does the profile."""
        return self.profile.dedup and self.settings.scalar("readDedupKillswitch") is not True

    @functools.cached_property
    def permission_mode(self) -> PermissionMode:
        """PERM-SOURCE-1: the first valid ``permissions.defaultMode``, else ``default``.

        Sources are tried in MODE_SOURCES order (the command line before the
        settings files); a value that is not one of the
        modes of PERM-MODE-1 is ignored and the next source is tried. PERM-MODE-4: so is
        ``bypassPermissions`` from the project's settings files where the session's profile
        takes it from other sources only.
        """
        for source, value in self.settings.permission_values("defaultMode", MODE_SOURCES):
            if not isinstance(value, str) or value not in PERMISSION_MODES:
                continue
            ignored = value == "bypassPermissions" and source in PROJECT_SOURCES
            if ignored and not self.profile.project_bypass:
                continue  # PERM-MODE-4 under a profile whose release ignores it there
            return cast(PermissionMode, value)
        return "default"

    def notify(self, path: str, change: Change) -> None:
        for observer in list(self.observers):
            observer.file_changed(path, change)
