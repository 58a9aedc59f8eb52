"""The `cardclient` terminal client (prompt_toolkit), split like cli-chess:

- model:      :mod:`client.tui.model` (plain data; server pushes folded in by a reducer)
- presenter:  :mod:`client.tui.controller` (keys -> model changes and server requests)
- views:      :mod:`client.tui.screen`, :mod:`client.tui.lobby_view`,
              :mod:`client.tui.ds_view`, :mod:`client.tui.war_view` (pure functions of
              the model and the terminal size), :mod:`client.tui.cards` (card glyphs as
              pure string functions), :mod:`client.tui.layout` (fragment helpers)
- rules-free choice: :mod:`client.tui.selection` (what is selectable comes only from
  the snapshot's ``legal`` list)
- glue:       :mod:`client.tui.app` (the prompt_toolkit Application),
              :mod:`client.tui.runner` (trio as a guest on prompt_toolkit's asyncio loop,
              wired to :mod:`client.session`), :mod:`client.tui.cli` (the command).
"""
