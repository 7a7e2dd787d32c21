"""The demo documents' figures: simple diagrams drawn with Pillow, the same PNG bytes on every run."""

from __future__ import annotations

import io
from collections.abc import Callable

from PIL import Image, ImageDraw, ImageFont

INK = (34, 45, 60)
MUTED = (90, 102, 120)
BLUE = (214, 228, 245)
GREEN = (218, 238, 220)
AMBER = (250, 232, 200)
GREY = (236, 238, 242)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _box(draw: ImageDraw.ImageDraw, xy: tuple[int, int, int, int], text: str, fill, size: int = 20) -> None:
    draw.rounded_rectangle(xy, radius=12, fill=fill, outline=INK, width=3)
    x0, y0, x1, y1 = xy
    draw.multiline_text(
        ((x0 + x1) / 2, (y0 + y1) / 2), text, font=_font(size), fill=INK, anchor="mm", align="center", spacing=6
    )


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int], label: str = "") -> None:
    draw.line([start, end], fill=INK, width=3)
    (x0, y0), (x1, y1) = start, end
    length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head = 14
    left = (x1 - head * ux + head * 0.5 * uy, y1 - head * uy - head * 0.5 * ux)
    right = (x1 - head * ux - head * 0.5 * uy, y1 - head * uy + head * 0.5 * ux)
    draw.polygon([end, left, right], fill=INK)
    if label:
        position = ((x0 + x1) / 2, (y0 + y1) / 2)
        left_, top_, right_, bottom_ = draw.textbbox(position, label, font=_font(17), anchor="mm")
        draw.rectangle((left_ - 6, top_ - 4, right_ + 6, bottom_ + 4), fill="white")
        draw.text(position, label, font=_font(17), fill=MUTED, anchor="mm")


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def draw_document_anatomy() -> bytes:
    """Figure of the style guide: the five parts of an operations document."""
    image = Image.new("RGB", (900, 600), "white")
    draw = ImageDraw.Draw(image)
    draw.text((450, 34), "Anatomy of an operations document", font=_font(26), fill=INK, anchor="mm")
    parts = [
        ("# Title line\nsubject and identifier", BLUE, "find"),
        ("Header table\nids, dates, systems, roles", GREY, "filter"),
        ("Summary\nreadable on its own", GREEN, "decide"),
        ("## Sections\npredictable headings", GREY, "read"),
        ("Keywords: exact search terms", AMBER, "search"),
    ]
    top, height, gap = 70, 80, 25
    for index, (text, fill, purpose) in enumerate(parts):
        y0 = top + index * (height + gap)
        _box(draw, (80, y0, 560, y0 + height), text, fill)
        draw.text((610, y0 + height / 2), f"reader can {purpose}", font=_font(20), fill=MUTED, anchor="lm")
        _arrow(draw, (600, y0 + height / 2), (572, y0 + height / 2))
        if index:
            _arrow(draw, (320, y0 - gap), (320, y0 - 2))
    return _png(image)


def draw_message_path() -> bytes:
    """Figure 1 of the worked examples: the layers an outbound message passes."""
    image = Image.new("RGB", (1200, 400), "white")
    draw = ImageDraw.Draw(image)
    draw.text((600, 34), "Path of an outbound message and where to check it", font=_font(26), fill=INK, anchor="mm")
    steps = [
        ("Sending\napplication", "output status", BLUE),
        ("IDoc layer\nWE02 / BD87", "status 30 or 03?", GREY),
        ("tRFC layer\nSM58 / SM59", "error text?", AMBER),
        ("Middleware\nmessage monitor", "channel error?", GREY),
        ("Partner", "received?", GREEN),
    ]
    width, gap, y0, y1 = 200, 40, 110, 250
    for index, (text, question, fill) in enumerate(steps):
        x0 = 30 + index * (width + gap)
        _box(draw, (x0, y0, x0 + width, y1), text, fill, size=21)
        draw.text((x0 + width / 2, y1 + 40), question, font=_font(19), fill=MUTED, anchor="mm")
        if index:
            _arrow(draw, (x0 - gap + 2, (y0 + y1) // 2), (x0 - 2, (y0 + y1) // 2))
    draw.text(
        (600, 360),
        "Triage follows the same order: start where the message was created.",
        font=_font(19),
        fill=INK,
        anchor="mm",
    )
    return _png(image)


def draw_backlog_chart() -> bytes:
    """Figure 2 of the worked examples: inbound IDocs by status before and after processing."""
    image = Image.new("RGB", (1000, 560), "white")
    draw = ImageDraw.Draw(image)
    draw.text((500, 34), "Inbound confirmation IDocs by status", font=_font(26), fill=INK, anchor="mm")
    origin_x, origin_y, top_y = 120, 470, 90
    draw.line([(origin_x, top_y), (origin_x, origin_y)], fill=INK, width=3)
    draw.line([(origin_x, origin_y), (960, origin_y)], fill=INK, width=3)
    maximum = 10_000
    for tick in range(0, maximum + 1, 2_000):
        y = origin_y - (origin_y - top_y) * tick / maximum
        draw.line([(origin_x - 8, y), (origin_x, y)], fill=INK, width=2)
        draw.text((origin_x - 14, y), f"{tick:,}", font=_font(16), fill=MUTED, anchor="rm")
    groups = [("status 64\nready", 9_000, 0), ("status 53\nposted", 0, 8_760), ("status 51\nerror", 0, 240)]
    for index, (label, before, after) in enumerate(groups):
        x = origin_x + 60 + index * 270
        for offset, value, fill in ((0, before, GREY), (95, after, GREEN)):
            height = (origin_y - top_y) * value / maximum
            draw.rectangle([x + offset, origin_y - height, x + offset + 80, origin_y], fill=fill, outline=INK, width=2)
            draw.text((x + offset + 40, origin_y - height - 14), f"{value:,}", font=_font(16), fill=INK, anchor="mm")
        draw.multiline_text((x + 88, origin_y + 38), label, font=_font(18), fill=INK, anchor="mm", align="center")
    draw.rectangle([720, 90, 745, 110], fill=GREY, outline=INK)
    draw.text((755, 100), "before", font=_font(18), fill=INK, anchor="lm")
    draw.rectangle([830, 90, 855, 110], fill=GREEN, outline=INK)
    draw.text((865, 100), "after", font=_font(18), fill=INK, anchor="lm")
    return _png(image)


def draw_triage_flow() -> bytes:
    """Figure 3 of the worked examples: decision flow when a partner received nothing."""
    image = Image.new("RGB", (1200, 720), "white")
    draw = ImageDraw.Draw(image)
    draw.text((600, 30), "A partner received nothing: where to look", font=_font(26), fill=INK, anchor="mm")
    _box(draw, (450, 60, 750, 120), "Partner received nothing", AMBER)
    _box(draw, (470, 170, 730, 230), "IDoc status?", GREY)
    _arrow(draw, (600, 120), (600, 168))
    _box(draw, (40, 300, 340, 380), "Sending job and variant\nrb-idoc-backlog", BLUE, size=19)
    _box(draw, (450, 300, 750, 380), "Port, partner profile\nrb-idoc-backlog", BLUE, size=19)
    _box(draw, (860, 300, 1160, 380), "SM58: error text?", GREY)
    _arrow(draw, (520, 230), (190, 298), "30")
    _arrow(draw, (600, 230), (600, 298), "02 / 29")
    _arrow(draw, (680, 230), (1010, 298), "03")
    _box(draw, (40, 500, 360, 580), "SMGW registration\nrb-rfc-destination-failures", BLUE, size=19)
    _box(draw, (440, 500, 760, 580), "Certificates, trusted CAs\nrb-certificate-expiry", BLUE, size=19)
    _box(draw, (840, 500, 1160, 580), "Middleware channel log\nmessage monitor", BLUE, size=19)
    _arrow(draw, (930, 380), (200, 498), "not registered")
    _arrow(draw, (1010, 380), (600, 498), "SSL / PKIX")
    _arrow(draw, (1090, 380), (1000, 498), "empty")
    draw.text(
        (600, 650),
        "Resend only after the cause is fixed, in order, and count what arrived.",
        font=_font(19),
        fill=INK,
        anchor="mm",
    )
    return _png(image)


FIGURES: dict[str, Callable[[], bytes]] = {
    "document-anatomy": draw_document_anatomy,
    "message-path": draw_message_path,
    "backlog-chart": draw_backlog_chart,
    "triage-flow": draw_triage_flow,
}
