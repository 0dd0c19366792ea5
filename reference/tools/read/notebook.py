"""Read of a Jupyter notebook: one unified view of its cells and their outputs.

SPEC.md section 16. The notebook is parsed as plain JSON (NB-PARSE-1
asks only for an object with a ``cells`` list; nbformat's validation would
refuse notebooks Read must show), rendered cell by cell (NB-RENDER-1,
NB-OUTPUT-1), gated by tokens (NB-TOKENS-1) and recorded as a full read
(NB-STATE-1), so NotebookEdit can edit what the model saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from reference import errors, fileio, text, tokens
from reference.filestate import ReadRecord
from reference.profiles import DOCUMENTED, Profile
from reference.tool import ContentBlock, ToolResult, ToolUseContext

MAX_NOTEBOOK_BYTES: Final = 100 * 1024 * 1024  # NB-SIZE-1
IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg"})  # NB-OUTPUT-1
DEFAULT_LANGUAGE: Final = "python"  # the releases' language of a notebook without language_info
_ANSI: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")  # CSI and two-byte escapes


def is_notebook(path: str) -> bool:
    """IMG-DETECT-1: a name ending in ``.ipynb``, any case."""
    return path.lower().endswith(".ipynb")


def check_size(size: int, profile: Profile = DOCUMENTED) -> None:
    """NB-SIZE-1: decided by ``stat`` alone, before any byte is read."""
    if size > MAX_NOTEBOOK_BYTES:
        raise errors.NotebookTooLargeError(profile.text("notebook_too_large", size=size))


def parse_cells(content: str, profile: Profile = DOCUMENTED) -> list[Any]:
    """NB-PARSE-1: the ``cells`` list of a JSON object, else ``InvalidNotebookError``."""
    cells: list[Any] = parse_notebook(content, profile)["cells"]
    return cells


def parse_notebook(content: str, profile: Profile = DOCUMENTED) -> dict[str, Any]:
    """NB-PARSE-1: the JSON object, holding a ``cells`` list, else ``InvalidNotebookError``."""
    try:
        doc = json.loads(content)
    except ValueError as exc:
        message = profile.text("notebook_not_json", error=str(exc))
        raise errors.InvalidNotebookError(message) from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise errors.InvalidNotebookError(profile.text("notebook_no_cells"))
    return doc


def language_of(doc: Mapping[str, Any]) -> str:
    """The releases' language of a notebook: ``metadata.language_info.name``, else python."""
    metadata = doc.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, Mapping) else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) else DEFAULT_LANGUAGE


def _joined(value: Any) -> str:
    """A multiline string as nbformat stores it: a string, or a list joined without separator."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def _text_block(value: str, lead: str = "") -> list[ContentBlock]:
    """A text block (``lead`` before the text), or none for empty text (an output that
    gives no text adds no block)."""
    return [{"type": "text", "text": lead + value}] if value else []


def cell_name(cell: Mapping[str, Any], index: int) -> str:
    """NB-RENDER-1: the cell's ``id``, else ``cell-N`` (N its 0-based index)."""
    ident = cell.get("id")
    return ident if isinstance(ident, str) and ident else f"cell-{index}"


def _images(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """NB-OUTPUT-1: an output's images as (media type, base64 without line breaks), in the
    order its ``data`` gives them; an empty one is none."""
    found = []
    for media_type, value in data.items():
        encoded = _joined(value).replace("\r", "").replace("\n", "")
        if media_type in IMAGE_TYPES and encoded:
            found.append((str(media_type), encoded))
    return found


def _error_text(output: Mapping[str, Any]) -> str:
    """NB-OUTPUT-1: an error output as ``ename: evalue``, then its traceback's lines."""
    traceback = output.get("traceback")
    lines = [f"{output.get('ename', '')}: {output.get('evalue', '')}"]
    if isinstance(traceback, list):
        lines.extend(line for line in traceback if isinstance(line, str))
    return "\n".join(lines)


def _output_blocks(output: Mapping[str, Any], *, release: bool = False) -> list[ContentBlock]:
    """NB-OUTPUT-1: the blocks one output gives, in order; ``release``: as the releases give
    them (each text after a newline, a text/plain before the first image, the only one,
    ANSI sequences kept)."""
    kind = output.get("output_type")
    lead = "\n" if release else ""
    if kind == "stream":
        return _text_block(_joined(output.get("text")), lead)
    if kind in ("execute_result", "display_data"):
        data = output.get("data")
        if not isinstance(data, Mapping):
            return []
        images: list[ContentBlock] = [
            {"type": "image", "source": {"type": "base64", "media_type": media, "data": encoded}}
            for media, encoded in _images(data)
        ]
        plain = _text_block(_joined(data.get("text/plain")), lead)
        return plain + images[:1] if release else images + plain
    if kind == "error":
        shown = _error_text(output)
        return _text_block(shown if release else _ANSI.sub("", shown), lead)
    return []


def _joined_texts(blocks: list[ContentBlock]) -> list[ContentBlock]:
    """NB-RENDER-1 under the releases: each run of text blocks as one, joined by newlines."""
    out: list[ContentBlock] = []
    for block in blocks:
        if block["type"] == "text" and out and out[-1]["type"] == "text":
            out[-1] = {"type": "text", "text": f"{out[-1]['text']}\n{block['text']}"}
        else:
            out.append(block)
    return out


def render(cells: list[Any], profile: Profile = DOCUMENTED) -> list[ContentBlock]:
    """NB-RENDER-1: per cell, its text block, then (code cells) its outputs' blocks; under
    a profile whose release joins them, each run of text blocks as one."""
    release = profile.notebook_release_outputs
    blocks: list[ContentBlock] = []
    for index, raw in enumerate(cells):
        cell: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        name = cell_name(cell, index)
        cell_type = cell.get("cell_type")
        mark = f"<cell_type>{cell_type}</cell_type>" if cell_type in ("markdown", "raw") else ""
        source = _joined(cell.get("source"))
        cell_text = f'<cell id="{name}">{mark}{source}</cell id="{name}">'
        blocks.append({"type": "text", "text": cell_text})
        outputs = cell.get("outputs")
        if cell_type == "code" and isinstance(outputs, list):
            for output in outputs:
                if isinstance(output, Mapping):
                    blocks.extend(_output_blocks(output, release=release))
    return _joined_texts(blocks) if profile.notebook_joined_text else blocks


def _shown_output(output: Mapping[str, Any]) -> dict[str, Any]:
    """NB-OUTPUT-1 under the releases: an output as their structured output holds it, its
    text (empty when it has none, ANSI sequences kept) and its first image."""
    kind = output.get("output_type")
    text_of = ""
    image: dict[str, Any] | None = None
    if kind == "stream":
        text_of = _joined(output.get("text"))
    elif kind in ("execute_result", "display_data"):
        data = output.get("data")
        data = data if isinstance(data, Mapping) else {}
        text_of = _joined(data.get("text/plain"))
        for media_type, encoded in _images(data)[:1]:
            image = {"image_data": encoded, "media_type": media_type}
    elif kind == "error":
        text_of = _error_text(output)
    return {"output_type": kind, "text": text_of, **({"image": image} if image else {})}


def shown_cells(cells: list[Any], language: str) -> list[dict[str, Any]]:
    """NB-RENDER-1 under a profile whose release gives them: the cells as its structured
    output holds them (``cellType``, the source as one string, ``execution_count`` when
    set, ``cell_id``, a code cell's ``language`` and its outputs when it has some)."""
    shown: list[dict[str, Any]] = []
    for index, raw in enumerate(cells):
        cell: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        cell_type = cell.get("cell_type")
        entry: dict[str, Any] = {"cellType": cell_type, "source": _joined(cell.get("source"))}
        if cell.get("execution_count") is not None:
            entry["execution_count"] = cell["execution_count"]
        entry["cell_id"] = cell_name(cell, index)
        outputs = cell.get("outputs")
        if cell_type == "code":
            entry["language"] = language
            if isinstance(outputs, list) and outputs:
                entry["outputs"] = [_shown_output(o) for o in outputs if isinstance(o, Mapping)]
        shown.append(entry)
    return shown


def render_shown(cells: list[Any], profile: Profile) -> list[ContentBlock]:
    """NB-RENDER-1, NB-OUTPUT-1 as the releases render ``shown_cells``: each cell's text
    block, then each output's text (after a newline) and its image; runs of text joined
    where the profile's release joins them."""
    lead = "\n" if profile.notebook_release_outputs else ""
    blocks: list[ContentBlock] = []
    for cell in cells:
        name, cell_type = cell["cell_id"], cell["cellType"]
        mark = f"<cell_type>{cell_type}</cell_type>" if cell_type in ("markdown", "raw") else ""
        blocks.append(
            {"type": "text", "text": f'<cell id="{name}">{mark}{cell["source"]}</cell id="{name}">'}
        )
        for output in cell.get("outputs", ()):
            blocks.extend(_text_block(output["text"], lead))
            image = output.get("image")
            if image is not None:
                source = {"type": "base64", "media_type": image["media_type"]}
                source["data"] = image["image_data"]
                blocks.append({"type": "image", "source": source})
    return _joined_texts(blocks) if profile.notebook_joined_text else blocks


def _enforce_token_cap(
    blocks: list[ContentBlock], path: str, cap: int, profile: Profile = DOCUMENTED
) -> None:
    """NB-TOKENS-1: the text blocks joined by newlines pass the token gate; the refusal
    worded as the profile's release words it."""
    joined = "\n".join(block["text"] for block in blocks if block["type"] == "text")
    decision = tokens.gate(joined, cap)
    if decision.passed:
        return
    amount = decision.amount(cap)  # TOK-GATE-2, TOK-BOUND-1
    raise errors.MaxFileReadTokenExceededError(
        profile.text("notebook_too_many_tokens", amount=amount, cap=cap, path=path)
    )


def read(
    ctx: ToolUseContext,
    path: str,
    st: fileio.Stat,
    data: bytes | None,
    view: tuple[int, int],
) -> ToolResult:
    """The notebook's cells; ``view`` is the call's normalized (offset, limit) for its record."""
    profile = ctx.session.profile
    check_size(st.size, profile)
    if data is None:
        data = fileio.read_bytes(path)
    content = text.decode(data, text.detect_encoding(data))
    doc = parse_notebook(content, profile)
    cells: list[Any] = doc["cells"]
    if profile.notebook_shown_cells:  # NB-RENDER-1 under a profile whose release gives them
        cells = shown_cells(cells, language_of(doc))
    result = ToolResult(data={"type": "notebook", "file": {"filePath": path, "cells": cells}})
    blocks = to_blocks(result.data, profile)
    _enforce_token_cap(blocks, path, ctx.session.max_read_tokens, profile)
    offset, limit = view
    ctx.session.read_state.set(  # NB-STATE-1: a full Read record, so dedup and NotebookEdit see it
        path,
        ReadRecord(
            text=content,
            mtime_ns=st.mtime_ns,
            size=st.size,
            offset=offset,
            limit=limit,
            partial=False,
            source="read",
            turn=ctx.session.turn,  # READ-DEDUP-5
        ),
    )
    return result


def to_blocks(data: Mapping[str, Any], profile: Profile = DOCUMENTED) -> list[ContentBlock]:
    """NB-RENDER-1: the content is rendered from the cells of the output (as stored, or as
    shown where the profile's release gives those); where it is empty, the profile's
    ``read_empty`` text (documented: none) is the one block."""
    cells: list[Any] = data["file"]["cells"]
    shown = profile.notebook_shown_cells
    blocks = render_shown(cells, profile) if shown else render(cells, profile)
    empty = "" if blocks else profile.text("read_empty")
    return [{"type": "text", "text": empty}] if empty else blocks
