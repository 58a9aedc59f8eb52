"""The connection screen: shown until the first welcome, so a wrong address never
looks like an empty lobby. A pure function of the model's :class:`Connection`."""

from __future__ import annotations

from client.tui.layout import Block, text, wrap_tail
from client.tui.model import Model

#: What each kind of failure means, and what to try.
ADVICE = {
    "refused": "nothing listens there: is the server running, and is the port right?",
    "unknown_host": "that host name does not resolve: check its spelling",
    "tls": "the secure (TLS) handshake failed: a plain server, or a certificate this "
           "client does not trust",
    "timeout": "no answer in time: the host may be down or a firewall drops the packets",
    "unreachable": "no route to that host: check the network and the address",
    "closed": "the server closed the connection during the handshake",
    "refused_hello": "the server refused this client",
}


def render_connection(model: Model, cells: int, rows: int, now: float | None = None) -> Block:
    """The connection screen body, ``cells`` wide, at most ``rows`` lines."""
    conn = model.conn
    out: Block = [text(f"cardclient: connecting to {conn.server} as {model.name}", "class:title"),
                  text("")]
    if conn.attempt == 0 and not conn.failure:
        out.append(text("Connecting..."))
    else:
        tries = "1 attempt" if conn.attempt == 1 else f"{conn.attempt} attempts"
        out.append(text(f"Not connected ({tries} failed). The last one:", "class:error"))
        for line in wrap_tail([conn.failure or "?"], cells - 2, 4):
            out.append(text(f"  {line}"))
        advice = ADVICE.get(conn.kind)
        if advice:
            for line in wrap_tail([advice], cells - 2, 3):
                out.append(text(f"  {line}", "class:dim"))
        out.append(text(""))
        left = conn.retry_in(now)
        if conn.state == "closed":
            out.append(text("Not retrying: this will not go away by itself.", "class:turn"))
        elif left is not None:
            out.append(text(f"Next try in {left:.0f} s.", "class:turn"))
        else:
            out.append(text("Trying again now...", "class:turn"))
    out.append(text(""))
    out.append(text("q or Ctrl-C quits.", "class:dim"))
    return out[:rows]
