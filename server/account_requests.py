"""The lobby's account and rating requests: register, logout, change_password,
token_create, tokens, token_revoke, set_bot, profile, leaderboard.

Each handler has the lobby's route signature ``(lobby, session, rid, msg)`` and
is listed in :data:`ACCOUNT_ROUTES`, which the lobby merges into its one routing
table. Refusals are :class:`~protocol.errors.Refusal` with the codes of
:class:`~server.accounts.AccountError`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from engine.core import RuleError
from engine.registry import game_names, get_game
from protocol.errors import Refusal
from server import profiles
from server.accounts import AccountError, Accounts
from server.session import Session
from server.store import AccountRecord, ApiTokenRecord, Store

log = logging.getLogger("cardserver.accounts")


class Lobby(Protocol):
    """What these handlers need of the lobby."""

    store: Store
    accounts: Accounts
    sessions: dict[str, Session]

    def reply(self, session: Session, rid: int | None, **fields: Any) -> None:
        """Answer ``ok`` with ``fields``."""

    def close_session(self, session: Session, reason: str, message: str) -> None:
        """Close the session's connection with ``bye``."""


def refusal(exc: AccountError) -> Refusal:
    """The protocol refusal for an account error (with its ``retry_after``, if any)."""
    return Refusal(exc.code, exc.message, exc.field, retry_after=exc.retry_after)


def account_wire(account: AccountRecord) -> dict[str, Any]:
    """An account as ``welcome.account`` and the account replies carry it."""
    return {"name": account.name, "bot": account.bot}


def token_wire(token: ApiTokenRecord) -> dict[str, Any]:
    """An API token as listed (never the token itself)."""
    return {"id": token.id, "label": token.label, "created": token.created,
            "last_used": token.last_used}


def require_account(session: Session) -> AccountRecord:
    """The session's account.

    Raises:
        Refusal: ``not_registered`` for a guest.
    """
    if session.account is None:
        raise Refusal("not_registered", "this needs an account: register, or log in with "
                      "hello.auth")
    return session.account


async def register(lobby: Lobby, session: Session, rid: int | None,
                   msg: dict[str, Any]) -> None:
    """Register the session's current name with a password; the session is then
    logged in as it."""
    if session.account is not None:
        raise Refusal("already_registered", f"you are logged in as {session.account.name!r}")
    try:
        account = await lobby.accounts.register(session.name, msg["password"], session.address,
                                                bot=bool(msg.get("bot", False)))
    except AccountError as exc:
        raise refusal(exc) from None
    lobby.store.link_session(session.id, account.id)
    session.account = account
    log.info("session %s registered account %r%s", session.id, account.name,
             " (bot)" if account.bot else "")
    lobby.reply(session, rid, account=account_wire(account))


async def logout(lobby: Lobby, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
    """Revoke the session's resume token: once this connection closes, nobody can
    resume the session. The server closes the connection after ``ok`` (``bye``
    ``logged_out``)."""
    lobby.store.revoke_session(session.id)
    log.info("session %s logged out", session.id)
    lobby.reply(session, rid)
    lobby.close_session(session, "logged_out", "logged out: this session cannot be resumed")


async def change_password(lobby: Lobby, session: Session, rid: int | None,
                          msg: dict[str, Any]) -> None:
    """Replace the account's password (``old`` must be the current one)."""
    account = require_account(session)
    try:
        session.account = await lobby.accounts.change_password(account, msg["old"], msg["new"],
                                                               session.address)
    except AccountError as exc:
        raise refusal(exc) from None
    log.info("account %r changed its password", account.name)
    lobby.reply(session, rid)


async def token_create(lobby: Lobby, session: Session, rid: int | None,
                       msg: dict[str, Any]) -> None:
    """A new API token; the reply is the only time the token itself is sent."""
    account = require_account(session)
    try:
        record, token = lobby.accounts.create_token(account, msg.get("label") or "token")
    except AccountError as exc:
        raise refusal(exc) from None
    log.info("account %r created API token %s", account.name, record.id)
    lobby.reply(session, rid, token=token_wire(record), api_token=token)


async def tokens(lobby: Lobby, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
    """The account's API tokens (ids, labels, dates; never the tokens)."""
    account = require_account(session)
    lobby.reply(session, rid, tokens=[token_wire(t) for t in lobby.accounts.tokens(account)])


async def token_revoke(lobby: Lobby, session: Session, rid: int | None,
                       msg: dict[str, Any]) -> None:
    """Revoke one of the account's API tokens at once; the sessions that logged in
    with it can no longer be resumed, and their connections are closed."""
    account = require_account(session)
    try:
        revoked = lobby.accounts.revoke_token(account, msg["token"])
    except AccountError as exc:
        raise refusal(exc) from None
    log.info("account %r revoked API token %s (%d sessions ended)", account.name,
             msg["token"], len(revoked))
    lobby.reply(session, rid)
    for sid in revoked:
        other = lobby.sessions.get(sid)
        if other is not None and other is not session:
            lobby.close_session(other, "logged_out", "the API token this session logged in "
                                "with was revoked")


async def set_bot(lobby: Lobby, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
    """Mark the account as a bot's (shown as one), or not."""
    account = require_account(session)
    lobby.accounts.set_bot(account, msg["bot"])
    session.account = lobby.store.account(account.id) or account
    lobby.reply(session, rid, account=account_wire(session.account))


async def profile(lobby: Lobby, session: Session, rid: int | None, msg: dict[str, Any]) -> None:
    """A name's profile: ratings in every game and a page of recent matches."""
    name = msg.get("name") or session.name
    limit = msg.get("limit", profiles.DEFAULT_RECENT)
    lobby.reply(session, rid, profile=profiles.profile(lobby.store, name, game_names(), limit,
                                                       msg.get("offset", 0)))


async def leaderboard(lobby: Lobby, session: Session, rid: int | None,
                      msg: dict[str, Any]) -> None:
    """A page of a game's leaderboard, best first."""
    try:
        game = get_game(msg["game"]).name
    except RuleError as exc:
        raise Refusal(exc.code, str(exc), "game") from None
    offset = msg.get("offset", 0)
    entries = profiles.leaderboard(lobby.store, game, msg.get("limit", profiles.DEFAULT_BOARD),
                                   offset)
    lobby.reply(session, rid, game=game, entries=entries)


_Route = Callable[[Lobby, Session, "int | None", dict[str, Any]], Awaitable[None]]

#: Message type -> handler, merged into the lobby's routing table.
ACCOUNT_ROUTES: dict[str, _Route] = {
    "register": register,
    "logout": logout,
    "change_password": change_password,
    "token_create": token_create,
    "tokens": tokens,
    "token_revoke": token_revoke,
    "set_bot": set_bot,
    "profile": profile,
    "leaderboard": leaderboard,
}
