"""Kept images (SPEC 5): the per-document budget and the re-encoding to lossless WebP.

Runs in the reading child process only (it imports Pillow). Every check that can
be made from a header is made before any pixel is decoded.
"""

import io
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from PIL import Image, ImageCms, ImageOps

from portal.ingest import limits
from portal.ingest.figures import placeholder
from portal.ingest.sniff import sniff

KEPT_TYPES = {"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WEBP"}

# Lossless WebP effort: method 1 / quality 20 encodes a 1568 px photo in about
# 0.3 s (the default, 4 / 80, takes 1.8 s) for files about 1 % larger.
WEBP_METHOD = 1
WEBP_QUALITY = 20


class NotKept(Exception):
    """An image that is not kept, with its reason (one of ``limits.IMAGE_REASONS``)."""

    def __init__(self, reason: str, width: int = 0, height: int = 0, size: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.width = width
        self.height = height
        self.size = size

    def facts(self) -> dict[str, int]:
        return {"width": self.width, "height": self.height, "size": self.size}


@dataclass
class PreparedImage:
    webp: bytes
    width: int
    height: int


ImageOutcome = PreparedImage | NotKept


@dataclass
class Reading:
    """A reader's text, with a placeholder per picture, and how to prepare the pictures.

    ``images(budget)`` yields ``(slot, outcome)`` for every slot, in order.
    """

    text: str
    labels: list[str]
    images: Callable[["ImageBudget"], Iterator[tuple[int, ImageOutcome]]]
    pages: int | None = None
    close: Callable[[], None] = field(default=lambda: None)
    title: str = ""  # the file's own title (PDF metadata), when it has one


class ImageBudget:
    """What one document may still spend on images: time, count and bytes read."""

    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds
        self.kept = 0
        self.pool_used = 0

    def check_time_and_count(self) -> None:
        if time.monotonic() >= self.deadline:
            raise NotKept("deadline")
        if self.kept >= limits.MAX_IMAGES:
            raise NotKept("count")

    def charge(self, stored_bytes: int) -> None:
        """Account for reading an image of ``stored_bytes`` as stored in the document."""
        if stored_bytes > limits.MAX_IMAGE_BYTES:
            raise NotKept("bytes", size=stored_bytes)
        if self.pool_used + stored_bytes > limits.MAX_IMAGE_POOL_BYTES:
            raise NotKept("pool", size=stored_bytes)
        self.pool_used += stored_bytes

    def record_kept(self) -> None:
        self.kept += 1


def configure_pillow() -> None:
    """Make Pillow refuse to open far larger images than we keep (reading child only)."""
    Image.MAX_IMAGE_PIXELS = limits.MAX_IMAGE_PIXELS  # Pillow raises above twice this
    warnings.simplefilter("ignore", Image.DecompressionBombWarning)


def read_image_file(data: bytes, label: str) -> Reading:
    """An image upload is a document of its own: its text is its one figure's marker."""

    def prepare(budget: ImageBudget) -> Iterator[tuple[int, ImageOutcome]]:
        try:
            budget.check_time_and_count()
            yield 0, prepare_image_bytes(data)
        except NotKept as not_kept:
            yield 0, not_kept

    return Reading(text=placeholder(0), labels=[label], images=prepare)


def check_dimensions(width: int, height: int) -> None:
    if width * height > limits.MAX_IMAGE_PIXELS:
        raise NotKept("pixels", width, height)
    if min(width, height) < limits.MIN_IMAGE_SIDE:
        raise NotKept("size", width, height)


def prepare_image_bytes(data: bytes) -> PreparedImage:
    """Keep an image file's bytes as lossless WebP, or raise NotKept with the reason."""
    kind = sniff(data)
    if kind not in KEPT_TYPES:
        raise NotKept("type" if kind else "decode", size=len(data))
    if len(data) > limits.MAX_IMAGE_BYTES:
        raise NotKept("bytes", size=len(data))
    try:
        image = Image.open(io.BytesIO(data), formats=[KEPT_TYPES[kind]])
    except Image.DecompressionBombError:
        raise NotKept("pixels", *_png_size(data)) from None
    except Exception:
        raise NotKept("decode", size=len(data)) from None
    with image:
        check_dimensions(*image.size)
        if kind != "jpeg" and getattr(image, "is_animated", False):
            raise NotKept("decode", *image.size)  # JPEG "frames" are MPO previews: first frame
        return prepare_pil_image(image)


def prepare_pil_image(image: Image.Image) -> PreparedImage:
    """Re-encode a checked image: upright, sRGB, at most 1,568 px a side, no metadata."""
    try:
        if image.format == "JPEG":
            image.draft(image.mode, _fitted(image.size))  # decode at a reduced scale
        image.load()
        image = ImageOps.exif_transpose(image)
        image = _to_srgb(image)
        image.thumbnail((limits.KEPT_IMAGE_SIDE, limits.KEPT_IMAGE_SIDE), Image.Resampling.LANCZOS)
        image.info = {}  # drop EXIF, ICC, XMP and text chunks from what is written
        out = io.BytesIO()
        image.save(
            out,
            "WEBP",
            lossless=True,
            quality=WEBP_QUALITY,
            method=WEBP_METHOD,
            exif=b"",
            icc_profile=None,
            xmp=b"",
        )
    except NotKept:
        raise
    except Exception:
        raise NotKept("decode", *image.size) from None
    return PreparedImage(out.getvalue(), image.width, image.height)


def _fitted(size: tuple[int, int]) -> tuple[int, int]:
    width, height = size
    scale = min(1.0, limits.KEPT_IMAGE_SIDE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _to_srgb(image: Image.Image) -> Image.Image:
    """RGB or RGBA pixels, converted through the embedded ICC profile when there is one."""
    has_alpha = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in image.info
    target = "RGBA" if has_alpha else "RGB"
    if image.mode.startswith("I;16"):
        image = image.convert("I")
    if image.mode in ("I", "F"):
        image = image.point(lambda value: value / 256).convert("L")
    icc = image.info.get("icc_profile")
    if icc and not has_alpha:
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            srgb = ImageCms.createProfile("sRGB")
            return ImageCms.profileToProfile(image, source, srgb, outputMode="RGB")
        except Exception:
            pass  # an unusable profile: fall back to converting the numbers as they are
    image = image if image.mode == target else image.convert(target)
    if target == "RGBA" and image.getchannel("A").getextrema() == (255, 255):
        image = image.convert("RGB")  # an alpha channel with nothing transparent in it
    return image


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG header (for the message when Pillow refuses to open)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return 0, 0
