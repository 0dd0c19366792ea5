"""The reference engine of the tool system (SPEC.md), on the real disk.

For agent builders, the library face is ``open_session`` (``reference.api``)::

    from reference import open_session

    with open_session(root, settings={"permissions": {"allow": ["Write"]}}) as session:
        tools = session.tools()              # the Messages API's ``tools``
        blocks = session.run(assistant_msg)  # tool_result blocks, one per tool_use

``python -m reference.adapter`` serves the same engine over protocol v1
(``reference.engine``). The names below load on first use, so importing the
package costs nothing until then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reference.version import __version__

if TYPE_CHECKING:
    from reference.api import ToolDefinition, ToolResultBlock, ToolSession, open_session
    from reference.errors import BadRequest

__all__ = [
    "BadRequest",
    "ToolDefinition",
    "ToolResultBlock",
    "ToolSession",
    "__version__",
    "open_session",
]

_LAZY = {
    "open_session": "reference.api",
    "ToolSession": "reference.api",
    "ToolDefinition": "reference.api",
    "ToolResultBlock": "reference.api",
    "BadRequest": "reference.errors",
}


def __getattr__(name: str) -> Any:
    """Import the library face on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reference' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
