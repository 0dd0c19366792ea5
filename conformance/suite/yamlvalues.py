"""The scalar encodings of scenario files: octal modes, mtime offsets, base64.

The schema checks the text of each; these only convert text that passed it
(``decode_b64`` alone is also the loader's own validity test).
"""

from __future__ import annotations

import base64
import binascii

__all__ = ["decode_b64", "parse_mode", "parse_mtime"]


def parse_mtime(text: str) -> float:
    """``"+10s"`` -> 10.0; the format is checked by the schema."""
    return float(text[:-1])


def parse_mode(text: str | None) -> int | None:
    """``"0644"`` -> 0o644; None stays None."""
    return None if text is None else int(text, 8)


def decode_b64(text: str) -> bytes | None:
    """The decoded bytes, or None when ``text`` is not strict base64."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
