"""The protocol's JSON Schema, and checks of a request or an answer against it.

A check first asks the compiled predicate (``schemacheck``), which answers a
valid message in microseconds; only a rejected one is explained, by
``jsonschema``, the authority on draft 2020-12, which names the JSON path and
the reason. ``jsonschema`` and ``referencing`` are imported only then: their
import would cost every command.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from reference.protocol.schemacheck import Predicate, compile_predicate

if TYPE_CHECKING:
    import referencing

__all__ = ["PROTOCOL", "SCHEMA_PATH", "Violation", "protocol_schema", "violation"]

PROTOCOL: Final = 1
"""The protocol version this schema describes (PROTO-HELLO-1)."""
SCHEMA_PATH: Final = Path(__file__).resolve().with_name("protocol-v1.json")


@functools.cache
def protocol_schema() -> Mapping[str, Any]:
    """The protocol's JSON Schema, as one document."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text("utf-8"))
    return schema


@functools.cache
def _predicate(pointer: str) -> Predicate:
    return compile_predicate(protocol_schema(), pointer)


@functools.cache
def _registry() -> referencing.Registry[Any]:
    import referencing  # noqa: PLC0415  (deferred: only a rejected message needs it)
    from referencing.jsonschema import DRAFT202012  # noqa: PLC0415

    schema = protocol_schema()
    resource = DRAFT202012.create_resource(schema)
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(
        str(schema["$id"]), resource
    )
    return registry


class Violation(tuple[str, str]):
    """``(json path, reason)`` of what breaks the schema."""

    __slots__ = ()

    @property
    def path(self) -> str:
        """The JSON path of the offending part, such as ``$.session.root``."""
        return self[0]

    @property
    def reason(self) -> str:
        """What is wrong there, in ``jsonschema``'s words."""
        return self[1]


def violation(pointer: str, instance: Any) -> Violation | None:
    """What breaks the subschema at ``pointer`` (``#/$defs/...``) in ``instance``, or None.

    PROTO-SCHEMA-1: every request and answer has the shape the schema gives it.
    """
    if _predicate(pointer)(instance):
        return None
    import jsonschema  # noqa: PLC0415  (deferred, see _registry)
    from jsonschema.exceptions import best_match  # noqa: PLC0415

    uri = str(protocol_schema()["$id"]) + pointer
    validator = jsonschema.Draft202012Validator({"$ref": uri}, registry=_registry())
    error = best_match(validator.iter_errors(instance))
    if error is None:  # the predicate and jsonschema disagree: report it, never pass it
        return Violation(
            ("$", f"rejected by the compiled check of {pointer} (jsonschema accepts it)")
        )
    return Violation((error.json_path, error.message))
