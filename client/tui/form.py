"""The "create a match" form: pure functions over :class:`client.tui.model.CreateForm`.

The form is built from the server's ``games`` listing (each game's option specs:
name, kind, default, doc, choices/min/max), plus the create request's own fields
(``bot``, ``seat``, ``turn_timer``, ``abandon``). Left/right change the focused
value, digits type into an integer field, and :func:`to_request` builds the
``create`` message. The server still validates everything; the form only offers
what the listing says.
"""

from __future__ import annotations

from typing import Any

from client.tui.model import CreateForm

#: Strategy names a server bot may play (catalogue: engine.bots names).
BOT_CHOICES = ("none", "random", "greedy", "search")
SEAT_CHOICES = ("0", "1")
ABANDON_CHOICES = ("forfeit", "bot")


def _bot_choices() -> tuple[str, ...]:
    try:
        from engine.bots import strategy_names  # pure module, no I/O
    except Exception:  # not built yet, or broken: fall back to the catalogue's names
        return BOT_CHOICES
    try:
        return ("none", *strategy_names())
    except Exception:
        return BOT_CHOICES


def new_form(games: list[dict[str, Any]], game: str | None = None) -> CreateForm:
    """A form for ``game`` (default: the first listed) with every value at its default.

    Raises:
        ValueError: the listing has no games.
    """
    if not games:
        raise ValueError("the server listed no games")
    names = [str(g.get("name")) for g in games]
    chosen = game if game in names else names[0]
    spec = next(g for g in games if g.get("name") == chosen)
    fields: list[dict[str, Any]] = [
        {"name": "game", "label": "game", "kind": "choice", "value": chosen,
         "choices": names, "doc": "which game to play", "request": True},
    ]
    for opt in spec.get("options") or []:
        field = {"name": opt.get("name"), "label": opt.get("name"), "kind": opt.get("kind"),
                 "value": opt.get("default"), "doc": opt.get("doc", ""), "option": True}
        for key in ("choices", "min", "max"):
            if key in opt:
                field[key] = opt[key]
        fields.append(field)
    fields += [
        {"name": "bot", "label": "opponent", "kind": "choice", "value": "none",
         "choices": list(_bot_choices()), "doc": "a server bot takes the other seat",
         "request": True},
        {"name": "seat", "label": "your seat", "kind": "choice", "value": "0",
         "choices": list(SEAT_CHOICES), "doc": "seat 0 or 1", "request": True},
        {"name": "turn_timer", "label": "turn timer (s)", "kind": "int", "value": None,
         "min": 0, "max": 3600, "step": 15,
         "doc": "seconds per turn, 0 = off; unset: the server's default", "request": True},
        {"name": "abandon", "label": "on abandon", "kind": "choice", "value": "forfeit",
         "choices": list(ABANDON_CHOICES),
         "doc": "what happens to a seat whose grace runs out", "request": True},
    ]
    return CreateForm(game=chosen, fields=fields)


def _step(field: dict[str, Any], delta: int) -> None:
    kind = field.get("kind")
    if kind == "choice":
        choices = list(field.get("choices") or [])
        if choices:
            i = choices.index(field["value"]) if field["value"] in choices else 0
            field["value"] = choices[(i + delta) % len(choices)]
    elif kind == "bool":
        field["value"] = not bool(field["value"])
    elif kind == "int":
        if field.get("value") is None:  # unset: the first step sets the minimum
            field["value"] = field.get("min") or 0
            return
        value = int(field["value"])
        span = (field.get("max") or 0) - (field.get("min") or 0)
        step = field.get("step") or (1 if span <= 100 else 10 if span <= 5000 else 100)
        value += delta * step
        if field.get("min") is not None:
            value = max(value, field["min"])
        if field.get("max") is not None:
            value = min(value, field["max"])
        field["value"] = value


def change(form: CreateForm, delta: int, games: list[dict[str, Any]]) -> CreateForm:
    """Move the focused field's value by ``delta`` (choices cycle, ints step, bools toggle).

    Changing the game rebuilds the form for the new game's options.
    """
    commit_typed(form)
    field = form.fields[form.focus]
    _step(field, delta)
    if field["name"] == "game" and field["value"] != form.game:
        return new_form(games, field["value"])
    return form


def move(form: CreateForm, delta: int) -> None:
    """Move the focus up or down (wrapping), committing any typed digits first."""
    commit_typed(form)
    form.focus = (form.focus + delta) % len(form.fields)


def type_digit(form: CreateForm, digit: str) -> None:
    """Type a digit into the focused integer field (ignored on other kinds)."""
    field = form.fields[form.focus]
    if field.get("kind") == "int" and digit.isdigit() and len(form.typed) < 9:
        form.typed += digit


def backspace(form: CreateForm) -> None:
    """Remove the last typed digit."""
    form.typed = form.typed[:-1]


def commit_typed(form: CreateForm) -> None:
    """Store typed digits into the focused integer field, clamped to its bounds."""
    if not form.typed:
        return
    field = form.fields[form.focus]
    value = int(form.typed)
    if field.get("min") is not None:
        value = max(value, field["min"])
    if field.get("max") is not None:
        value = min(value, field["max"])
    field["value"] = value
    form.typed = ""


def to_request(form: CreateForm) -> dict[str, Any]:
    """The ``create`` request the form describes (without ``id``)."""
    commit_typed(form)
    values = {f["name"]: f["value"] for f in form.fields}
    msg: dict[str, Any] = {
        "type": "create",
        "game": values["game"],
        "options": {f["name"]: f["value"] for f in form.fields if f.get("option")},
        "seat": int(values["seat"]),
    }
    if values.get("bot") and values["bot"] != "none":
        msg["bot"] = values["bot"]
    if values.get("turn_timer") is not None:
        msg["turn_timer"] = int(values["turn_timer"])
    if values.get("abandon") and values["abandon"] != "forfeit":
        msg["abandon"] = values["abandon"]
    return msg


def show_value(form: CreateForm, index: int) -> str:
    """The value of field ``index`` as shown (typed digits while being edited)."""
    field = form.fields[index]
    if index == form.focus and form.typed:
        return form.typed + "_"
    value = field.get("value")
    if field.get("kind") == "bool":
        return "on" if value else "off"
    if field["name"] == "turn_timer" and value is None:
        return "server default"
    if field["name"] == "turn_timer" and not value:
        return "off"
    return str(value)
