"""Charts for ``cardsim --plot FILE.svg``: standalone SVG written by hand, no library.

:func:`histogram_svg` draws the game-length histogram (the same bins as the
text one, :func:`client.sim.report.bins_of`); :func:`tournament_svg` draws the
tournament table as one bar per pairing, the first bot's share of the decided
games with its 95% interval and a 50% line. Both return the SVG as a string;
:func:`write` saves it. Pure functions of the numbers: no clock, no I/O
except :func:`write`.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from client.sim.report import Number, bins_of

WIDTH, HEIGHT = 720, 400
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 24, 48, 64
BAR = "#3b6ea8"
FONT = 'font-family="sans-serif" font-size="12"'


def _svg(body: list[str], title: str, width: int = WIDTH, height: int = HEIGHT) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">')
    return "\n".join([head, f"<title>{escape(title)}</title>",
                      f'<rect width="{width}" height="{height}" fill="white"/>',
                      f'<text x="{width / 2:.0f}" y="24" text-anchor="middle" '
                      f'font-family="sans-serif" font-size="15">{escape(title)}</text>',
                      *body, "</svg>"]) + "\n"


def _fmt(x: Number) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def histogram_svg(values: Sequence[Number], *, title: str, unit: str, bins: int = 10) -> str:
    """The histogram of ``values`` as SVG: one bar per bin, counts on the y axis.

    Args:
        title: the chart's title; unit: what a value counts (``"battles"``).
    """
    rows = bins_of(values, bins)
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    top = max((count for _, _, count in rows), default=0) or 1
    body = [f'<line x1="{MARGIN_LEFT}" y1="{HEIGHT - MARGIN_BOTTOM}" x2="{WIDTH - MARGIN_RIGHT}" '
            f'y2="{HEIGHT - MARGIN_BOTTOM}" stroke="black"/>',
            f'<line x1="{MARGIN_LEFT}" y1="{MARGIN_TOP}" x2="{MARGIN_LEFT}" '
            f'y2="{HEIGHT - MARGIN_BOTTOM}" stroke="black"/>']
    for frac in (0.0, 0.5, 1.0):
        y = HEIGHT - MARGIN_BOTTOM - frac * plot_h
        body.append(f'<text x="{MARGIN_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" {FONT}>'
                    f'{round(top * frac)}</text>')
    slot = plot_w / max(len(rows), 1)
    for i, (lo, hi, count) in enumerate(rows):
        h = plot_h * count / top
        x = MARGIN_LEFT + i * slot
        y = HEIGHT - MARGIN_BOTTOM - h
        label = _fmt(lo) if lo == hi else f"{_fmt(lo)}-{_fmt(hi)}"
        body.append(f'<rect class="bar" x="{x + 2:.1f}" y="{y:.1f}" width="{slot - 4:.1f}" '
                    f'height="{h:.1f}" fill="{BAR}"><title>{escape(label)} {unit}: {count} '
                    f'games</title></rect>')
        body.append(f'<text x="{x + slot / 2:.1f}" y="{HEIGHT - MARGIN_BOTTOM + 16}" '
                    f'text-anchor="middle" {FONT}>{escape(label)}</text>')
    body.append(f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 16}" text-anchor="middle" {FONT}>'
                f'{escape(unit)} per game ({len(values)} games)</text>')
    body.append(f'<text x="16" y="{HEIGHT / 2:.0f}" text-anchor="middle" {FONT} '
                f'transform="rotate(-90 16 {HEIGHT / 2:.0f})">games</text>')
    return _svg(body, title)


def tournament_svg(rows: Sequence[dict], *, title: str) -> str:
    """The tournament table as SVG: for each pairing ``a`` vs ``b``, ``a``'s share of
    the decided games as a bar with its 95% interval, and the 50% line.

    Args:
        rows: the table as :func:`client.sim.tournament.to_json` gives it (``a``, ``b``,
            ``a_win_rate``, ``ci95``, ``games``, ``draws``).
    """
    height = MARGIN_TOP + MARGIN_BOTTOM + 34 * max(len(rows), 1)
    label_w = 200
    plot_w = WIDTH - label_w - MARGIN_RIGHT - 40
    body = []
    x0 = label_w
    half = x0 + plot_w / 2
    body.append(f'<line x1="{half:.1f}" y1="{MARGIN_TOP - 8}" x2="{half:.1f}" '
                f'y2="{height - MARGIN_BOTTOM + 8}" stroke="#999" stroke-dasharray="4 3"/>')
    for frac in (0.0, 0.5, 1.0):
        x = x0 + frac * plot_w
        body.append(f'<text x="{x:.1f}" y="{height - MARGIN_BOTTOM + 24}" text-anchor="middle" '
                    f'{FONT}>{frac:.0%}</text>')
    for i, row in enumerate(rows):
        y = MARGIN_TOP + i * 34
        name = f"{row.get('a')} vs {row.get('b')}"
        body.append(f'<text x="{label_w - 10}" y="{y + 17}" text-anchor="end" {FONT}>'
                    f'{escape(name)}</text>')
        rate = row.get("a_win_rate")
        if rate is None:
            body.append(f'<text x="{x0 + 4}" y="{y + 17}" {FONT}>no decided game</text>')
            continue
        body.append(f'<rect class="bar" x="{x0}" y="{y + 6}" width="{plot_w * rate:.1f}" '
                    f'height="16" fill="{BAR}"><title>{escape(name)}: {rate:.1%} of decided '
                    f'games ({row.get("games")} games, {row.get("draws")} draws)</title></rect>')
        ci = row.get("ci95")
        if ci:
            lo, hi = x0 + plot_w * ci[0], x0 + plot_w * ci[1]
            body.append(f'<line x1="{lo:.1f}" y1="{y + 14}" x2="{hi:.1f}" y2="{y + 14}" '
                        f'stroke="black" stroke-width="2"/>')
        body.append(f'<text x="{x0 + plot_w + 6}" y="{y + 18}" {FONT}>{rate:.0%}</text>')
    body.append(f'<text x="{x0 + plot_w / 2:.0f}" y="{height - 12}" text-anchor="middle" '
                f'{FONT}>share of decided games won by the first bot (bar), 95% interval '
                '(line)</text>')
    return _svg(body, title, WIDTH, height)


def plot_lengths(path: str | None, values: Sequence[Number], unit: str, title: str) -> int:
    """``--plot``: write the histogram of ``values`` to ``path`` (nothing when None).

    Returns the exit status: 0 written (or not asked), 1 the file cannot be written
    (said on stderr).
    """
    if path is None:
        return 0
    try:
        write(path, histogram_svg(values, title=title, unit=unit))
    except OSError as exc:
        import sys

        print(f"cardsim: cannot write {path}: {exc}", file=sys.stderr)
        return 1
    return 0


def write(path: str, svg: str) -> None:
    """Save ``svg`` to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    with open(path, "w", encoding="utf-8") as out:
        out.write(svg)
