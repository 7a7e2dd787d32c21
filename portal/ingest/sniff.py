"""What a file's first bytes say it is, whatever its name claims."""

CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE compound file: .doc, encrypted .docx

_DESCRIPTIONS = {
    "pdf": "a PDF file",
    "zip": "a zip archive (such as .docx)",
    "cfb": "an old Office file (such as .doc)",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "webp": "a WebP image",
    "tiff": "a TIFF image",
    "bmp": "a BMP image",
    "emf": "an EMF drawing",
    "wmf": "a WMF drawing",
    "svg": "an SVG drawing",
    "heif": "a HEIF/AVIF image",
    "jpeg2000": "a JPEG 2000 image",
    "rtf": "an RTF document",
}


def sniff(data: bytes) -> str | None:
    """A short name for the format the bytes are in (``"pdf"``, ``"png"`` …), or None."""
    head = data[:1024]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(CFB_MAGIC):
        return "cfb"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "tiff"
    if head.startswith(b"\x01\x00\x00\x00") and head[40:44] == b" EMF":
        return "emf"
    if head.startswith((b"\xd7\xcd\xc6\x9a", b"\x01\x00\x09\x00", b"\x02\x00\x09\x00")):
        return "wmf"
    if head.startswith(b"BM"):
        return "bmp"
    if head[4:8] == b"ftyp":
        return "heif"
    if head.startswith((b"\x00\x00\x00\x0cjP  \r\n\x87\n", b"\xff\x4f\xff\x51")):
        return "jpeg2000"
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if b"<svg" in head.lower():
        return "svg"
    return None


def describe(kind: str | None) -> str | None:
    """``"a PNG image"`` for ``"png"``; None when the format is not known."""
    return _DESCRIPTIONS.get(kind) if kind else None
