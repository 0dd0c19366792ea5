"""Read of images (SPEC.md section 16, IMG-*) through the protocol engine, on a real disk."""

from __future__ import annotations

import base64
import io
import math
import random
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from refsupport import Call, assert_done, assert_refused, error_text, record_of

from reference.engine import Engine
from reference.tools.read import image as read_image

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
IMAGES = FIXTURES / "images"
TOKEN_CAP_ENV = "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS"
RESIZE_FAILED = (
    "Unable to resize image \u2014 dimensions exceed the 2000x2000px limit and image "
    "processing failed. Please resize the image to reduce its pixel dimensions."
)


def encode(image: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def sent_image(response: dict[str, Any]) -> Image.Image:
    """The image the model receives, decoded from the one image block."""
    blocks = response["tool_result"]["content"]
    assert isinstance(blocks, list)
    assert len(blocks) == 1
    assert blocks[0]["type"] == "image"
    return Image.open(io.BytesIO(base64.b64decode(blocks[0]["source"]["data"])))


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims the size and whose data is a token: opened, never decoded."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 16)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


# --- IMG-DETECT-1 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "media_type"),
    [
        ("small.png", "image/png"),
        ("photo.jpg", "image/jpeg"),
        ("anim.gif", "image/gif"),
        ("small.webp", "image/webp"),
    ],
)
def test_each_supported_format_is_sent_as_an_image(call: Call, name: str, media_type: str) -> None:
    """SPEC: IMG-DETECT-1, IMG-BLOCK-1"""
    path = IMAGES / name
    response = call("Read", file_path=str(path))
    output = assert_done(response)
    assert output["file"]["type"] == media_type
    block = response["tool_result"]["content"][0]
    assert block["source"] == {
        "type": "base64",
        "media_type": media_type,
        "data": base64.b64encode(path.read_bytes()).decode("ascii"),
    }


@pytest.mark.parametrize("name", ["shot.jpg", "shot.txt", "shot.pdf", "shot.ipynb", "shot"])
def test_the_kind_comes_from_the_bytes_whatever_the_name(
    tmp_path: Path, call: Call, name: str
) -> None:
    """SPEC: IMG-DETECT-1"""
    path = tmp_path / name
    path.write_bytes((IMAGES / "small.png").read_bytes())
    output = assert_done(call("Read", file_path=str(path)))
    assert (output["type"], output["file"]["type"]) == ("image", "image/png")


def test_a_big_image_read_whole_is_not_size_gated(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DETECT-1, READ-SIZE-1"""
    noise = Image.frombytes("L", (700, 700), random.Random(5).randbytes(490_000))
    path = tmp_path / "noise.png"
    path.write_bytes(encode(noise, "PNG"))
    assert path.stat().st_size > 262_144
    output = assert_done(call("Read", file_path=str(path)))
    assert output["file"]["originalSize"] == path.stat().st_size


def test_offset_and_limit_are_ignored_for_images(call: Call) -> None:
    """SPEC: IMG-DETECT-1"""
    path = IMAGES / "small.png"
    plain = assert_done(call("Read", file_path=str(path)))
    ranged = assert_done(call("Read", file_path=str(path), offset=5, limit=1))
    assert ranged == plain


def test_an_empty_file_with_an_image_name_is_text(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DETECT-1, READ-EMPTY-1"""
    path = tmp_path / "empty.png"
    path.write_bytes(b"")
    assert assert_done(call("Read", file_path=str(path)))["type"] == "text"


# --- IMG-UNSUPPORTED-1 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "label"),
    [
        ((IMAGES / "small.bmp").read_bytes(), "BMP"),
        (b"II*\x00\x08\x00\x00\x00", "TIFF"),
        (b"MM\x00*\x00\x00\x00\x08", "TIFF"),
        (b"\x00\x00\x01\x00\x01\x00\x10\x10", "ICO"),
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", "HEIC"),
        (b"\x00\x00\x00\x18ftypheix\x00\x00\x00\x00", "HEIC"),
        (b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00", "HEIC"),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00", "AVIF"),
    ],
    ids=["bmp", "tiff-le", "tiff-be", "ico", "heic", "heix", "mif1", "avif"],
)
def test_unsupported_image_formats_are_named(
    tmp_path: Path, call: Call, head: bytes, label: str
) -> None:
    """SPEC: IMG-UNSUPPORTED-1, IMG-DETECT-1"""
    path = tmp_path / "picture.img"
    path.write_bytes(head + b"\x00" * 64)
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="UnsupportedImageFormatError")
    assert error_text(response) == (
        f"This image format ({label}) is not supported. Supported formats: PNG, JPEG, GIF, WebP."
    )


def test_a_text_file_starting_with_bm_is_text(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-UNSUPPORTED-1, READ-BINARY-1"""
    path = tmp_path / "cars.txt"
    path.write_text("BMW and Audi\n", encoding="utf-8")
    assert assert_done(call("Read", file_path=str(path)))["type"] == "text"


def test_other_binary_files_stay_binary(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DETECT-1, READ-BINARY-1"""
    path = tmp_path / "blob.bin"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 32)
    assert_refused(call("Read", file_path=str(path)), stage="call", name="BinaryFileError")


# --- IMG-DECODE-1 --------------------------------------------------------------------


def test_a_corrupt_image_is_refused_by_name(call: Call) -> None:
    """SPEC: IMG-DECODE-1"""
    path = IMAGES / "corrupt.png"
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="CorruptImageError")
    assert error_text(response) == (
        f"The image file could not be decoded: {path} is not a valid PNG image."
    )


@pytest.mark.parametrize(
    ("head", "label"),
    [
        (b"\xff\xd8\xff\xe0garbage", "JPEG"),
        (b"GIF89a\x01", "GIF"),
        (b"RIFF\x00\x00\x00\x00WEBP", "WebP"),
    ],
)
def test_a_signature_without_an_image_is_corrupt(
    tmp_path: Path, call: Call, head: bytes, label: str
) -> None:
    """SPEC: IMG-DECODE-1"""
    path = tmp_path / "broken"
    path.write_bytes(head)
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="CorruptImageError")
    assert error_text(response).endswith(f"{path} is not a valid {label} image.")


def test_more_pixels_than_the_bomb_limit_is_a_resize_error(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-DECODE-1"""
    path = tmp_path / "bomb.png"
    path.write_bytes(png_header_only(20_000, 10_000))  # 200,000,000 pixels, never decoded
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="ImageResizeError")
    assert error_text(response) == RESIZE_FAILED


def test_the_bomb_limit_is_178956970_pixels() -> None:
    """SPEC: IMG-DECODE-1"""
    assert read_image.MAX_PIXELS == 178_956_970 == 2 * 89_478_485


# --- IMG-RESIZE-1 --------------------------------------------------------------------


def test_a_3000x2000_png_is_resized_to_2000x1333(call: Call) -> None:
    """SPEC: IMG-RESIZE-1, IMG-OUTPUT-1"""
    response = call("Read", file_path=str(IMAGES / "large.png"))
    file = assert_done(response)["file"]
    assert file["dimensions"] == {
        "originalWidth": 3000,
        "originalHeight": 2000,
        "displayWidth": 2000,
        "displayHeight": 1333,
    }
    image = sent_image(response)
    assert (image.format, image.size) == ("PNG", (2000, 1333))
    assert file["size"] == len(base64.b64decode(file["base64"])) != file["originalSize"]
    # the layout survived: the first tile is still red, the one right of it green
    rgb = image.convert("RGB")
    assert rgb.getpixel((80, 80)) == (220, 60, 60)
    assert rgb.getpixel((250, 80)) == (60, 160, 80)


def test_a_wide_gif_is_resized_and_stays_a_gif(call: Call) -> None:
    """SPEC: IMG-RESIZE-1"""
    response = call("Read", file_path=str(IMAGES / "wide.gif"))
    assert assert_done(response)["file"]["type"] == "image/gif"
    image = sent_image(response)
    assert (image.format, image.size) == ("GIF", (2000, 444))


@pytest.mark.parametrize(("fmt", "media_type"), [("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_resized_images_keep_their_format(
    tmp_path: Path, call: Call, fmt: str, media_type: str
) -> None:
    """SPEC: IMG-RESIZE-1"""
    path = tmp_path / "tall.img"
    path.write_bytes(encode(Image.new("RGB", (1200, 2400), (10, 200, 30)), fmt))
    response = call("Read", file_path=str(path))
    assert assert_done(response)["file"]["type"] == media_type
    assert sent_image(response).size == (1000, 2000)


def test_an_animated_gif_keeps_its_first_frame_only(tmp_path: Path, call: Call) -> None:
    """SPEC: IMG-RESIZE-1"""
    first = Image.new("RGB", (2400, 60), (255, 0, 0))
    second = Image.new("RGB", (2400, 60), (0, 0, 255))
    path = tmp_path / "anim.gif"
    path.write_bytes(encode(first, "GIF", save_all=True, append_images=[second]))
    image = sent_image(call("Read", file_path=str(path)))
    assert getattr(image, "n_frames", 1) == 1
    assert image.size == (2000, 50)
    assert image.convert("RGB").getpixel((1000, 25)) == (255, 0, 0)


@pytest.mark.parametrize(
    ("size", "fitted"),
    [
        ((2000, 2000), (2000, 2000)),
        ((2001, 10), (2000, 10)),
        ((4000, 1001), (2000, 501)),  # 500.5 rounds half up
        ((3000, 2000), (2000, 1333)),
        ((100_000, 10), (2000, 1)),  # never less than 1
        ((10, 6000), (3, 2000)),
    ],
)
def test_fit_box_keeps_the_aspect_ratio(size: tuple[int, int], fitted: tuple[int, int]) -> None:
    """SPEC: IMG-RESIZE-1"""
    assert read_image.fit_box(*size) == fitted


def test_an_image_within_the_box_is_sent_as_the_bytes_on_disk(call: Call) -> None:
    """SPEC: IMG-RESIZE-1, IMG-OUTPUT-1"""
    path = IMAGES / "photo.jpg"
    file = assert_done(call("Read", file_path=str(path)))["file"]
    assert base64.b64decode(file["base64"]) == path.read_bytes()
    assert file["size"] == file["originalSize"] == path.stat().st_size


# --- IMG-TOKENS-1 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "tokens"), [((1, 1), 1), ((30, 25), 1), ((31, 25), 2), ((2000, 2000), 5334)]
)
def test_the_estimate_is_pixels_over_750_rounded_up(size: tuple[int, int], tokens: int) -> None:
    """SPEC: IMG-TOKENS-1"""
    assert read_image.estimated_tokens(*size) == tokens == math.ceil(size[0] * size[1] / 750)


def test_an_image_over_the_token_cap_is_scaled_down(tmp_path: Path, begin: Any) -> None:
    """SPEC: IMG-TOKENS-1, TOK-CAP-1"""
    engine: Engine = begin(env={TOKEN_CAP_ENV: "1"})
    response = engine.handle(
        {
            "seq": 1,
            "cmd": "call",
            "tool_use": {
                "id": "toolu_1",
                "name": "Read",
                "input": {"file_path": str(IMAGES / "small.png")},
            },
        }
    )
    file = assert_done(response)["file"]
    # 48x32 = 1536 pixels = 3 tokens > 1: scaled by sqrt(750 / 1536), sides rounded down
    assert file["dimensions"]["displayWidth"] == 33
    assert file["dimensions"]["displayHeight"] == 22
    assert file["estimatedTokens"] == 1
    assert (file["type"], sent_image(response).size) == ("image/png", (33, 22))


def test_fit_tokens_rounds_down_and_keeps_at_least_one_pixel() -> None:
    """SPEC: IMG-TOKENS-1"""
    assert read_image.fit_tokens(48, 32, 3) == (48, 32)
    assert read_image.fit_tokens(1000, 1000, 100) == (273, 273)
    assert read_image.fit_tokens(2000, 1, 1) == (1224, 1)


# --- IMG-BUDGET-1 --------------------------------------------------------------------


def test_a_resize_over_the_byte_budget_is_sent_as_jpeg(call: Call) -> None:
    """SPEC: IMG-BUDGET-1, IMG-RESIZE-1"""
    response = call("Read", file_path=str(IMAGES / "budget.png"))
    file = assert_done(response)["file"]
    assert file["type"] == "image/jpeg"
    assert file["size"] <= 3_932_160
    image = sent_image(response)
    assert (image.format, image.size) == ("JPEG", (2000, 2000))


def test_the_budget_tries_quality_80_60_40_20_in_order(
    call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: IMG-BUDGET-1"""
    tried: list[int] = []
    real_save = Image.Image.save

    def spying_save(self: Image.Image, fp: Any, fmt: str | None = None, **params: Any) -> None:
        if fmt == "JPEG":
            tried.append(params["quality"])
        real_save(self, fp, fmt, **params)

    monkeypatch.setattr(Image.Image, "save", spying_save)
    monkeypatch.setattr(read_image, "BYTE_BUDGET", 200)
    path = IMAGES / "small.png"  # 195 bytes: fits; its JPEG forms do not
    assert assert_done(call("Read", file_path=str(path)))["file"]["type"] == "image/png"
    monkeypatch.setattr(read_image, "BYTE_BUDGET", 150)
    response = call("Read", file_path=str(path))
    assert_refused(response, stage="call", name="ImageTooLargeError")
    assert tried == [80, 60, 40, 20]


def test_jpeg_fallback_keeps_dimensions_and_whitens_transparency(
    tmp_path: Path, call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: IMG-BUDGET-1"""
    path = tmp_path / "alpha.png"
    path.write_bytes(encode(Image.open(IMAGES / "small.png"), "PNG", compress_level=0))
    monkeypatch.setattr(read_image, "BYTE_BUDGET", path.stat().st_size - 1)
    response = call("Read", file_path=str(path))
    file = assert_done(response)["file"]
    assert (file["type"], file["dimensions"]["displayWidth"]) == ("image/jpeg", 48)
    image = sent_image(response).convert("RGB")
    assert image.size == (48, 32)
    assert all(channel >= 250 for channel in image.getpixel((10, 28)))  # the transparent band


def test_over_the_budget_even_at_quality_20_is_an_error(
    call: Call, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SPEC: IMG-BUDGET-1"""
    monkeypatch.setattr(read_image, "BYTE_BUDGET", 10)
    response = call("Read", file_path=str(IMAGES / "photo.jpg"))
    assert_refused(response, stage="call", name="ImageTooLargeError")
    q20 = len(encode(Image.open(IMAGES / "photo.jpg").convert("RGB"), "JPEG", quality=20))
    assert error_text(response) == (
        f"Image was too large to send even after compression ({q20} bytes; the limit is "
        "10 bytes). Resize the image to reduce its pixel dimensions."
    )


def test_the_budget_is_3932160_bytes() -> None:
    """SPEC: IMG-BUDGET-1"""
    assert read_image.BYTE_BUDGET == 3_932_160
    assert len(base64.b64encode(b"\x00" * read_image.BYTE_BUDGET)) == 5_242_880


# --- IMG-BLOCK-1, IMG-OUTPUT-1, IMG-STATE-1 -------------------------------------------


def test_the_structured_output_of_an_image_read(call: Call) -> None:
    """SPEC: IMG-OUTPUT-1, IMG-BLOCK-1"""
    path = IMAGES / "small.webp"
    response = call("Read", file_path=str(path))
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    assert assert_done(response) == {
        "type": "image",
        "file": {
            "filePath": str(path),
            "base64": data,
            "type": "image/webp",
            "originalSize": 94,
            "size": 94,
            "dimensions": {
                "originalWidth": 40,
                "originalHeight": 30,
                "displayWidth": 40,
                "displayHeight": 30,
            },
            "estimatedTokens": 2,
        },
    }
    assert response["tool_result"]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": data}}
    ]


def test_image_reads_record_nothing_and_never_dedup(engine: Engine, call: Call) -> None:
    """SPEC: IMG-STATE-1"""
    path = IMAGES / "anim.gif"
    first = call("Read", file_path=str(path))
    second = call("Read", file_path=str(path))
    assert record_of(engine, path) is None
    assert second["outcome"]["dedup"] is False
    assert second["tool_result"]["content"] == first["tool_result"]["content"]
