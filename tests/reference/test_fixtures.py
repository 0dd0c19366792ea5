"""The committed image, PDF and notebook fixtures are what fixtures/make_fixtures.py makes.

Policy (documented in fixtures/make_fixtures.py): the script is deterministic,
so with the library builds recorded in ``fixtures/manifest.json`` it must
regenerate every committed file byte for byte. Encoders (zlib, libjpeg,
libwebp, pypdf) may change their output between versions; with other builds
the byte comparison is skipped and the committed files must still match the
manifest's hashes and parse as it says.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PIL import Image
from pypdf import PdfReader
from pypdf.errors import PdfReadError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MANIFEST: dict[str, Any] = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
FILES: dict[str, dict[str, Any]] = MANIFEST["files"]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_fixtures", module)
    spec.loader.exec_module(module)
    return module


SCRIPT = load_script()


def test_the_fixtures_stay_small() -> None:
    """Reference-defined: the committed fixtures are under 200 KB in all."""
    assert sum(entry["bytes"] for entry in FILES.values()) < 200_000


@pytest.mark.parametrize("name", sorted(FILES))
def test_committed_files_match_the_manifest(name: str) -> None:
    """Reference-defined: every committed fixture has the manifest's hash."""
    data = (FIXTURES / name).read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (
        FILES[name]["bytes"],
        FILES[name]["sha256"],
    )


@pytest.mark.parametrize("name", sorted(FILES))
def test_committed_files_parse_as_the_manifest_says(name: str) -> None:
    """Reference-defined: each fixture is the kind of file the scenarios rely on."""
    entry = FILES[name]
    data = (FIXTURES / name).read_bytes()
    kind = entry["kind"]
    if kind == "image":
        image = Image.open(io.BytesIO(data))
        image.load()
        assert (image.format, list(image.size)) == (entry["format"], entry["size"])
    elif kind == "corrupt-image":
        image = Image.open(io.BytesIO(data))
        assert image.format == entry["format"]
        with pytest.raises(OSError, match="truncated"):
            image.load()
    elif kind == "pdf":
        assert len(PdfReader(io.BytesIO(data)).pages) == entry["pages"]
    elif kind == "encrypted-pdf":
        assert PdfReader(io.BytesIO(data)).is_encrypted
    elif kind == "broken-pdf":
        assert data.startswith(b"%PDF-")
        with pytest.raises(PdfReadError):
            PdfReader(io.BytesIO(data))
    elif kind == "notebook":
        assert len(json.loads(data)["cells"]) == entry["cells"]
    else:
        assert kind == "broken-notebook"
        try:
            doc = json.loads(data)
        except ValueError:
            return
        assert not isinstance(doc.get("cells"), list)


def test_the_script_regenerates_identical_bytes(tmp_path: Path) -> None:
    """Reference-defined: fixtures/make_fixtures.py is deterministic."""
    if SCRIPT.library_versions() != MANIFEST["libraries"]:
        pytest.skip(
            f"library builds differ from the manifest's ({SCRIPT.library_versions()} vs "
            f"{MANIFEST['libraries']}): committed files are checked by parsing instead"
        )
    SCRIPT.write(tmp_path)
    regenerated = {
        str(path.relative_to(tmp_path)): path.read_bytes()
        for path in sorted(tmp_path.rglob("*"))
        if path.is_file()
    }
    committed = {name: (FIXTURES / name).read_bytes() for name in FILES}
    committed["manifest.json"] = (FIXTURES / "manifest.json").read_bytes()
    assert regenerated.keys() == committed.keys()
    assert [name for name in committed if regenerated[name] != committed[name]] == []
