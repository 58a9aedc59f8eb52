"""The "create a match" form: pure functions over :class:`client.tui.model.CreateForm`.

The form is built from the server's ``games`` listing (each game's option specs:
name, kind, default, doc, choices/min/max), plus the create request's own fields
(``bot``, ``seat``, ``turn_timer``, ``abandon``). Left/right change the focused
value, digits type into an integer field, and :func:`to_request` builds the
``create`` message. The server still validates everything; the form only offers
what the listing says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from client.tui.model import CreateForm

#: (game or "" for the create request's own fields, option) -> its label on the form.
LABELS: dict[tuple[str, str], str] = {
    ("war", "return"): "won cards go back",
    ("war", "short_war"): "short of cards in a war",
    ("war", "cap"): "battle cap",
    ("datastructures", "cap"): "turn cap",
    ("", "game"): "game",
    ("", "bot"): "opponent",
    ("", "seat"): "your seat",
    ("", "turn_timer"): "turn timer",
    ("", "abandon"): "if a player leaves",
}
#: (game or "", option, value) -> the value in words.
VALUES: dict[tuple[str, str, str], str] = {
    ("war", "return", "shuffled"): "shuffled first",
    ("war", "return", "played"): "in the order played",
    ("war", "short_war", "stand"): "the last face-up card stands",
    ("war", "short_war", "lose"): "that player loses at once",
    ("", "game", "datastructures"): "Data Structures",
    ("", "game", "war"): "War",
    ("", "bot", "none"): "a person (an open seat)",
    ("", "seat", "0"): "seat 1",
    ("", "seat", "1"): "seat 2",
    ("", "abandon", "forfeit"): "after the grace period they forfeit",
    ("", "abandon", "bot"): "after the grace period a bot plays on",
}
#: What the create request's own fields and bots mean.
DOCS = {
    "game": "Which game to play.",
    "bot": "Who plays the other seat: a person who joins from the lobby, or one of the "
           "server's bots (the match starts at once).",
    "seat": "Which seat you take. In Data Structures the first player is drawn at random "
            "either way.",
    "turn_timer": "Seconds each player has for a decision; when it runs out the server "
                  "moves for them, and too many timeouts in a row forfeit. Off, or the "
                  "server's default.",
    "abandon": "What happens to the seat of a player whose connection stays lost longer "
               "than the server's grace period.",
}


def option_label(game: str | None, name: str) -> str:
    """An option's name in words (``short_war`` -> ``short of cards in a war``)."""
    return LABELS.get((game or "", name)) or LABELS.get(("", name)) or name.replace("_", " ")


def value_label(game: str | None, name: str, value: Any) -> str:
    """An option's value in words (``stand`` -> ``the last face-up card stands``)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    key = str(value)
    found = VALUES.get((game or "", name, key)) or VALUES.get(("", name, key))
    if found:
        return found
    if name == "bot":
        return f"the server's {key} bot"
    if isinstance(value, int) and value >= 10000:
        return f"{value:,}"
    return key


_RULE_CODE = re.compile(r"\s*\((?:[WDR]\d+(?:\.\d+)?(?:,\s*)?)+\)")


def doc_words(field: dict[str, Any]) -> str:
    """The field's description for people: rule codes such as ``(W3)`` left out."""
    doc = DOCS.get(str(field.get("name"))) if field.get("request") else None
    return _RULE_CODE.sub("", str(doc or field.get("doc") or "")).strip()

#: Strategy names a server bot may play, for a server whose ``games`` reply does not
#: list its ``bots`` (one from before they were listed).
BOT_CHOICES = ("none", "random", "greedy", "search")
SEAT_CHOICES = ("0", "1")
ABANDON_CHOICES = ("forfeit", "bot")


def _bot_choices(bots: Sequence[str] | None) -> tuple[str, ...]:
    """``none`` and the server bots the server listed, else :data:`BOT_CHOICES`."""
    return ("none", *bots) if bots else BOT_CHOICES


def new_form(games: list[dict[str, Any]], game: str | None = None,
             memory: dict[str, dict[str, Any]] | None = None,
             bots: Sequence[str] | None = None) -> CreateForm:
    """A form for ``game`` (default: the first listed) with every value at its default,
    or at the value last sent for that game when ``memory`` holds one (values the
    listing no longer offers fall back to the default). ``bots``: the server bots the
    server's ``games`` reply listed (None: an older server's, :data:`BOT_CHOICES`).

    Raises:
        ValueError: the listing has no games.
    """
    if not games:
        raise ValueError("the server listed no games")
    names = [str(g.get("name")) for g in games]
    chosen = game if game in names else names[0]
    spec = next(g for g in games if g.get("name") == chosen)
    fields: list[dict[str, Any]] = [
        {"name": "game", "label": option_label(None, "game"), "kind": "choice", "value": chosen,
         "choices": names, "doc": "which game to play", "request": True},
    ]
    for opt in spec.get("options") or []:
        field = {"name": opt.get("name"), "label": option_label(chosen, str(opt.get("name"))),
                 "kind": opt.get("kind"),
                 "value": opt.get("default"), "doc": opt.get("doc", ""), "option": True}
        for key in ("choices", "min", "max"):
            if key in opt:
                field[key] = opt[key]
        fields.append(field)
    fields += [
        {"name": "bot", "label": option_label(None, "bot"), "kind": "choice", "value": "none",
         "choices": list(_bot_choices(bots)), "doc": "a server bot takes the other seat",
         "request": True},
        {"name": "seat", "label": option_label(None, "seat"), "kind": "choice", "value": "0",
         "choices": list(SEAT_CHOICES), "doc": "seat 0 or 1", "request": True},
        {"name": "turn_timer", "label": option_label(None, "turn_timer"), "kind": "int", "value": None,
         "min": 0, "max": 3600, "step": 15,
         "doc": "seconds per turn, 0 = off; unset: the server's default", "request": True},
        {"name": "abandon", "label": option_label(None, "abandon"), "kind": "choice", "value": "forfeit",
         "choices": list(ABANDON_CHOICES),
         "doc": "what happens to a seat whose grace runs out", "request": True},
    ]
    for field in fields:
        field["game"] = chosen
        remembered = (memory or {}).get(chosen, {})
        if field["name"] in remembered and field["name"] != "game" and \
                _allowed(field, remembered[field["name"]]):
            field["value"] = remembered[field["name"]]
    return CreateForm(game=chosen, fields=fields)


def _allowed(field: dict[str, Any], value: Any) -> bool:
    kind = field.get("kind")
    if kind == "choice":
        return value in (field.get("choices") or [])
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        if value is None:
            return field["name"] == "turn_timer"
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        return (field.get("min") is None or value >= field["min"]) and \
            (field.get("max") is None or value <= field["max"])
    return False


def remember(form: CreateForm, memory: dict[str, dict[str, Any]]) -> None:
    """Keep the form's values as the next form's starting values for its game (the
    game used last is the last key)."""
    memory.pop(form.game, None)
    memory[form.game] = {f["name"]: f["value"] for f in form.fields}


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


def change(form: CreateForm, delta: int, games: list[dict[str, Any]],
           memory: dict[str, dict[str, Any]] | None = None,
           bots: Sequence[str] | None = None) -> CreateForm:
    """Move the focused field's value by ``delta`` (choices cycle, ints step, bools toggle).

    Changing the game rebuilds the form for the new game's options (from ``memory``).
    """
    commit_typed(form)
    field = form.fields[form.focus]
    _step(field, delta)
    if field["name"] == "game" and field["value"] != form.game:
        return new_form(games, field["value"], memory, bots)
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
    if field["name"] == "turn_timer" and value is None:
        return "the server's default"
    if field["name"] == "turn_timer" and not value:
        return "off"
    if field["name"] == "turn_timer":
        return f"{value} s"
    return value_label(field.get("game"), str(field["name"]), value)
