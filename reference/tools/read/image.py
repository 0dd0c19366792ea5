"""Read of an image: known by its bytes, decoded, fitted, sent as an image block.

SPEC.md section 16. The work is a pipeline on one decoded image:
decode in full (IMG-DECODE-1), fit in 2000x2000 (IMG-RESIZE-1), fit the token
cap (IMG-TOKENS-1), fit the byte budget (IMG-BUDGET-1). Each step that changes
the pixels re-encodes; an image no step touches is sent as the bytes on disk.
"""

from __future__ import annotations

import base64
import enum
import io
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from reference import errors
from reference.tool import ContentBlock, ToolResult

if TYPE_CHECKING:
    from PIL import Image

MAX_SIDE: Final = 2000  # IMG-RESIZE-1
MAX_PIXELS: Final = 178_956_970  # IMG-DECODE-1: Pillow's decompression-bomb limit
PIXELS_PER_TOKEN: Final = 750  # IMG-TOKENS-1
BYTE_BUDGET: Final = 3_932_160  # IMG-BUDGET-1: its base64 is at most 5,242,880 bytes
JPEG_QUALITIES: Final = (80, 60, 40, 20)  # IMG-BUDGET-1, tried in this order
RESIZE_FAILED: Final = (  # IMG-DECODE-1: the original's text
    "Unable to resize image \u2014 dimensions exceed the 2000x2000px limit and image "
    "processing failed. Please resize the image to reduce its pixel dimensions."
)


# Pillow is imported by the functions that use it, on the first image Read:
# every other command, and the engine's start, would pay for its import.
# IMG-DECODE-1 is checked explicitly (``MAX_PIXELS``, before the full decode).
# Pillow's own check would also warn from half that size on, which is noise
# here (and an error under ``-W error``), so ``decode`` turns it off.


class ImageFormat(enum.Enum):
    """The formats Read sends (IMG-DETECT-1): display name -> Pillow name, media type."""

    PNG = ("PNG", "PNG", "image/png")
    JPEG = ("JPEG", "JPEG", "image/jpeg")
    GIF = ("GIF", "GIF", "image/gif")
    WEBP = ("WebP", "WEBP", "image/webp")

    def __init__(self, label: str, pillow: str, media_type: str) -> None:
        self.label = label
        self.pillow = pillow
        self.media_type = media_type


def image_format(head: bytes) -> ImageFormat | None:
    """IMG-DETECT-1: the supported image whose signature ``head`` starts with."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return ImageFormat.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return ImageFormat.JPEG
    if head.startswith((b"GIF87a", b"GIF89a")):
        return ImageFormat.GIF
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return ImageFormat.WEBP
    return None


_HEIF_BRANDS: Final = {b"heic": "HEIC", b"heix": "HEIC", b"mif1": "HEIC", b"avif": "AVIF"}


def unsupported_format(head: bytes) -> str | None:
    """IMG-UNSUPPORTED-1: the name of an image format Read does not send, if any."""
    if head.startswith(b"BM"):
        return "BMP"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "TIFF"
    if head.startswith(b"\x00\x00\x01\x00"):
        return "ICO"
    if head[4:8] == b"ftyp":
        return _HEIF_BRANDS.get(head[8:12])
    return None


def unsupported_error(fmt: str) -> errors.UnsupportedImageFormatError:
    return errors.UnsupportedImageFormatError(  # IMG-UNSUPPORTED-1
        f"This image format ({fmt}) is not supported. Supported formats: PNG, JPEG, GIF, WebP."
    )


class Sent(NamedTuple):
    """The bytes that go to the model, their format and dimensions."""

    data: bytes
    fmt: ImageFormat
    width: int
    height: int


def estimated_tokens(width: int, height: int) -> int:
    """IMG-TOKENS-1: ``ceil(width * height / 750)``."""
    return -(-(width * height) // PIXELS_PER_TOKEN)


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


def fit_box(width: int, height: int) -> tuple[int, int]:
    """IMG-RESIZE-1: the dimensions within 2000x2000, aspect ratio kept."""
    if width <= MAX_SIDE and height <= MAX_SIDE:
        return width, height
    scale = min(MAX_SIDE / width, MAX_SIDE / height)
    return max(1, _round_half_up(width * scale)), max(1, _round_half_up(height * scale))


def fit_tokens(width: int, height: int, cap: int) -> tuple[int, int]:
    """IMG-TOKENS-1: over the cap, scale by sqrt(cap * 750 / pixels), sides rounded down."""
    if estimated_tokens(width, height) <= cap:
        return width, height
    factor = math.sqrt(cap * PIXELS_PER_TOKEN / (width * height))
    return max(1, math.floor(width * factor)), max(1, math.floor(height * factor))


def decode(path: str, data: bytes, fmt: ImageFormat) -> Image.Image:
    """IMG-DECODE-1: decode in full (the first frame of an animation), or fail by name."""
    corrupt = errors.CorruptImageError(
        f"The image file could not be decoded: {path} is not a valid {fmt.label} image."
    )
    from PIL import Image  # noqa: PLC0415  (deferred, see above)

    Image.MAX_IMAGE_PIXELS = None
    try:
        image = Image.open(io.BytesIO(data), formats=[fmt.pillow])
    except Exception as exc:  # any decoder failure is a corrupt file
        raise corrupt from exc
    if image.width * image.height > MAX_PIXELS:  # IMG-DECODE-1: before any pixel is decoded
        raise errors.ImageResizeError(RESIZE_FAILED)
    try:
        image.load()
    except Exception as exc:
        raise corrupt from exc
    return image


def _resizable(image: Image.Image) -> Image.Image:
    """A mode Lanczos works in (Pillow resamples palette and 1-bit images by nearest)."""
    if image.mode in ("P", "PA"):
        has_alpha = image.mode == "PA" or "transparency" in image.info
        return image.convert("RGBA" if has_alpha else "RGB")
    if image.mode == "1":
        return image.convert("L")
    return image


def encode(image: Image.Image, fmt: ImageFormat) -> bytes:
    """Re-encode in the image's own format, with the encoder's defaults."""
    buffer = io.BytesIO()
    image.save(buffer, fmt.pillow)
    return buffer.getvalue()


def _flatten(image: Image.Image) -> Image.Image:
    """IMG-BUDGET-1: transparency composited on white, as RGB for JPEG."""
    has_alpha = image.mode in ("RGBA", "LA", "PA", "La", "RGBa") or "transparency" in image.info
    if not has_alpha:
        return image.convert("RGB")
    from PIL import Image  # noqa: PLC0415  (deferred, see above)

    rgba = image.convert("RGBA")
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, rgba).convert("RGB")


def fit_budget(sent: Sent, image: Image.Image) -> Sent:
    """IMG-BUDGET-1: over the budget, JPEG at falling quality, dimensions kept."""
    if len(sent.data) <= BYTE_BUDGET:
        return sent
    flat = _flatten(image)
    size = len(sent.data)
    for quality in JPEG_QUALITIES:
        buffer = io.BytesIO()
        flat.save(buffer, "JPEG", quality=quality)
        size = buffer.tell()
        if size <= BYTE_BUDGET:
            return Sent(buffer.getvalue(), ImageFormat.JPEG, sent.width, sent.height)
    raise errors.ImageTooLargeError(
        f"Image was too large to send even after compression ({size} bytes; the limit is "
        f"{BYTE_BUDGET} bytes). Resize the image to reduce its pixel dimensions."
    )


def _scaled(sent: Sent, image: Image.Image, target: tuple[int, int]) -> tuple[Sent, Image.Image]:
    """Lanczos to ``target`` and re-encode in the image's own format; as is when it fits."""
    if target == (sent.width, sent.height):
        return sent, image
    from PIL import Image  # noqa: PLC0415  (deferred, see above)

    image = _resizable(image).resize(target, Image.Resampling.LANCZOS)
    return Sent(encode(image, sent.fmt), sent.fmt, *target), image


def prepare(path: str, data: bytes, fmt: ImageFormat, cap: int) -> tuple[Sent, int, int]:
    """The bytes to send, and the original width and height."""
    image = decode(path, data, fmt)
    width, height = image.size
    sent = Sent(data, fmt, width, height)  # within every limit: the bytes on disk
    sent, image = _scaled(sent, image, fit_box(width, height))  # IMG-RESIZE-1
    sent, image = _scaled(sent, image, fit_tokens(sent.width, sent.height, cap))  # IMG-TOKENS-1
    return fit_budget(sent, image), width, height


def read(path: str, data: bytes, fmt: ImageFormat, cap: int) -> ToolResult:
    """IMG-OUTPUT-1. Records nothing in the read-file state (IMG-STATE-1)."""
    sent, width, height = prepare(path, data, fmt, cap)
    return ToolResult(
        data={
            "type": "image",
            "file": {
                "filePath": path,
                "base64": base64.b64encode(sent.data).decode("ascii"),
                "type": sent.fmt.media_type,
                "originalSize": len(data),
                "size": len(sent.data),
                "dimensions": {
                    "originalWidth": width,
                    "originalHeight": height,
                    "displayWidth": sent.width,
                    "displayHeight": sent.height,
                },
                "estimatedTokens": estimated_tokens(sent.width, sent.height),
            },
        }
    )


def to_blocks(data: Mapping[str, Any]) -> list[ContentBlock]:
    """IMG-BLOCK-1: one image block of the bytes sent."""
    file = data["file"]
    source = {"type": "base64", "media_type": file["type"], "data": file["base64"]}
    return [{"type": "image", "source": source}]
