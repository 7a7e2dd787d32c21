"""Figures in a document's text: labels, numbering and where the markers go.

Readers put a placeholder where each picture stands; once the images are
prepared, ``assemble`` turns the kept ones into ``[Figure N: label]`` (numbered
in document order), removes the others, and appends the Images line when any
image was not kept (both markers are written by ``markers``). Readers strip
control characters from document text, so the NUL-delimited placeholders
cannot collide with it, and keep the author's text from reading as a marker
(``markers.neutralise_markers``); a picture not kept leaves its neighbours side
by side, so a line that lost one is kept apart again before the markers go in.
"""

import re
from dataclasses import dataclass, field

from portal.controls import readable_text
from portal.ingest.markers import figure_marker, images_line, neutralise_markers

MAX_LABEL_CHARS = 200
NO_ALT_TEXT_LABEL = "image"

_PLACEHOLDER = re.compile(r"( ?)\x00(\d+)\x00")


@dataclass
class ExtractedFigure:
    """A kept image read from an upload: lossless WebP bytes and the marker it stands for in the text.

    Not yet stored; once stored it is a ``portal.models.Figure`` row.
    """

    number: int
    label: str
    webp: bytes
    width: int
    height: int


@dataclass
class AssembledText:
    text: str
    figures: list[ExtractedFigure]
    images_not_kept: dict[str, int] = field(default_factory=dict)


def placeholder(slot: int) -> str:
    """The stand-in for picture ``slot`` (0-based, document order) in a reader's text."""
    return f"\x00{slot}\x00"


def figure_label(alt_text: str | None, fallback: str = NO_ALT_TEXT_LABEL) -> str:
    """A one-line label of at most 200 characters, cut at a word boundary with "…".

    Square brackets become parentheses so the label cannot close its marker early. Alt text is text read
    out of the file like its body, so it loses the same controls (``strip_control_characters``).
    """
    label = " ".join(readable_text(alt_text or "").split())
    label = label.replace("[", "(").replace("]", ")")
    if not label:
        return fallback
    if len(label) <= MAX_LABEL_CHARS:
        return label
    cut = label[: MAX_LABEL_CHARS - 1]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def assemble(
    text: str,
    labels: list[str],
    kept: dict[int, tuple[bytes, int, int]],
    not_kept: dict[int, str],
) -> AssembledText:
    """Replace the placeholders of ``text`` and count what was not kept.

    ``kept`` maps a slot to its (webp, width, height); ``not_kept`` maps a slot to
    its reason. A slot in neither ran out of time (``deadline``).
    """
    figures: list[ExtractedFigure] = []
    reasons: dict[str, int] = {}
    for slot in range(len(labels)):
        if slot not in kept:
            reason = not_kept.get(slot, "deadline")
            reasons[reason] = reasons.get(reason, 0) + 1

    def without_unkept(match: re.Match) -> str:
        return match.group() if int(match.group(2)) in kept else ""  # with the space before it: no double space

    def marker(match: re.Match) -> str:
        space, slot = match.group(1), int(match.group(2))
        webp, width, height = kept[slot]
        number = len(figures) + 1
        figures.append(ExtractedFigure(number, labels[slot], webp, width, height))
        return space + figure_marker(number, labels[slot])

    lines = []
    for line in text.split("\n"):
        if "\x00" not in line:
            lines.append(line)
            continue
        # "[Figure " + a picture not kept + " 1: x]" would now read as a marker: kept apart again
        replaced = _PLACEHOLDER.sub(marker, neutralise_markers(_PLACEHOLDER.sub(without_unkept, line)))
        lines.append(replaced if replaced.strip() else None)  # None: only unkept pictures
    result = "\n".join(_drop_removed_lines(lines)).strip("\n")
    if reasons:
        result = f"{result}\n\n{images_line(len(figures), reasons)}" if result else images_line(0, reasons)
    return AssembledText(result, figures, reasons)


def _drop_removed_lines(lines: list[str | None]) -> list[str]:
    """Remove emptied lines, then any blank line that would follow another blank line.

    Reader output never holds two blank lines in a row, so this only closes the
    gaps the removed lines leave.
    """
    out: list[str] = []
    for line in lines:
        if line is None:
            continue
        if not line.strip() and out and not out[-1].strip():
            continue
        out.append(line)
    return out
