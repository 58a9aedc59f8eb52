"""Pure layout helpers over prompt_toolkit style fragments.

A *line* is a list of ``(style, text)`` fragments with no newline in it. A
*block* is a list of lines. These helpers measure, pad, cut and place blocks
side by side, so every screen is a pure function of the model and the terminal
size: tests read the result as plain text without a terminal.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from prompt_toolkit.utils import get_cwidth

Fragment = tuple[str, str]
Line = list[Fragment]
Block = list[Line]


def width(line: Sequence[Fragment]) -> int:
    """Cells the line takes on screen."""
    return sum(get_cwidth(text) for _, text in line)


def plain(line: Sequence[Fragment]) -> str:
    """The line's text without styles."""
    return "".join(text for _, text in line)


def fit(line: Sequence[Fragment], cells: int, fill_style: str = "") -> Line:
    """The line cut or padded with spaces to exactly ``cells`` cells."""
    out: Line = []
    used = 0
    for style, text in line:
        if used >= cells:
            break
        room = cells - used
        w = get_cwidth(text)
        if w <= room:
            out.append((style, text))
            used += w
            continue
        cut = ""
        for ch in text:
            cw = get_cwidth(ch)
            if used + get_cwidth(cut) + cw > cells:
                break
            cut += ch
        if cut:
            out.append((style, cut))
        used += get_cwidth(cut)
        break
    if used < cells:
        out.append((fill_style, " " * (cells - used)))
    return out


def text(s: str, style: str = "") -> Line:
    """A one-fragment line."""
    return [(style, s)]


def fit_block(block: Sequence[Line], cells: int, rows: int | None = None) -> Block:
    """Every line fitted to ``cells``; with ``rows``, the block cut or padded to that many lines."""
    lines = [fit(line, cells) for line in block]
    if rows is not None:
        lines = lines[:rows] + [[("", " " * cells)] for _ in range(rows - len(lines))]
    return lines


def side_by_side(blocks: Sequence[Block], widths: Sequence[int], gap: int = 1) -> Block:
    """Blocks placed left to right, each fitted to its width, separated by ``gap`` spaces."""
    rows = max((len(b) for b in blocks), default=0)
    fitted = [fit_block(b, w, rows) for b, w in zip(blocks, widths, strict=True)]
    out: Block = []
    for r in range(rows):
        line: Line = []
        for i, block in enumerate(fitted):
            if i:
                line.append(("", " " * gap))
            line.extend(block[r])
        out.append(line)
    return out


def boxed(title: str, block: Sequence[Line], cells: int, style: str = "class:frame") -> Block:
    """The block inside a one-line frame ``cells`` wide, with ``title`` in the top edge."""
    inner = max(cells - 2, 0)
    head = f" {title} " if title else ""
    head = head[:inner]
    top: Line = [(style, "\u250c" + head + "\u2500" * (inner - get_cwidth(head)) + "\u2510")]
    body = [[(style, "\u2502"), *fit(line, inner), (style, "\u2502")] for line in block]
    bottom: Line = [(style, "\u2514" + "\u2500" * inner + "\u2518")]
    return [top, *body, bottom]


def wrap_tail(lines: Sequence[str], cells: int, rows: int) -> list[str]:
    """The last ``rows`` screen lines of ``lines`` wrapped to ``cells`` (continuations
    indented by two spaces): the newest log lines that fit."""
    if rows <= 0:
        return []
    out: list[str] = []
    for line in reversed(lines):
        parts = textwrap.wrap(line, max(cells, 10), subsequent_indent="  ",
                              break_long_words=True) or [""]
        out[:0] = parts
        if len(out) >= rows:
            break
    return out[-rows:]


def log_tail(lines: Sequence[str], cells: int, rows: int, scroll: int = 0) -> list[str]:
    """The log pane: the newest ``rows`` screen lines, or, scrolled back by ``scroll``
    lines, the lines before those; never past the oldest line, so a pane scrolled all
    the way back shows the first page, not a blank one."""
    end = len(lines) - max(scroll, 0)
    if end < len(lines):
        # how many log lines fill the pane from the top
        fill, used = 0, 0
        for line in lines:
            used += len(textwrap.wrap(line, max(cells, 10), subsequent_indent="  ",
                                      break_long_words=True) or [""])
            if used > rows:
                break
            fill += 1
        end = max(end, min(fill, len(lines)))
    return wrap_tail(lines[:end], cells, rows)


def to_fragments(block: Sequence[Line]) -> list[Fragment]:
    """The block as one fragment list with newlines, ready for a FormattedTextControl."""
    out: list[Fragment] = []
    for i, line in enumerate(block):
        if i:
            out.append(("", "\n"))
        out.extend(line)
    return out


def block_text(block: Sequence[Line]) -> str:
    """The block as plain text, lines joined by newlines (for tests and captures)."""
    return "\n".join(plain(line) for line in block)
