"""The texts a profile may render otherwise, as templates keyed by what they render.

Each key names one text the engine shows the model: the SPEC ID that gives its
documented form, and that form as a ``str.format`` template whose fields are
what the engine knows when it renders it. A profile that plays a release
(``reference.profiles``) gives, in ``Profile.texts``, the release's template
for each key whose text differs; the tools render through ``Profile.text``
and never test a profile's name. The annex of a profile lists the ID of each
key it renders otherwise (SPEC.md 0.5).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = ["TEXTS", "Text", "fields_of", "render"]


@dataclass(frozen=True, slots=True)
class Text:
    """One rendered text: the ID stating its documented form, and that form."""

    rid: str
    template: str


TEXTS: Final[Mapping[str, Text]] = MappingProxyType(
    {
        # ERR-CODE-2: what the model sees of an error raised in call()
        "call_error": Text("ERR-CODE-2", "<tool_use_error>{message}</tool_use_error>"),
        # PERM-MESSAGE-1: a call a deny rule denies, by the kind of call, and dontAsk's denial
        "deny_rule": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "deny_rule_command": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "deny_rule_search": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "deny_rule_read": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied by the rule {rule} from {source}.",
        ),
        "dont_ask": Text(
            "PERM-MESSAGE-1",
            "Permission to use {tool} has been denied because it needs approval and the "
            "permission mode is dontAsk.",
        ),
        # EDIT-RESULT-1: a successful Edit's text, without and with replace_all
        "edit_done": Text("EDIT-RESULT-1", "The file {path} has been updated successfully."),
        "edit_done_all": Text(
            "EDIT-RESULT-1",
            "The file {path} has been updated successfully. All occurrences were replaced.",
        ),
        # READ-REMINDER-1: what follows the lines of a text view
        "read_reminder": Text(
            "READ-REMINDER-1",
            "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it "
            "would be considered malware. You CAN and SHOULD provide analysis of malware, what it "
            "is doing. But you MUST refuse to improve or augment the code. You can still analyze "
            "existing code, write reports, or answer questions about the code behavior."
            "\n</system-reminder>\n",
        ),
        # HOOK-BLOCK-1: one denying PreToolUse hook, then the call's whole text
        "hook_denial": Text("HOOK-BLOCK-1", "{reason}"),
        "hook_denial_bare": Text("HOOK-BLOCK-1", ""),
        "hook_denial_exit2": Text("HOOK-BLOCK-1", "{stderr}"),
        "hook_denial_exit2_bare": Text("HOOK-BLOCK-1", ""),
        "hook_block": Text("HOOK-BLOCK-1", "Blocked by PreToolUse hook: {reasons}"),
        "hook_block_bare": Text("HOOK-BLOCK-1", "Blocked by PreToolUse hook"),
        # claude-code-latest's own texts (2.1.332)
        # TOK-GATE-2: a text read over the token cap
        "token_cap_refusal": Text(
            "TOK-GATE-2",
            "File content ({amount}) exceeds maximum allowed tokens ({cap}). Use offset and "
            "limit parameters to read specific portions of the file, or search for specific "
            "content instead of reading the whole file.",
        ),
    }
)
"""Every text a profile may render otherwise, by key."""


def fields_of(template: str) -> frozenset[str]:
    """The field names ``template`` uses."""
    return frozenset(
        name for _, name, _, _ in string.Formatter().parse(template) if name is not None
    )


def render(template: str, fields: Mapping[str, object]) -> str:
    """``template`` with ``fields`` filled in; braces in the values stay as they are."""
    return template.format_map(dict(fields))
