"""One scripted model API, four dialects, on the loopback only.

``ScriptedModel`` (``server``) serves the dialect a peer speaks; the
dialects are ``DIALECTS`` by the names peer definitions use.
"""

from __future__ import annotations

from typing import Final

from conformance.peers.agent.model_api.anthropic import AnthropicMessages
from conformance.peers.agent.model_api.chat_completions import ChatCompletions
from conformance.peers.agent.model_api.dialect import Dialect
from conformance.peers.agent.model_api.gemini import Gemini
from conformance.peers.agent.model_api.responses import Responses
from conformance.peers.agent.model_api.server import MainRequest, ScriptedModel
from conformance.peers.agent.model_api.turns import OfferedTool, ToolCall, ToolResult, Turn

__all__ = [
    "DIALECTS",
    "Dialect",
    "MainRequest",
    "OfferedTool",
    "ScriptedModel",
    "ToolCall",
    "ToolResult",
    "Turn",
    "dialect",
]

DIALECTS: Final[dict[str, type[Dialect]]] = {
    cls.name: cls for cls in (AnthropicMessages, ChatCompletions, Responses, Gemini)
}
"""Every dialect by the name a peer definition gives it."""


def dialect(name: str) -> Dialect:
    """The dialect called ``name``.

    Raises:
        KeyError: no dialect has that name.
    """
    return DIALECTS[name]()
