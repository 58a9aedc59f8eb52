"""The trio side of the client, and trio hosted in guest mode on prompt_toolkit's loop.

prompt_toolkit runs on asyncio; the connection (:mod:`client.session`) is trio.
:func:`run_with_trio_guest` starts a trio run as a *guest* of the running asyncio
loop (``trio.lowlevel.start_guest_run`` with ``host_uses_signal_set_wakeup_fd=True``,
since asyncio owns the wakeup fd), runs the prompt_toolkit app to its end, then
cancels the trio side and waits for it. Both run on one thread, so the trio
tasks may change the model and call ``app.invalidate()`` directly; key handlers
hand work to trio through :class:`TrioBridge`.

:func:`network_main` is the trio side: it opens the session (retrying with
backoff until the first connection succeeds), pumps pushed messages into the
model, keeps the status line's state and RTT current, refreshes the lobby,
and runs the requests the keys submit. Reconnection after a drop (with the
resume token, with backoff) is the session's own; when the server forgets the
session (``bad_token``) a fresh session is opened.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import platform
import random
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from client.session import (
    Backoff,
    ConnectionLost,
    ServerError,
    SessionClosed,
    SessionState,
    StreamFactory,
    open_session,
)
from client.state import SessionMemory
from client.tui.controller import Controller
from client.tui.model import WARN_SECONDS, Model, apply_message
from protocol.errors import ProtocolError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Login:
    """How the command line asked to log in (never stored: see ``SessionMemory``).

    Attributes:
        password: log in with this password.
        register: register the name with this password once connected as a guest.
        remember: remember the login as an API token for later runs.
    """

    password: str | None = None
    register: str | None = None
    remember: bool = False

    def auth(self) -> dict[str, str] | None:
        """The ``hello.auth`` to send, if any."""
        return {"password": self.password} if self.password else None

Job = Callable[[], Awaitable[None]]

#: Seconds between the client's own pings (the status line's RTT refresh).
PING_INTERVAL = 2.0
#: Seconds between lobby refreshes while the lobby is on screen.
LOBBY_POLL = 2.0


class TrioBridge:
    """Hands jobs from the host loop (key handlers) to the trio side.

    ``submit(job)`` may be called from the asyncio side or from trio; the job
    (an async function without arguments) runs in the trio side's nursery. Jobs
    submitted before the trio side is ready wait in a bounded channel.
    """

    def __init__(self, size: int = 256) -> None:
        self.send, self.receive = trio.open_memory_channel[Job](size)
        self.token: trio.lowlevel.TrioToken | None = None

    def _put(self, job: Job) -> None:
        try:
            self.send.send_nowait(job)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # too many keys at once, or shutting down: drop, never crash the run

    def submit(self, job: Job) -> None:
        """Run ``job`` on the trio side soon (dropped if the trio side is gone)."""
        token = self.token
        if token is None:
            return
        try:
            token.run_sync_soon(self._put, job)
        except trio.RunFinishedError:
            pass


async def network_main(controller: Controller, bridge: TrioBridge, host: str | None,
                       port: int | None, name: str, *, connect: StreamFactory | None = None,
                       backoff: Backoff | None = None, ping_interval: float = PING_INTERVAL,
                       seed: int | None = None, memory: SessionMemory | None = None,
                       login: Login | None = None) -> None:
    """Run the client's connection until cancelled (the app quitting cancels it).

    With ``memory`` the first hello resumes the remembered session (a restarted
    client takes its seats back and says which matches it is back in), and the
    resume token, the seats and (if asked) the login are remembered as they change.

    Never raises for network trouble: it is shown on the status line and retried.
    """
    model = controller.model
    model.conn.server = f"{host}:{port}" if host is not None else "in-process"
    bridge.token = trio.lowlevel.current_trio_token()
    backoff = backoff or Backoff()
    rng = random.Random(seed)
    attempt = 0
    login = login or Login()
    token = memory.remembered.resume if memory is not None else None
    auth = login.auth()
    if auth is None and memory is not None and memory.remembered.api_token:
        auth = {"api_token": memory.remembered.api_token}
    async with trio.open_nursery() as jobs:
        jobs.start_soon(_run_jobs, bridge, jobs, model)

        lost = [False]  # the session is resuming after a drop
        current: list[Any] = [None]  # the open session (its address moves on a failover)

        def on_state(state: SessionState) -> None:
            model.conn.state = state.value
            if state is SessionState.RECONNECTING:
                lost[0] = True
                model.conn.detail = "connection lost, resuming"
                model.say("connection lost: reconnecting by itself...", error=True)
            elif state is SessionState.CONNECTED:
                model.conn.detail = ""
                if current[0] is not None:
                    model.conn.server = current[0].address or model.conn.server
                if lost[0]:
                    lost[0] = False
                    model.say(f"reconnected to {model.conn.server}; the game goes on")
            controller.invalidate()

        sessions = 0
        while True:
            model.conn.state = "connecting"
            controller.invalidate()
            try:
                async with open_session(host, port, name=name, connect=connect, reconnect=True,
                                        backoff=backoff, ping_interval=ping_interval,
                                        on_state=on_state, seed=seed, token=token,
                                        auth=auth) as session:
                    current[0] = session
                    model.conn.server = session.address or model.conn.server
                    if attempt:
                        model.say(f"connected to {model.conn.server}")
                    attempt = 0
                    conn = model.conn
                    conn.state, conn.detail, conn.failure, conn.kind = "connected", "", "", ""
                    conn.retry_at, conn.attempt, conn.connected_once = None, 0, True
                    welcome = session.welcome or {}
                    model.name = str(welcome.get("name") or name)
                    if sessions and model.views and not session.resumed:
                        forget_matches(model)
                    sessions += 1
                    token = session.token
                    await _serve_session(controller, session, memory, login)
                    reason = session.close_reason or "closed"
                    kind = "closed"
            except ServerError as exc:
                reason, kind = exc.code, "refused_hello"
                model.say(f"the server refused us: {exc.message} [{exc.code}]", error=True)
                if exc.code == "bad_token" and token is not None:
                    token = None  # the server forgot the session: a new one, at once
                    if memory is not None:
                        memory.welcomed(None)
                    model.say("the server no longer knew our session: starting a new one")
                    continue
                if exc.code not in ("too_many_connections", "server_shutdown", "bad_token"):
                    model.conn.state, model.conn.detail = "closed", exc.code
                    model.conn.failure, model.conn.kind = f"{exc.message} [{exc.code}]", kind
                    model.conn.retry_at = None
                    controller.invalidate()
                    await trio.sleep_forever()  # nothing to retry; Ctrl-C quits
            except (OSError, ConnectionLost, SessionClosed, trio.TooSlowError) as exc:
                kind, reason, final = describe_failure(exc, model.conn.server)
                if final and not model.conn.connected_once:
                    model.exit_error = reason
                    controller.quit()
                    return
            controller.request = None
            delay = backoff.delay(attempt, rng)
            attempt += 1
            conn = model.conn
            conn.state, conn.kind, conn.failure, conn.attempt = "reconnecting", kind, reason, attempt
            conn.retry_at = time.monotonic() + delay
            conn.detail = kind.replace("_", " ") if kind != "other" else _short(reason)
            model.say(f"cannot reach the server ({reason}); trying again", error=True)
            controller.invalidate()
            await trio.sleep(delay)
            conn.retry_at = None


#: getaddrinfo errors that mean the name does not exist (not a passing DNS hiccup).
_NO_SUCH_NAME = {getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA", "EAI_FAIL")
                 if hasattr(socket, n)}


def describe_failure(exc: BaseException, server: str) -> tuple[str, str, bool]:
    """What a failed connection attempt means: ``(kind, words, final)``.

    ``kind`` is refused, unknown_host, tls, timeout, unreachable, closed or other;
    ``final`` is True when trying again cannot help (a name that does not resolve).
    """
    causes = [exc]
    cause = exc.__cause__ or exc.__context__
    group = getattr(cause, "exceptions", None)
    causes += list(group) if group else ([cause] if cause is not None else [])
    for err in causes:
        if isinstance(err, socket.gaierror):
            final = err.errno in _NO_SUCH_NAME
            return ("unknown_host", f"unknown host: {server.rsplit(':', 1)[0]} does not resolve "
                    f"({err.strerror or err})", final)
        if isinstance(err, ssl.SSLError):
            why = getattr(err, "reason", None) or err
            return "tls", f"TLS handshake with {server} failed: {why}", False
        if isinstance(err, ConnectionRefusedError):
            return "refused", f"refused: nothing accepts connections on {server}", False
        if isinstance(err, (TimeoutError, trio.TooSlowError)):
            return "timeout", f"no answer from {server} in time", False
        if isinstance(err, OSError) and err.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "unreachable", f"{server} is unreachable: {err.strerror}", False
    if isinstance(exc, (ConnectionLost, SessionClosed)):
        return "closed", f"{server} closed the connection: {exc or 'no reason given'}", False
    return "other", str(exc) or type(exc).__name__, False


def forget_matches(model: Model) -> None:
    """A fresh session replaced one the server forgot (``bad_token``): its seats are gone,
    so drop their screens and go back to the lobby, saying why."""
    model.left.update(model.views)
    model.views.clear()
    model.current, model.screen = None, "lobby"
    model.selection, model.overlay = None, None
    model.queued = None
    model.say("the server no longer knew this session (restarted without its store?): "
              "your seats were lost; back in the lobby", error=True)


def _short(reason: str) -> str:
    return reason if len(reason) <= 40 else reason[:37] + "..."


async def _run_jobs(bridge: TrioBridge, nursery: trio.Nursery, model: Model) -> None:
    async for job in bridge.receive:
        nursery.start_soon(_guarded, job, model)


async def _guarded(job: Job, model: Model | None = None) -> None:
    """Run one job; a failure becomes a message on screen, never a traceback."""
    try:
        await job()
    except (ConnectionLost, SessionClosed, OSError):
        pass  # the status line already says what happened
    except Exception as exc:  # a bug must not take the whole client down
        log.exception("a request job failed")
        if model is not None:
            model.say(f"that did not work: {type(exc).__name__}: {exc}", error=True)


async def _serve_session(controller: Controller, session: Any,
                         memory: SessionMemory | None = None, login: Login | None = None
                         ) -> None:
    """Wire one open session to the controller until the session ends."""

    async def request(msg: dict[str, Any]) -> dict[str, Any]:
        try:
            return await session.request(msg)
        except ServerError as exc:
            return {"type": "error", "code": exc.code, "message": exc.message, **exc.reply}
        except ProtocolError as exc:  # our request broke a protocol limit; nothing was sent
            return {"type": "error", "code": exc.code,
                    "message": f"not sent: {exc.message}", "field": exc.field}
        except (ConnectionLost, SessionClosed) as exc:
            raise ConnectionError(str(exc) or "connection lost") from None

    controller.request = request
    model = controller.model
    if memory is not None:
        memory.welcomed(session.token)
    account = (session.welcome or {}).get("account")
    if account:
        model.say(f"logged in as {account.get('name')}"
                  + (" (a bot account)" if account.get("bot") else ""))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch_rtt, controller, session)
        nursery.start_soon(_poll_lobby, controller)
        nursery.start_soon(controller.refresh)
        nursery.start_soon(_tick_timers, controller)
        if memory is not None and session.resumed:
            nursery.start_soon(_announce_seats, controller, memory.remembered.matches)
        if login is not None:
            nursery.start_soon(_account_steps, controller, session, memory, login)
        async for msg in session.pushes:
            apply_message(model, msg, time.monotonic())
            if memory is not None:
                memory.seated(model.seated_matches())
            controller.pushed(msg)
            controller.invalidate()
        nursery.cancel_scope.cancel()


async def _announce_seats(controller: Controller, remembered: tuple[str, ...],
                          wait: float = 3.0) -> None:
    """After a resume: say which matches the client is back in (once their snapshots
    came, at most ``wait`` seconds)."""
    model = controller.model
    with trio.move_on_after(wait):
        while set(remembered) - set(model.views):
            await trio.sleep(0.05)
    back = model.seated_matches()
    if back:
        model.say(f"back in match{'es' if len(back) > 1 else ''} {', '.join(back)}: "
                  "your seat was kept for you")
    controller.invalidate()


async def _account_steps(controller: Controller, session: Any,
                         memory: SessionMemory | None, login: Login) -> None:
    """What the command line asked of the account once connected: register the name,
    and remember the login (an API token, never the password)."""
    model = controller.model
    account = (session.welcome or {}).get("account")
    if login.register is not None and account is None:
        reply = await controller.call({"type": "register", "password": login.register})
        if reply is None:
            return
        account = reply.get("account")
        model.say(f"registered the account {account.get('name') if account else model.name}")
    if login.remember and account is not None and memory is not None \
            and not memory.remembered.api_token:
        reply = await controller.call({"type": "token_create",
                                       "label": f"cardclient {platform.node()}"[:64]})
        if reply is not None:
            memory.remember_login(str(reply["api_token"]))
            model.say("logged in; this login is remembered (cardclient ... --forget drops it)")
    controller.invalidate()


async def _watch_rtt(controller: Controller, session: Any) -> None:
    while True:
        rtt = session.rtt
        if rtt is not None and rtt != controller.model.conn.rtt:
            controller.model.conn.rtt = rtt
            controller.invalidate()
        await trio.sleep(0.5)


async def _tick_timers(controller: Controller) -> None:
    """Redraw once a second while the match on screen runs a turn timer, and warn once
    per turn when the own timer is down to :data:`WARN_SECONDS`."""
    while True:
        await trio.sleep(1.0)
        model = controller.model
        mv = model.view
        if mv is not None and mv.time_left(None) is not None:
            warn_if_late(model, time.monotonic())
            controller.invalidate()


def warn_if_late(model: Model, now: float) -> None:
    """Say, once per running turn timer, that the own move is due within
    :data:`WARN_SECONDS` (and what happens then)."""
    mv = model.view
    if mv is None or mv.seat is None or mv.warned or not mv.legal:
        return
    left = mv.time_left(now, mv.seat)
    if left is None or left > WARN_SECONDS:
        return
    mv.warned = True
    snap = mv.snapshot or {}
    limit = snap.get("timeout_limit")
    done = (snap.get("timeouts") or [0, 0])[mv.seat] if isinstance(snap.get("timeouts"),
                                                                   list) else 0
    then = "the server moves for you"
    if isinstance(limit, int) and limit and done + 1 >= limit:
        then = "you forfeit (that would be one timeout too many)"
    model.say(f"{left:.0f} s left for your move: then {then}", error=True)


async def _poll_lobby(controller: Controller) -> None:
    while True:
        await trio.sleep(LOBBY_POLL)
        model = controller.model
        if model.screen == "lobby" and model.overlay is None and model.conn.state == "connected":
            await controller.refresh()


async def run_with_trio_guest(app: Any, trio_main: Callable[[], Awaitable[None]]) -> Any:
    """Run the prompt_toolkit ``app`` on the current asyncio loop with ``trio_main``
    as a trio guest; when the app exits, cancel ``trio_main`` and wait for it.

    Returns the app's result.

    Raises:
        BaseException: whatever ``trio_main`` raised (other than its cancellation).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    handles: list[tuple[trio.lowlevel.TrioToken, trio.CancelScope]] = []

    async def guest() -> None:
        with trio.CancelScope() as scope:
            handles.append((trio.lowlevel.current_trio_token(), scope))
            await trio_main()

    def finished(outcome: Any) -> None:
        if not done.done():
            done.set_result(outcome)
        if not app.is_done and app.is_running:
            app.exit()  # the trio side ended on its own (a crash): stop the UI too

    trio.lowlevel.start_guest_run(
        guest,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        done_callback=finished,
        host_uses_signal_set_wakeup_fd=True,
    )
    try:
        result = await app.run_async(handle_sigint=False)
    finally:
        if handles and not done.done():
            token, scope = handles[0]
            try:
                token.run_sync_soon(scope.cancel)
            except trio.RunFinishedError:
                pass
        outcome = await done
    outcome.unwrap()
    return result


def backoff_for_tests() -> Backoff:
    """A short backoff (for tests and the tmux run): retries every 0.1..0.5 s."""
    return Backoff(initial=0.1, maximum=0.5, factor=2.0, jitter=0.5, attempts=None)

