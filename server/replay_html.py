"""A stored match as one self-contained HTML page (``cardserver replay ID --html FILE``).

The page holds everything it shows: the public record (a spectator's
projection, as :func:`server.replay.public_record` builds it), each move and
its events already put into words by :mod:`engine.notation` (so the page reads
like the terminal client and ``cardserver replay``), the styles and a small
script. It fetches nothing: no fonts, no images, no scripts from anywhere;
cards are drawn with CSS. Buttons and the arrow keys (Home/End, Space to play)
step through the match, and the page checks the fair shuffle itself: it
computes SHA-256 of the revealed seed and salt in plain JavaScript and compares
it with the commitment published at the start.

The page's state is readable by scripts and tests: ``document.body.dataset``
holds ``position``, ``total`` and ``fair`` (``ok``, ``mismatch`` or ``secret``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from engine import notation
from server.replay_text import GAME_TITLES, fair_lines, options_words, player_names


def page_data(record: Mapping[str, Any]) -> dict[str, Any]:
    """What the page's script needs: the views, and every move and event in words."""
    names = player_names(record)
    speaker = notation.Speaker(None, names, glyphs=True, game=str(record.get("game")))
    moves = [{"seq": m.get("seq"), "text": speaker.move(m),
              "events": speaker.events(m.get("events") or []), "view": m.get("view")}
             for m in record.get("moves") or []]
    result = record.get("result")
    return {
        "match": record.get("match"), "game": record.get("game"),
        "names": {str(k): v for k, v in names.items()},
        "start": record.get("start"), "moves": moves,
        "result": notation.result_words(str(record.get("game")), result, None, names)
        if isinstance(result, Mapping) else None,
        "commitment": record.get("commitment"), "reveal": record.get("reveal"),
        "verified": bool(record.get("verified")),
    }


def render_page(record: Mapping[str, Any]) -> str:
    """The HTML page for ``record`` (one string, UTF-8 text)."""
    data = json.dumps(page_data(record), ensure_ascii=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c")  # no "</script>" can end the data early
    names = player_names(record)
    game = record.get("game")
    title = f"{GAME_TITLES.get(str(game), str(game))} match {record.get('match')}"
    players = "  vs  ".join(f"{names[s]} (seat {s + 1})" for s in sorted(names))
    fair = "".join(f"<li>{html.escape(line)}</li>" for line in fair_lines(record))
    return PAGE.format(
        title=html.escape(title), players=html.escape(players),
        options=html.escape(options_words(game, record.get("options"))),
        fair=fair, data=data, style=STYLE, script=SCRIPT)


def write_page(record: Mapping[str, Any], path: str) -> None:
    """Write the page to ``path``.

    Raises:
        OSError: the file cannot be written.
    """
    with open(path, "w", encoding="utf-8") as out:
        out.write(render_page(record))


STYLE = """
body { font-family: sans-serif; margin: 1.5em; background: #f4f1ea; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .2em; }
.meta { color: #555; margin: 0 0 1em; }
#controls button { font-size: 1.1em; min-width: 3em; margin-right: .3em; }
#position { font-weight: bold; margin-left: 1em; }
#board { background: #1f5f3a; color: #fff; padding: 1em; border-radius: 8px; margin: 1em 0;
         min-height: 12em; }
.row { margin: .35em 0; display: flex; align-items: center; flex-wrap: wrap; gap: .25em; }
.label { min-width: 9em; color: #dfe; }
.card { display: inline-block; width: 2.4em; height: 3.3em; line-height: 3.3em;
        text-align: center; background: #fff; color: #111; border-radius: 5px;
        border: 1px solid #999; font-weight: bold; font-size: .95em; }
.card.red { color: #c0162c; }
.card.back { background: repeating-linear-gradient(45deg, #2b4fa3, #2b4fa3 4px, #7d9be0 4px,
             #7d9be0 8px); }
.card.empty { background: transparent; border: 1px dashed #9bc; }
.closed { color: #bbb; font-style: italic; }
#move { font-weight: bold; }
#events { margin: .3em 0 0 1.2em; color: #333; }
#fair { background: #fff; padding: .6em 1em; border-radius: 6px; }
#fair-check.ok { color: #15692f; font-weight: bold; }
#fair-check.bad { color: #b00020; font-weight: bold; }
.hint { color: #666; font-size: .9em; }
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style></head>
<body data-position="0" data-total="0" data-fair="secret">
<h1>{title}</h1>
<p class="meta">{players}<br>options: {options}</p>
<div id="controls">
<button id="first" title="Home">|&#x25C0;</button><button id="prev" title="Left">&#x25C0;</button>
<button id="play" title="Space">play</button><button id="next" title="Right">&#x25B6;</button>
<button id="last" title="End">&#x25B6;|</button>
<span id="position">move 0 / 0</span>
<span class="hint">Left/Right step, Home/End, Space plays</span></div>
<div id="board"></div>
<div id="move"></div><ul id="events"></ul>
<p id="result"></p>
<h2>Fair shuffle</h2>
<div id="fair"><ul>{fair}</ul><p id="fair-check"></p></div>
<script type="application/json" id="record">{data}</script>
<script>{script}</script>
</body></html>
"""

SCRIPT = r"""
"use strict";
const R = JSON.parse(document.getElementById("record").textContent);
const total = R.moves.length;
let pos = 0, timer = null;
const SUITS = {C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660"};
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function card(c) {
  if (c === "back") return el("span", "card back", "");
  if (!c) return el("span", "card empty", "");
  const rank = c.slice(0, -1), suit = c.slice(-1);
  return el("span", "card" + (suit === "D" || suit === "H" ? " red" : ""),
            rank + (SUITS[suit] || "?"));
}
function name(seat) { return R.names[String(seat)] || ("seat " + (seat + 1)); }
function row(label, items) {
  const r = el("div", "row");
  r.appendChild(el("span", "label", label));
  items.forEach(x => r.appendChild(typeof x === "string" ? el("span", "", x) : x));
  return r;
}
function drawWar(v, board) {
  [0, 1].forEach(s => {
    const table = (v.table || [[], []])[s] || [];
    board.appendChild(row(name(s) + ": " + v.counts[s] + " cards",
                          table.length ? table.map(card) : [el("span", "", "nothing on the table")]));
  });
  board.appendChild(row("battle", [String(v.battle) + " (resolved " + v.battles + ", wars " +
                                   v.wars + ", cap " + v.cap + ")"]));
  if (v.last) {
    board.appendChild(row("last battle", [card(v.last.up[0]), " vs ", card(v.last.up[1]),
                                          " \u2192 " + name(v.last.winner)]));
  }
}
function drawDS(v, board) {
  const order = [1, 0];
  order.forEach((s, i) => {
    const p = v.players[s];
    const stack = p.stack || [];
    board.appendChild(row(name(s) + (v.to_move === s ? " \u2190 to move" : ""),
      ["stack ", card(stack[stack.length - 1]), " " + stack.length + " cards, hand " +
       p.hand_count + ", closed " + p.closed + "/3"]));
    p.arrays.forEach((a, k) => {
      const items = a.closed ? [el("span", "closed", "closed")] :
        (a.cards.length ? a.cards.map(card) : [card(null)]);
      if (!a.closed && a.next) items.push(" needs " + a.next);
      board.appendChild(row("  array " + (k + 1), items));
    });
    if (i === 0) {
      const q = (v.queue || []).map(card);
      board.appendChild(row("queue (head first)", q.length ? q : ["empty"]));
      board.appendChild(row("piles", ["deck " + v.deck + ", discard " +
                                      (v.discard || []).length]));
    }
  });
  board.appendChild(row("turn", [String(v.turn) + " of " + v.cap + ", " + v.phase]));
}
function show(p) {
  pos = Math.max(0, Math.min(total, p));
  const v = pos === 0 ? R.start : R.moves[pos - 1].view;
  const board = document.getElementById("board");
  board.replaceChildren();
  if (R.game === "war") drawWar(v, board); else drawDS(v, board);
  document.getElementById("position").textContent = "move " + pos + " / " + total;
  document.getElementById("move").textContent = pos === 0 ? "the opening position" :
    R.moves[pos - 1].text;
  const ev = document.getElementById("events");
  ev.replaceChildren();
  if (pos > 0) R.moves[pos - 1].events.forEach(t => ev.appendChild(el("li", "", t)));
  document.getElementById("result").textContent =
    pos === total && R.result ? "Result: " + R.result : "";
  document.body.dataset.position = String(pos);
  document.body.dataset.total = String(total);
}
function stop() { if (timer) { clearInterval(timer); timer = null; }
  document.getElementById("play").textContent = "play"; }
function play() {
  if (timer) { stop(); return; }
  if (pos >= total) show(0);
  document.getElementById("play").textContent = "pause";
  timer = setInterval(() => { if (pos >= total) stop(); else show(pos + 1); }, 400);
}
document.getElementById("first").onclick = () => { stop(); show(0); };
document.getElementById("prev").onclick = () => { stop(); show(pos - 1); };
document.getElementById("next").onclick = () => { stop(); show(pos + 1); };
document.getElementById("last").onclick = () => { stop(); show(total); };
document.getElementById("play").onclick = play;
document.addEventListener("keydown", e => {
  const keys = {ArrowRight: () => show(pos + 1), ArrowLeft: () => show(pos - 1),
                Home: () => show(0), End: () => show(total)};
  if (keys[e.key]) { stop(); keys[e.key](); e.preventDefault(); }
  else if (e.key === " ") { play(); e.preventDefault(); }
});
// SHA-256 (FIPS 180-4) in plain JavaScript: the page checks the commitment itself.
function sha256(bytes) {
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2]);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
                             0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const len = bytes.length, padded = new Uint8Array(((len + 9 + 63) >> 6) << 6);
  padded.set(bytes); padded[len] = 0x80;
  const bits = len * 8, dv = new DataView(padded.buffer);
  dv.setUint32(padded.length - 8, Math.floor(bits / 0x100000000));
  dv.setUint32(padded.length - 4, bits >>> 0);
  const W = new Uint32Array(64);
  const rot = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < padded.length; off += 64) {
    for (let t = 0; t < 16; t++) W[t] = dv.getUint32(off + 4 * t);
    for (let t = 16; t < 64; t++) {
      const s0 = rot(W[t - 15], 7) ^ rot(W[t - 15], 18) ^ (W[t - 15] >>> 3);
      const s1 = rot(W[t - 2], 17) ^ rot(W[t - 2], 19) ^ (W[t - 2] >>> 10);
      W[t] = (W[t - 16] + s0 + W[t - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let t = 0; t < 64; t++) {
      const S1 = rot(e, 6) ^ rot(e, 11) ^ rot(e, 25), ch = (e & f) ^ (~e & g);
      const t1 = (h + S1 + ch + K[t] + W[t]) >>> 0;
      const S0 = rot(a, 2) ^ rot(a, 13) ^ rot(a, 22), maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) >>> 0;
      h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    H[0] += a; H[1] += b; H[2] += c; H[3] += d; H[4] += e; H[5] += f; H[6] += g; H[7] += h;
  }
  return Array.from(H, x => x.toString(16).padStart(8, "0")).join("");
}
function hexBytes(hex) {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}
function checkFair() {
  const line = document.getElementById("fair-check");
  if (!R.reveal) { line.textContent = "the seed is secret until the match ends";
    document.body.dataset.fair = "secret"; return; }
  const seed = hexBytes(R.reveal.seed || ""), salt = hexBytes(R.reveal.salt || "");
  const both = seed && salt ? new Uint8Array(seed.length + salt.length) : null;
  if (both) { both.set(seed); both.set(salt, seed.length); }
  const ok = both !== null && seed.length === 32 &&
    sha256(both) === String(R.commitment).toLowerCase();
  line.textContent = ok ?
    "checked in this page: sha256(seed + salt) equals the commitment" :
    "checked in this page: sha256(seed + salt) does NOT equal the commitment";
  line.className = ok ? "ok" : "bad";
  document.body.dataset.fair = ok ? "ok" : "mismatch";
}
checkFair();
show(0);
"""
