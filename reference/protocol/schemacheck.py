"""A JSON Schema compiled once into a yes/no predicate, for checks on the hot path.

``jsonschema`` is the authority on draft 2020-12 and says precisely what is
wrong, but it spends more time on one call answer than the call itself.
``compile_predicate`` turns a schema into nested closures that answer only
"valid or not", with no exception raised and no message built on the way, in a
few microseconds. When the answer is no, the caller asks ``jsonschema`` for the
error. The subset it compiles is the one ``protocol-v1.json`` uses; any other
keyword is refused when compiling, so the predicate can never silently accept
what the schema forbids. ``tests/conformance/test_protocol_schema.py`` checks
that both agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

__all__ = ["Predicate", "UnsupportedSchema", "compile_predicate"]

Predicate: TypeAlias = Callable[[Any], bool]
"""True when the value is valid under the schema it was compiled from."""

_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "examples"}
)


class UnsupportedSchema(ValueError):
    """The schema uses a keyword, or a ``$ref`` form, that the compiler does not know."""


def compile_predicate(root: Mapping[str, Any], pointer: str = "#") -> Predicate:
    """The predicate of the subschema at ``pointer`` (``#/$defs/...``) of ``root``.

    ``$ref`` may only name a JSON pointer inside ``root``.

    Raises:
        UnsupportedSchema: a keyword or reference outside the supported subset.
    """
    return _Compiler(root).ref(pointer)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: Final[Mapping[str, Predicate]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": _is_number,
}


_PLAIN: Final[Mapping[str, type]] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
"""The JSON types that are exactly one Python type (integer and number are not)."""


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it: 1 equals 1.0, true never equals 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _all(checks: Sequence[Predicate]) -> Predicate:
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    chain = tuple(checks)

    def every(v: Any) -> bool:  # loops, not all(...): no generator on the hot path
        for check in chain:  # noqa: SIM110
            if not check(v):
                return False
        return True

    return every


def _discriminator(branches: Sequence[Any]) -> tuple[str, list[tuple[str, Any]]] | None:
    """``(key, [(value, then), ...])`` when every branch is ``if {key: const str} then``."""
    key: str | None = None
    cases: list[tuple[str, Any]] = []
    for branch in branches:
        if not isinstance(branch, Mapping) or set(branch) - {"if", "then", "$comment"}:
            return None
        condition = branch.get("if")
        if not isinstance(condition, Mapping) or set(condition) != {"properties"}:
            return None
        (name, sub), *rest = condition["properties"].items() or [(None, None)]
        if rest or not isinstance(sub, Mapping) or set(sub) != {"const"}:
            return None
        if not isinstance(sub["const"], str) or (key is not None and name != key):
            return None
        key = name
        cases.append((sub["const"], branch.get("then", True)))
    return (key, cases) if key is not None else None


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Predicate] = {}

    def ref(self, pointer: str) -> Predicate:
        """A predicate for a local pointer, compiled once and shared (recursion-safe)."""
        if pointer in self.refs:
            return self.refs[pointer]
        cell: list[Predicate] = []
        self.refs[pointer] = lambda v: cell[0](v)  # noqa: PLW0108 (cell is filled below)
        cell.append(self.schema(self._resolve(pointer)))
        self.refs[pointer] = cell[0]
        return cell[0]

    def _resolve(self, pointer: str) -> Any:
        if pointer != "#" and not pointer.startswith("#/"):
            raise UnsupportedSchema(f"only local JSON pointers are supported, not {pointer!r}")
        node: Any = self.root
        for part in pointer[2:].split("/") if pointer != "#" else []:
            key = part.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(key)] if isinstance(node, list) else node[key]
            except (KeyError, IndexError, ValueError):
                raise UnsupportedSchema(f"{pointer!r} names nothing in the schema") from None
        return node

    def schema(self, node: Any) -> Predicate:
        if node is True:
            return lambda _v: True
        if node is False:
            return lambda _v: False
        if not isinstance(node, Mapping):
            raise UnsupportedSchema(f"a schema must be an object or a boolean, not {node!r}")
        checks: list[Predicate] = []
        for keyword, value in node.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):
                continue
            method = "k_" + re.sub("([A-Z])", r"_\1", keyword.lstrip("$")).lower()
            build = getattr(self, method, None)
            if build is None:
                raise UnsupportedSchema(f"keyword {keyword!r} is not supported")
            checks.append(build(value, node))
        return _all(checks)

    # -- keywords ------------------------------------------------------------------

    def k_ref(self, value: str, _node: Mapping[str, Any]) -> Predicate:
        return self.ref(value)

    def k_type(self, value: str | list[str], _node: Mapping[str, Any]) -> Predicate:
        names = [value] if isinstance(value, str) else list(value)
        if len(names) == 1:
            return _TYPES[names[0]]
        plain = tuple(_PLAIN[name] for name in names if name in _PLAIN)
        if "number" in names:
            return lambda v: isinstance(v, plain) or _is_number(v)
        if "integer" in names:
            return lambda v: isinstance(v, plain) or _is_integer(v)
        return lambda v: isinstance(v, plain)

    def k_enum(self, value: list[Any], _node: Mapping[str, Any]) -> Predicate:
        if all(isinstance(item, str) for item in value):
            allowed = frozenset(value)
            return lambda v: isinstance(v, str) and v in allowed
        return lambda v: any(_json_equal(v, item) for item in value)

    def k_const(self, value: Any, _node: Mapping[str, Any]) -> Predicate:
        if isinstance(value, str):
            return lambda v: isinstance(v, str) and v == value
        if isinstance(value, bool):
            return lambda v: v is value
        return lambda v: _json_equal(v, value)

    def k_required(self, value: list[str], _node: Mapping[str, Any]) -> Predicate:
        names = tuple(value)

        def present(v: Any) -> bool:
            if isinstance(v, dict):
                for name in names:
                    if name not in v:
                        return False
            return True

        return present

    def k_properties(self, value: Mapping[str, Any], _node: Mapping[str, Any]) -> Predicate:
        fields = tuple((name, self.schema(sub)) for name, sub in value.items())

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for name, sub in fields:  # noqa: SIM110 (see every)
                if name in v and not sub(v[name]):
                    return False
            return True

        return check

    def k_additional_properties(self, value: Any, node: Mapping[str, Any]) -> Predicate:
        if "patternProperties" in node:
            raise UnsupportedSchema("patternProperties is not supported")
        known = frozenset(node.get("properties", {}))
        sub = self.schema(value)
        return lambda v: (
            not isinstance(v, dict)
            or all(sub(item) for name, item in v.items() if name not in known)
        )

    def k_items(self, value: Any, _node: Mapping[str, Any]) -> Predicate:
        sub = self.schema(value)
        return lambda v: not isinstance(v, list) or all(sub(item) for item in v)

    def k_min_items(self, value: int, _node: Mapping[str, Any]) -> Predicate:
        return lambda v: not isinstance(v, list) or len(v) >= value

    def k_unique_items(self, value: bool, _node: Mapping[str, Any]) -> Predicate:
        if not value:
            return lambda _v: True

        def unique(v: Any) -> bool:
            if not isinstance(v, list):
                return True
            if all(isinstance(item, str) for item in v):
                return len(set(v)) == len(v)
            return not any(_json_equal(a, b) for i, a in enumerate(v) for b in v[i + 1 :])

        return unique

    def k_min_length(self, value: int, _node: Mapping[str, Any]) -> Predicate:
        return lambda v: not isinstance(v, str) or len(v) >= value

    def k_pattern(self, value: str, _node: Mapping[str, Any]) -> Predicate:
        regex = re.compile(value)  # JSON Schema's pattern is a search, as re.search
        return lambda v: not isinstance(v, str) or regex.search(v) is not None

    def k_minimum(self, value: float, _node: Mapping[str, Any]) -> Predicate:
        return lambda v: not _is_number(v) or v >= value

    def k_all_of(self, value: list[Any], _node: Mapping[str, Any]) -> Predicate:
        found = _discriminator(value)
        if found is None:
            return _all([self.schema(sub) for sub in value])
        # A chain of "if key is C then S": one lookup instead of one test per branch.
        # A value whose key is absent (or that is no object) meets every condition.
        key, cases = found
        by_value: dict[str, list[Predicate]] = {}
        for const, then in cases:
            by_value.setdefault(const, []).append(self.schema(then))
        dispatch = {const: _all(thens) for const, thens in by_value.items()}
        every = _all([check for thens in by_value.values() for check in thens])

        def check(v: Any) -> bool:
            if not isinstance(v, dict) or key not in v:
                return every(v)
            tag = v[key]
            chosen = dispatch.get(tag) if isinstance(tag, str) else None
            return True if chosen is None else chosen(v)

        return check

    def k_any_of(self, value: list[Any], _node: Mapping[str, Any]) -> Predicate:
        subs = [self.schema(sub) for sub in value]
        if len(subs) == 2:
            first, second = subs
            return lambda v: first(v) or second(v)
        return lambda v: any(sub(v) for sub in subs)

    def k_not(self, value: Any, _node: Mapping[str, Any]) -> Predicate:
        sub = self.schema(value)
        return lambda v: not sub(v)

    def k_if(self, value: Any, node: Mapping[str, Any]) -> Predicate:
        condition = self.schema(value)
        then = self.schema(node.get("then", True))
        otherwise = self.schema(node.get("else", True))
        return lambda v: then(v) if condition(v) else otherwise(v)
