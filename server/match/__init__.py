"""A match: its sans-IO rules (:mod:`.core`), the trio task around them (:mod:`.task`),
and the server's bots (:mod:`.bots`).

Commands in (:mod:`.commands`), effects out (:mod:`.effects`)::

    core = MatchCore.create(record, Rules())
    effects = core.handle(Join("s1", rid=1, name="alice"), now=0.0)
    effects.writes, effects.messages, effects.deadline
"""

from server.match.core import MatchCore, Rules
from server.match.task import Match, MatchClosed, MatchContext

__all__ = ["Match", "MatchClosed", "MatchContext", "MatchCore", "Rules"]
