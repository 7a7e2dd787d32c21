"""Citation markers in an answer, checked against the references actually issued.

A marker is ``[1]``, ``[2, 3]``, ``[1-3]`` or a run of them (``[1][2]``), not
glued to a word (``items[0]`` is code) nor followed by ``(`` (a Markdown link).
A number that was not issued is removed from the text and reported; the rest of
the answer is left exactly as written. Once checked, the references are numbered
in the order the answer first cites them (``first_use``, ``renumbered``): an
answer citing the first, third and fourth of eight passages reads [1], [2], [3]
and its "3 cited" sources are those, not [1], [3], [4] with a [2] to look for.
"""

import re

_ITEMS = re.compile(r"\s*[,;]\s*")  # what separates a marker's items ("[1, 3]", "[2; 4]")
_MAX_RANGE = 50  # a wider "[1-1000]" is not a citation anyone means
_ITEM = r"\d{1,4}(?:\s*[-–]\s*\d{1,4})?"
_MARKER = re.compile(rf"(\s*)(?<!\w)\[\s*({_ITEM}(?:\s*[,;]\s*{_ITEM})*)\s*\](?!\()([ \t]*)")
# The same marker as shown in an answer: group 1 is what stands between the brackets.
SHOWN_MARKER = re.compile(rf"(?<!\w)\[\s*({_ITEM}(?:\s*[,;]\s*{_ITEM})*)\s*\](?!\()")


def _numbers(item: str) -> list[int] | None:
    """The numbers an item names, or None when it is not a plausible citation."""
    bounds = [int(part) for part in re.split(r"\s*[-–]\s*", item.strip())]
    if len(bounds) == 1:
        return bounds
    first, last = bounds
    if last < first or last - first > _MAX_RANGE:
        return None
    return list(range(first, last + 1))


def validate_citations(answer: str, issued: set[int]) -> tuple[str, list[int], list[str]]:
    """``(clean_answer, cited, warnings)``: unissued markers removed, cited numbers sorted and unique."""
    cited: set[int] = set()
    removed: list[int] = []

    def check(match: re.Match) -> str:
        leading_space, inside, trailing_space = match.groups()
        items = _ITEMS.split(inside)
        parsed = [(item, _numbers(item)) for item in items]
        if any(numbers is None for _, numbers in parsed):
            return match.group(0)  # not a citation: leave it alone
        kept_items = []
        for item, numbers in parsed:
            good = [n for n in numbers if n in issued]
            bad = [n for n in numbers if n not in issued]
            cited.update(good)
            removed.extend(n for n in bad if n not in removed)
            if not bad:
                kept_items.append(item.strip())
            else:
                kept_items.extend(str(n) for n in good)
        if len(kept_items) == len(items) and all(item.strip() == kept for item, kept in zip(items, kept_items)):
            return match.group(0)
        if not kept_items:
            if answer.startswith("[", match.end()):  # another marker follows: keep the space for it
                return leading_space
            if match.start() == 0 or "\n" in leading_space:  # at a line start: keep the break
                return leading_space[: leading_space.rfind("\n") + 1]
            return trailing_space  # mid-line: drop the space before the marker
        return f"{leading_space}[{', '.join(kept_items)}]{trailing_space}"

    clean = _MARKER.sub(check, answer)
    warnings = [f"removed citation [{n}]: no such reference" for n in removed]
    return clean, sorted(cited), warnings


def marker_pieces(inside: str) -> list[tuple[str, int | None]]:
    """A shown marker's inside split into ``(text, first number)`` items and ``(separator, None)``."""
    pieces: list[tuple[str, int | None]] = []
    for piece in re.split(r"(\s*[,;]\s*)", inside.strip()):
        numbers = re.findall(r"\d+", piece)  # a separator has none
        pieces.append((piece, int(numbers[0]) if numbers else None))
    return pieces


# Code in a model's Markdown answer: a fenced block or an inline span. A "[3, 1]" there is code ("WHERE id IN [3,
# 1]"), as the renderer shows it, not a citation to number again.
_CODE = re.compile(r"^(```|~~~)[^\n]*\n.*?(?:^\1[^\n]*$|\Z)|(`+)[^`\n].*?\2", re.MULTILINE | re.DOTALL)


def _markers(answer: str):
    """The shown markers of ``answer`` outside its code."""
    code = [m.span() for m in _CODE.finditer(answer)]
    return (m for m in SHOWN_MARKER.finditer(answer) if not any(a <= m.start() < b for a, b in code))


def first_use(answer: str, issued: list[int]) -> dict[int, int]:
    """Each issued number's new one: those ``answer`` cites, in the order it first cites them, then the rest in
    their order."""
    cited: list[int] = []
    for match in _markers(answer):
        for item in _ITEMS.split(match.group(1).strip()):
            cited.extend(n for n in _numbers(item) or () if n in issued and n not in cited)
    order = cited + [n for n in issued if n not in cited]
    return {old: new for new, old in enumerate(order, start=1)}


def renumbered(answer: str, numbers: dict[int, int]) -> str:
    """``answer`` with each marker's numbers replaced by ``numbers``, in ascending order ("[1-3]" of three numbers
    in a row, else listed)."""

    def renumber(match: re.Match) -> str:
        parsed = [_numbers(item) for item in _ITEMS.split(match.group(1).strip())]
        if any(found is None or any(n not in numbers for n in found) for found in parsed):
            return match.group(0)
        new = sorted({numbers[n] for found in parsed for n in found})
        if len(new) > 2 and new == list(range(new[0], new[-1] + 1)):
            return f"[{new[0]}-{new[-1]}]"
        return f"[{', '.join(map(str, new))}]"

    pieces, end = [], 0
    for match in _markers(answer):
        pieces += [answer[end : match.start()], renumber(match)]
        end = match.end()
    return "".join(pieces) + answer[end:]
