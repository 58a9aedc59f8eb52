"""The player's last create-form choices, kept between runs of ``cardclient``.

One small JSON file, ``$XDG_CONFIG_HOME/cardclient/create.json``
(``~/.config/cardclient/create.json`` when unset): game -> field -> value, the
values the form last sent for each game. Nothing secret is in it. A missing or
unreadable file is an empty memory, never an error.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def prefs_path() -> Path:
    """Where the choices are kept."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cardclient" / "create.json"


def load(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The remembered choices (empty when there are none or the file is unreadable)."""
    path = path or prefs_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(g): dict(v) for g, v in data.items() if isinstance(v, dict)}


def save(memory: dict[str, dict[str, Any]], path: Path | None = None) -> None:
    """Keep ``memory`` for the next run; a failure is logged, never raised."""
    path = path or prefs_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(memory, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        log.warning("cannot keep the create-form choices in %s: %s", path, exc)
