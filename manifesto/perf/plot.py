"""The Pareto frontier of plan's layouts as an SVG chart (``manifesto plan --plot PATH``), written
as text: no plotting library."""

from __future__ import annotations

import math

__all__ = ["pareto", "pareto_svg"]


def pareto(points: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    """The points no other point beats on both axes (x: tokens/s per user, y: tokens/s per
    GPU), by rising x."""
    best, front = -1.0, []
    for x, y, label in sorted(points, key=lambda p: (-p[0], -p[1], p[2])):
        if y > best:
            front.append((x, y, label))
            best = y
    return front[::-1]


def _ticks(high: float) -> list[float]:
    """Round tick values from 0 to at least ``high`` (about five)."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(math.ceil(high / step)) + 1)]


def pareto_svg(points: list[tuple[float, float, str]], title: str) -> str:
    """An SVG chart of ``points`` (x: output tokens/s per user, y: output tokens/s per GPU,
    label) with their Pareto frontier drawn and labelled. Deterministic text, no dependency."""
    from xml.sax.saxutils import escape

    w, h, left, right, top, bottom = 880, 560, 80, 250, 50, 60
    xs, ys = _ticks(max((p[0] for p in points), default=1.0)), _ticks(max((p[1] for p in points), default=1.0))
    pw, ph = w - left - right, h - top - bottom

    def px(x: float) -> float:
        return left + pw * x / xs[-1]

    def py(y: float) -> float:
        return top + ph * (1 - y / ys[-1])

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="24" font-size="15">{escape(title)}</text>']
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + ph}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + ph + 18}" text-anchor="middle">{x:g}</text>')
    for y in ys:
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + pw}" y2="{py(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 8}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{h - 16}" text-anchor="middle">output tokens/s per user '
               '(1000 / ITL ms)</text>')
    out.append(f'<text transform="translate(20 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
               'output tokens/s per GPU</text>')
    front = pareto(points)
    on_front = {p[2] for p in front}
    if len(front) > 1:
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _ in front)
        out.append(f'<polyline points="{path}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for x, y, label in sorted(points, key=lambda p: p[2]):
        fill = "#1f77b4" if label in on_front else "none"
        out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="{fill}" stroke="#1f77b4">'
                   f'<title>{escape(label)}: {x:.1f} tok/s/user, {y:.1f} tok/s/GPU</title></circle>')
    for i, (x, y, label) in enumerate(front):
        out.append(f'<text x="{left + pw + 12}" y="{top + 14 + 16 * i}">{i + 1}. {escape(label[:34])}</text>')
        out.append(f'<text x="{px(x) + 6:.1f}" y="{py(y) - 6:.1f}" fill="#1f77b4">{i + 1}</text>')
    out.append(f'<text x="{left + pw + 12}" y="{top}" font-weight="bold">Pareto frontier</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
