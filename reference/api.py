"""The engine as a library, for agent builders: tools in, tool_use blocks in, tool_result out.

A ``ToolSession`` is one session of the tool system on a project root, with
its settings; it is the same ``Engine`` the conformance suite checks through
protocol v1, so what the suite says of the reference holds here::

    with open_session("/path/to/project", settings={"permissions": {"allow": ["Edit"]}}) as s:
        tools = s.tools()                   # for the Messages API's ``tools``
        results = s.run(assistant_message)  # for the next user message's ``content``

There is no model and no user here: a call the permission rules would ask
about is answered by ``ask`` (``"deny"`` unless told), and the caller sends
the tool_result blocks back to its model itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, TypedDict

from reference.engine import Engine
from reference.errors import BadRequest
from reference.protocol.schema import PROTOCOL

__all__ = ["ToolDefinition", "ToolResultBlock", "ToolSession", "open_session"]


class ToolDefinition(TypedDict):
    """One tool as the Anthropic Messages API takes it in ``tools`` (REG-EXPORT-1)."""

    name: str
    description: str
    input_schema: dict[str, Any]


class ToolResultBlock(TypedDict):
    """One ``tool_result`` content block, answering the ``tool_use`` of ``tool_use_id``.

    ``content`` is a string, or a list of ``text`` and ``image`` blocks (an image
    Read, hook context); ``is_error`` marks refusals and failures (RES-BLOCK-1).
    """

    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[dict[str, Any]]
    is_error: bool


class ToolSession:
    """An open session: ``tools()`` to offer, ``run()`` for each assistant message.

    Not thread-safe: run one message at a time (the blocks of one message run
    concurrently where the scheduler allows, SPEC.md section 6). Close it, or
    use it as a context manager, to stop its background tasks and remove its
    session directory.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._seq = 0

    def tools(self) -> list[ToolDefinition]:
        """The tools to offer the model, in pool order, as the Messages API takes them.

        Deferred tools appear once ToolSearch discovered them, so ask again
        after a message that ran ToolSearch.
        """
        answer = self._request({"cmd": "tools"})
        tools: list[ToolDefinition] = answer["tools"]
        return tools

    def run(self, message: Mapping[str, Any] | Iterable[Any]) -> list[ToolResultBlock]:
        """Run one assistant message's ``tool_use`` blocks; one ``tool_result`` each, in order.

        ``message`` is the assistant message (``{"role": "assistant", "content":
        [...]}``) or its content list; blocks may be dicts or Anthropic SDK
        objects (anything with ``model_dump()``). Blocks other than
        ``tool_use`` (text, thinking) are skipped (DISP-EXTRACT-1). The result
        is the ``content`` of the user message to send back.

        Raises:
            BadRequest: a malformed block (no id, no name, no input) or two
                blocks with one id; nothing ran.
            RuntimeError: the engine failed by its own fault.
        """
        content = message.get("content", []) if isinstance(message, Mapping) else message
        blocks = [_plain(block) for block in content]
        answer = self._request({"cmd": "message", "content": blocks})
        return [result["tool_result"] for result in answer["results"]]

    def close(self) -> None:
        """End the session: background tasks stopped, its own session directory removed."""
        self._request({"cmd": "end"})

    def __enter__(self) -> ToolSession:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        self._seq += 1
        answer = self._engine.handle({"seq": self._seq, **request})
        error = answer.get("error")
        if error is None:
            return answer
        if error.get("kind") == "bad_request":
            raise BadRequest(str(error.get("message")))
        raise RuntimeError(f"engine fault: {error.get('message')}\n{error.get('traceback', '')}")


def open_session(
    root: str | os.PathLike[str],
    *,
    settings: Mapping[str, Any] | None = None,
    settings_by_source: Mapping[str, Mapping[str, Any]] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    ask: Literal["allow", "deny"] = "deny",
    session_dir: str | os.PathLike[str] | None = None,
) -> ToolSession:
    """Open a session of the tool system on the project directory ``root``.

    ``settings`` is one settings object in the shape of Claude Code's
    ``settings.json`` (``permissions``, ``hooks``, ``env``...), taken as the
    ``flagSettings`` source, as ``--settings FILE`` would be;
    ``settings_by_source`` gives each source its own (``userSettings``,
    ``projectSettings``, ``localSettings``, ``policySettings``, ...; SPEC.md
    section 4) and wins for ``flagSettings``. ``cwd`` defaults to ``root``,
    ``env`` (what Bash and hooks see) to this process's environment. ``ask``
    answers every permission prompt, since no user is there to. Large results
    are persisted under ``session_dir`` (default: a temporary directory the
    session removes when it ends).

    Raises:
        BadRequest: ``root`` or ``cwd`` is not an absolute directory path once
            resolved, or the settings are not objects.
    """
    sources: dict[str, Mapping[str, Any]] = {}
    if settings is not None:
        sources["flagSettings"] = settings
    sources.update(settings_by_source or {})
    root_path = os.path.abspath(os.fspath(root))
    session: dict[str, Any] = {
        "root": root_path,
        "cwd": os.path.abspath(os.fspath(cwd)) if cwd is not None else root_path,
        "env": dict(os.environ if env is None else env),
        "settings": sources,
        "prompt": ask,
    }
    if session_dir is not None:
        session["session_dir"] = os.path.abspath(os.fspath(session_dir))
    engine = Engine()
    opened = ToolSession(engine)
    opened._request({"cmd": "hello", "protocol": PROTOCOL})
    opened._request({"cmd": "begin", "session": session})
    return opened


def _plain(block: Any) -> Any:
    """An SDK content block as the dict it serializes to; anything else as given."""
    dump = getattr(block, "model_dump", None)
    return dump() if callable(dump) else block
