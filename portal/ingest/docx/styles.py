"""Word styles and numbering: which paragraph is a heading or a list item, and bold/italic by style."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from portal.ingest.docx.package import W

_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)
_LIST_STYLE = re.compile(r"list (bullet|number)(?:\s*([2-9]))?", re.IGNORECASE)
_OFF = {"0", "false", "off", "none"}


def is_on(element) -> bool:
    return element is not None and element.get(f"{W}val", "true").lower() not in _OFF


@dataclass
class Style:
    name: str
    based_on: str | None
    numbering: tuple[str, int] | None
    outline_level: int | None
    bold: bool | None
    italic: bool | None


class Styles:
    def __init__(self, root):
        self.by_id: dict[str, Style] = {}
        self.default_paragraph: str | None = None
        if root is None:
            return
        for element in root.iter(f"{W}style"):
            style_id = element.get(f"{W}styleId", "")
            is_default = element.get(f"{W}default", "").lower() in ("1", "true", "on")
            if element.get(f"{W}type") == "paragraph" and is_default:
                self.default_paragraph = style_id
            name = element.find(f"{W}name")
            based_on = element.find(f"{W}basedOn")
            paragraph = element.find(f"{W}pPr")
            run = element.find(f"{W}rPr")
            self.by_id[style_id] = Style(
                name=(name.get(f"{W}val", "") if name is not None else style_id).strip(),
                based_on=based_on.get(f"{W}val") if based_on is not None else None,
                numbering=numbering_reference(paragraph),
                outline_level=outline_level(paragraph),
                bold=is_on(run.find(f"{W}b")) if run is not None and run.find(f"{W}b") is not None else None,
                italic=is_on(run.find(f"{W}i")) if run is not None and run.find(f"{W}i") is not None else None,
            )

    def chain(self, style_id: str | None) -> Iterator[Style]:
        seen = set()
        while style_id and style_id in self.by_id and style_id not in seen and len(seen) < 20:
            seen.add(style_id)
            style = self.by_id[style_id]
            yield style
            style_id = style.based_on

    def heading_level(self, style_id: str | None) -> int | None:
        for style in self.chain(style_id):
            match = _HEADING_STYLE.fullmatch(style.name)
            if match:
                return min(int(match.group(1)), 6)
            if style.name.lower() == "title":
                return 1
            if style.outline_level is not None and style.outline_level < 9:
                return min(style.outline_level + 1, 6)
        return None

    def numbering(self, style_id: str | None) -> tuple[str, int] | None:
        for style in self.chain(style_id):
            if style.numbering:
                return style.numbering
        return None

    def list_style(self, style_id: str | None) -> tuple[str, int] | None:
        """("bullet" | "number", level) for the built-in List Bullet / List Number styles."""
        for style in self.chain(style_id):
            match = _LIST_STYLE.fullmatch(style.name)
            if match:
                kind = "bullet" if match.group(1).lower() == "bullet" else "number"
                return kind, int(match.group(2) or 1) - 1
        return None

    def run_format(self, style_id: str | None) -> tuple[bool | None, bool | None]:
        bold = italic = None
        for style in self.chain(style_id):
            bold = style.bold if bold is None else bold
            italic = style.italic if italic is None else italic
        return bold, italic


def numbering_reference(paragraph_properties) -> tuple[str, int] | None:
    if paragraph_properties is None:
        return None
    reference = paragraph_properties.find(f"{W}numPr")
    if reference is None:
        return None
    num_id = reference.find(f"{W}numId")
    level = reference.find(f"{W}ilvl")
    if num_id is None:
        return None
    try:
        return num_id.get(f"{W}val", "0"), int(level.get(f"{W}val", "0")) if level is not None else 0
    except ValueError:
        return None


def outline_level(paragraph_properties) -> int | None:
    if paragraph_properties is None:
        return None
    element = paragraph_properties.find(f"{W}outlineLvl")
    try:
        return int(element.get(f"{W}val")) if element is not None else None
    except (TypeError, ValueError):
        return None


class Numbering:
    """List formats from numbering.xml: is level N of list M bulleted, and where it starts."""

    def __init__(self, root, styles: Styles):
        self.abstract: dict[str, dict[int, tuple[str, int]]] = {}
        self.style_links: dict[str, str] = {}
        self.instances: dict[str, tuple[str, dict[int, int]]] = {}
        self.styles = styles
        if root is None:
            return
        for abstract in root.iter(f"{W}abstractNum"):
            levels = {}
            for level in abstract.iter(f"{W}lvl"):
                fmt = level.find(f"{W}numFmt")
                start = level.find(f"{W}start")
                try:
                    levels[int(level.get(f"{W}ilvl", "0"))] = (
                        fmt.get(f"{W}val", "decimal") if fmt is not None else "decimal",
                        int(start.get(f"{W}val", "1")) if start is not None else 1,
                    )
                except ValueError:
                    continue
            abstract_id = abstract.get(f"{W}abstractNumId", "")
            self.abstract[abstract_id] = levels
            link = abstract.find(f"{W}numStyleLink")
            if link is not None:
                self.style_links[abstract_id] = link.get(f"{W}val", "")
        for num in root.iter(f"{W}num"):
            abstract_ref = num.find(f"{W}abstractNumId")
            starts = {}
            for override in num.iter(f"{W}lvlOverride"):
                start = override.find(f"{W}startOverride")
                try:
                    if start is not None:
                        starts[int(override.get(f"{W}ilvl", "0"))] = int(start.get(f"{W}val", "1"))
                except ValueError:
                    continue
            if abstract_ref is not None:
                self.instances[num.get(f"{W}numId", "")] = (abstract_ref.get(f"{W}val", ""), starts)

    def level_format(self, num_id: str, level: int, depth: int = 0) -> tuple[str, int] | None:
        """("bullet" | "number", start) or None when the paragraph is not a list item."""
        if num_id == "0" or num_id not in self.instances or depth > 3:
            return None
        abstract_id, starts = self.instances[num_id]
        levels = self.abstract.get(abstract_id, {})
        if not levels and abstract_id in self.style_links:
            linked = self.styles.numbering(self.style_links[abstract_id])
            return self.level_format(linked[0], level, depth + 1) if linked else None
        fmt, start = levels.get(level, ("bullet", 1))
        if fmt == "none":
            return None
        return ("bullet" if fmt == "bullet" else "number"), starts.get(level, start)
