"""What passes between a scripted conversation and any model API dialect.

A dialect turns these into its own wire shapes and back: the assistant turn
the script sends (``Turn`` of ``ToolCall`` and text), the tools an agent
offered its model (``OfferedTool``) and each tool result exactly as the next
request carries it (``ToolResult``). Nothing here knows a dialect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["OfferedTool", "ToolCall", "ToolResult", "Turn"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the scripted model makes.

    ``arguments`` is a JSON object for a function tool, or the raw input
    string for a freeform (``custom``) tool such as codex's ``apply_patch``.
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | str
    kind: Literal["function", "custom"] = "function"


@dataclass(frozen=True, slots=True)
class Turn:
    """An assistant turn: optional text, then tool calls; no calls ends the conversation.

    ``block_delay`` is the pause between streamed blocks, so a client that
    runs calls as they arrive sees them apart.
    """

    calls: Sequence[ToolCall] = ()
    text: str = ""
    block_delay: float = 0.0

    @property
    def final(self) -> bool:
        """Whether the turn ends the conversation (it calls no tool)."""
        return not self.calls


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """A tool an agent offered its model: its name, schema and kind as the dialect gave them."""

    name: str
    kind: Literal["function", "custom", "other"]
    schema: Mapping[str, Any] = field(default_factory=dict)
    """The input JSON schema of a function tool; a custom tool's ``format``."""
    description: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool result as the agent's next request shows it to the model.

    ``call_id`` is None when the dialect's message carries no id (Gemini's
    ``functionResponse`` may lack one); ``is_error`` is None when the dialect
    has no error flag (OpenAI Chat Completions and Responses), so a refusal
    can only be inferred from ``text``. ``group`` numbers the message the
    result came in, so results without ids can be matched to the last turn.

    ``text`` is the result's text for reading back: a list of parts is joined
    with line feeds. ``received`` is set where that differs from what the
    request carries: for a list of parts, their texts end to end, nothing
    added, and an image part's base64 data (RES-SIZE-1 counts a list so).
    """

    call_id: str | None
    name: str | None
    text: str
    is_error: bool | None
    group: int
    raw: Any = None
    received: str | None = None

    @property
    def model_text(self) -> str:
        """The result's text exactly as the request carried it to the model."""
        return self.text if self.received is None else self.received
