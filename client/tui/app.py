"""The prompt_toolkit application: one full-screen window drawn from the model.

The window's text is ``screen.render(model, cells, rows)`` at the output's
current size, so a resize simply draws again (prompt_toolkit redraws on
SIGWINCH). Every key goes to :meth:`Controller.handle_key` under a plain name.
Ctrl-C is bound here: the app runs with ``handle_sigint=False``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style

from client.tui.controller import Controller
from client.tui.layout import to_fragments
from client.tui.screen import render

log = logging.getLogger(__name__)

STYLE = Style.from_dict({
    "card.red": "fg:ansired bold",
    "card.black": "bold",
    "card.back": "fg:ansiblue",
    "card.empty": "fg:ansibrightblack",
    "card.unknown": "fg:ansimagenta",
    "selectable": "fg:ansiyellow bold underline",
    "selected": "reverse bold",
    "target": "fg:ansigreen bold underline",
    "cursor": "reverse",
    "chosen": "underline",
    "head": "underline",
    "key": "fg:ansicyan",
    "title": "bold",
    "turn": "fg:ansiyellow bold",
    "player": "bold",
    "need": "fg:ansicyan",
    "closed": "fg:ansibrightblack italic",
    "count": "bold",
    "dim": "fg:ansibrightblack",
    "frame": "fg:ansibrightblack",
    "notice": "fg:ansigreen",
    "error": "fg:ansired bold",
    "status": "reverse",
    "status.ok": "bg:ansigreen fg:ansiblack bold",
    "status.warn": "bg:ansiyellow fg:ansiblack bold",
    "status.bad": "bg:ansired fg:ansiwhite bold",
})

#: prompt_toolkit key -> the controller's key name.
_NAMES = {
    Keys.Enter: "enter", Keys.ControlJ: "enter", Keys.Tab: "tab", Keys.Escape: "escape",
    Keys.Backspace: "backspace", Keys.ControlC: "c-c", Keys.Left: "left", Keys.Right: "right",
    Keys.Up: "up", Keys.Down: "down", Keys.PageUp: "pageup", Keys.PageDown: "pagedown",
    Keys.F1: "f1", Keys.BackTab: "tab", Keys.Home: "home", Keys.End: "end",
}


def key_name(key: Any) -> str | None:
    """The controller's name for a prompt_toolkit key (None: a key we do not use)."""
    if key in _NAMES:
        return _NAMES[key]
    if isinstance(key, str) and len(key) == 1 and key.isprintable():
        return key
    return None


def build_app(controller: Controller, *, color: bool = True, input: Any = None,
              output: Any = None) -> Application[Any]:
    """The full-screen app for ``controller``'s model.

    Args:
        color: False draws without colour (NO_COLOR / --no-color).
        input, output: prompt_toolkit input and output (tests pass a pipe input and
            a DummyOutput); None for the real terminal.
    """
    model = controller.model
    bindings = KeyBindings()

    def dispatch(event: KeyPressEvent) -> None:
        name = key_name(event.key_sequence[0].key)
        if name is not None:
            controller.handle_key(name)

    for key in (Keys.Any, *_NAMES):
        bindings.add(key, eager=True)(dispatch)

    def text() -> Any:
        size = app.output.get_size()
        model.size = (size.columns, size.rows)
        try:
            return to_fragments(render(model, size.columns, size.rows, time.monotonic()))
        except Exception as exc:  # a view this client cannot read: say so, keep running
            log.exception("drawing failed")
            return [("class:error", f"cannot draw this screen: {type(exc).__name__}: {exc}\n"),
                    ("", "Tab: lobby   x: leave the match   Ctrl-C: quit")]

    control = FormattedTextControl(text, focusable=True, show_cursor=False)
    app: Application[Any] = Application(
        layout=Layout(Window(control, wrap_lines=False)),
        key_bindings=bindings,
        style=STYLE,
        full_screen=True,
        mouse_support=False,
        color_depth=None if color else ColorDepth.DEPTH_1_BIT,
        input=input,
        output=output,
    )
    app.ttimeoutlen = 0.05  # Esc answers at once
    app.timeoutlen = 0.05
    controller.invalidate = app.invalidate
    controller.on_quit = lambda: app.exit() if app.is_running and not app.is_done else None
    return app
