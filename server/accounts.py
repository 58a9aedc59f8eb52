"""Accounts: registration, logins, password changes, API tokens, bot accounts.

A name belongs either to a guest (anyone may take it while no account has it) or
to a registered account. Passwords are hashed with argon2id (the ``argon2-cffi``
library, OWASP's parameters by default: 19 MiB, 2 passes, 1 lane) and are never
stored or logged. API tokens carry 256 random bits;
only their SHA-256 is stored (a slow hash adds nothing to a secret that long),
so a copy of the store lets nobody log in.

Logins that fail are counted per address and per name by an :class:`AttemptLimiter`
each: past the limit, further attempts are refused with ``rate_limited`` before
any password is checked, until the oldest failure leaves the window. A successful
login clears its name's failures (never the address's). Registrations are counted
per address the same way, since each one costs a hash.

Hashing and checking a password take tens of milliseconds of CPU, so the
methods that do it are async and run it through ``run_slow`` (by default in a
worker thread, two at a time); the store is only ever touched from the caller's
thread.

Whether a name is registered is public (profiles show it), so a login for an
unknown name fails at once without pretending to check a hash.
"""

from __future__ import annotations

import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import argon2
import trio

from server.names import BadName, check_name, name_key
from server.store import AccountRecord, ApiTokenRecord, Store
from server.tokens import hash_token

MAX_PASSWORD = 1024
MAX_LABEL = 64
MAX_TOKENS = 32
#: An API token's visible prefix, so that a leaked one is recognised for what it is.
TOKEN_PREFIX = "cst_"

#: OWASP's recommended argon2id parameters (Password Storage Cheat Sheet).
DEFAULT_HASHER = argon2.PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)


class AccountError(Exception):
    """A refused account operation, with the protocol's error code.

    Attributes:
        code: ``bad_name``, ``name_taken``, ``bad_password``, ``bad_credentials``,
            ``rate_limited``, ``not_registered``, ``no_such_token``, ``too_many_tokens``.
        field: the request field at fault, if one is.
        retry_after: for ``rate_limited``, seconds until an attempt may succeed.
    """

    def __init__(self, code: str, message: str, field: str | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after


class AttemptLimiter:
    """At most ``limit`` attempts (failed logins, registrations) per key within a
    sliding ``window`` of seconds.

    Pure apart from the clock it is given (``time.monotonic`` or ``trio.current_time``
    in the server, a fake in tests). Memory is bounded: at most ``max_keys`` keys are
    tracked, the one whose newest failure is oldest dropped first.
    """

    def __init__(self, clock: Callable[[], float], limit: int, window: float,
                 max_keys: int = 100_000) -> None:
        """Raises: ValueError: limit, window or max_keys not positive."""
        if limit <= 0 or window <= 0 or max_keys <= 0:
            raise ValueError("limit, window and max_keys must be > 0")
        self.clock = clock
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str, now: float) -> deque[float] | None:
        times = self._failures.get(key)
        if times is None:
            return None
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._failures[key]
            return None
        return times

    def retry_after(self, key: str) -> float:
        """0.0 when ``key`` may try now; else the seconds until it may (its
        ``limit``-th newest attempt leaves the window)."""
        now = self.clock()
        times = self._recent(key, now)
        if times is None or len(times) < self.limit:
            return 0.0
        return max(times[-self.limit] + self.window - now, 1e-3)

    def record(self, key: str) -> None:
        """Count one attempt of ``key`` now."""
        now = self.clock()
        times = self._recent(key, now)
        if times is None:
            if len(self._failures) >= self.max_keys:
                # keys are kept in the order of their newest attempt: drop the first
                del self._failures[next(iter(self._failures))]
            times = self._failures[key] = deque(maxlen=self.limit)
        else:
            # keep the key last in insertion order: the newest attempts last
            self._failures[key] = self._failures.pop(key)
        times.append(now)

    def clear(self, key: str) -> None:
        """Forget ``key``'s attempts."""
        self._failures.pop(key, None)


@dataclass(frozen=True, slots=True)
class Limits:
    """How many failures (or registrations) within how many seconds."""

    login_per_name: tuple[int, float] = (10, 600.0)
    login_per_address: tuple[int, float] = (30, 600.0)
    register_per_address: tuple[int, float] = (20, 3600.0)


def check_password(password: str, field: str = "password") -> None:
    """Refuse a password no account may have.

    Raises:
        AccountError: ``bad_password``: empty, or longer than :data:`MAX_PASSWORD`.
    """
    if not password:
        raise AccountError("bad_password", "the password may not be empty", field)
    if len(password) > MAX_PASSWORD:
        raise AccountError("bad_password", f"a password has at most {MAX_PASSWORD} characters",
                           field)


class Accounts:
    """The accounts of one server, kept in its store.

    Raises (the async methods, besides what each says):
        StoreError: the store refused a write.
    """

    def __init__(self, store: Store, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 hasher: argon2.PasswordHasher = DEFAULT_HASHER,
                 limits: Limits = Limits(),
                 run_slow: Callable[..., Awaitable[Any]] | None = None) -> None:
        """Args:
            clock: a monotonic clock for the rate limits.
            wall: wall time for the stored records.
            hasher: the argon2id hasher (tests pass cheap parameters).
            run_slow: ``await run_slow(fn, *args)`` runs a password hash or check;
                by default in a worker thread, at most two at a time.
        """
        self.store = store
        self.wall = wall
        self.hasher = hasher
        self.run_slow = run_slow or self._in_thread
        self._hash_limiter: trio.CapacityLimiter | None = None
        self.per_name = AttemptLimiter(clock, *limits.login_per_name)
        self.per_address = AttemptLimiter(clock, *limits.login_per_address)
        self.registrations = AttemptLimiter(clock, *limits.register_per_address)

    # -- lookups ----------------------------------------------------------

    def find(self, name: str) -> AccountRecord | None:
        """The account that owns ``name`` or a look-alike of it, or None."""
        return self.store.find_account(name_key(name))

    def check_guest_name(self, name: str) -> str:
        """The name a guest may use (NFC); raises when it is refused or registered.

        Raises:
            AccountError: ``bad_name`` (see :mod:`server.names`) or ``name_taken``.
        """
        name = _checked(name)
        owner = self.find(name)
        if owner is not None:
            raise AccountError("name_taken", f"{name!r} is a registered account's name"
                               + ("" if owner.name == name else f" ({owner.name!r})")
                               + ": log in with auth, or choose another name", "name")
        return name

    # -- registering and logging in ---------------------------------------

    async def register(self, name: str, password: str, address: str,
                       bot: bool = False) -> AccountRecord:
        """Register ``name`` with ``password`` (hashed with argon2id).

        Raises:
            AccountError: ``bad_name``, ``bad_password``, ``name_taken`` (an account
                has it or a look-alike of it), ``rate_limited`` (too many
                registrations from ``address``).
        """
        name = _checked(name)
        check_password(password)
        self._check_limit(self.registrations, address, "registrations from your address")
        if self.find(name) is not None:
            raise AccountError("name_taken", f"{name!r} (or a name that looks like it) is "
                               "registered already", "name")
        self.registrations.record(address)
        password_hash = await self.run_slow(self.hasher.hash, password)
        account = self.store.create_account(name_key(name), name, password_hash, self.wall(),
                                            bot)
        if account is None:  # registered by someone else while we hashed
            raise AccountError("name_taken", f"{name!r} was registered just now", "name")
        return account

    async def login_password(self, name: str, password: str, address: str) -> AccountRecord:
        """The account ``name`` if ``password`` is its password.

        Raises:
            AccountError: ``rate_limited`` (too many failures for this name or from
                this address: nothing is checked), ``bad_credentials``.
        """
        key = name_key(name)
        self._check_login_limits(key, address)
        account = self.store.find_account(key)
        if account is None or not password or len(password) > MAX_PASSWORD:
            return self._failed(key, address)
        if not await self.run_slow(self._verify, account.password_hash, password):
            return self._failed(key, address)
        self.per_name.clear(key)
        if self.hasher.check_needs_rehash(account.password_hash):
            new_hash = await self.run_slow(self.hasher.hash, password)
            self.store.set_password_hash(account.id, new_hash)
        return account

    async def login_token(self, name: str, token: str, address: str
                          ) -> tuple[AccountRecord, str]:
        """The account ``name`` and the token's id, if ``token`` is one of its API tokens.

        Raises:
            AccountError: ``rate_limited``, ``bad_credentials`` (unknown or revoked
                token, or a token of another account).
        """
        key = name_key(name)
        self._check_login_limits(key, address)
        record = self.store.find_api_token(hash_token(token))
        account = None if record is None else self.store.account(record.account)
        if record is None or account is None or account.key != key:
            return self._failed(key, address)
        self.per_name.clear(key)
        self.store.touch_api_token(record.id, self.wall())
        return account, record.id

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._hash_limiter is None:
            self._hash_limiter = trio.CapacityLimiter(2)
        return await trio.to_thread.run_sync(fn, *args, limiter=self._hash_limiter)

    def _verify(self, password_hash: str, password: str) -> bool:
        try:
            return bool(self.hasher.verify(password_hash, password))
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
            return False

    def _check_limit(self, limiter: AttemptLimiter, key: str, what: str) -> None:
        wait = limiter.retry_after(key)
        if wait > 0:
            raise AccountError("rate_limited", f"too many {what}; try again in "
                               f"{wait:.0f} s", retry_after=wait)

    def _check_login_limits(self, key: str, address: str) -> None:
        self._check_limit(self.per_name, key, "failed logins for this name")
        self._check_limit(self.per_address, address, "failed logins from your address")

    def _failed(self, key: str, address: str) -> NoReturn:
        self.per_name.record(key)
        self.per_address.record(address)
        raise AccountError("bad_credentials", "wrong name, password or token", "auth")

    # -- changing an account ----------------------------------------------

    async def change_password(self, account: AccountRecord, old: str, new: str,
                              address: str) -> AccountRecord:
        """Replace the account's password; ``old`` must be the current one.

        Returns:
            The account as stored now.

        Raises:
            AccountError: ``bad_password`` (``new`` refused), ``rate_limited``,
                ``bad_credentials`` (``old`` is wrong; counted like a failed login).
        """
        check_password(new, "new")
        current = self.store.account(account.id)
        if current is None:
            raise AccountError("not_registered", "the account no longer exists")
        self._check_login_limits(current.key, address)
        if not await self.run_slow(self._verify, current.password_hash, old):
            self._failed(current.key, address)
        new_hash = await self.run_slow(self.hasher.hash, new)
        self.store.set_password_hash(current.id, new_hash)
        return self.store.account(current.id) or current

    def set_bot(self, account: AccountRecord, bot: bool) -> None:
        """Mark the account as a bot's (shown as one everywhere), or not."""
        self.store.set_account_bot(account.id, bot)

    # -- API tokens -------------------------------------------------------

    def create_token(self, account: AccountRecord, label: str) -> tuple[ApiTokenRecord, str]:
        """A new API token for ``account``: its record and the token (shown once).

        Raises:
            AccountError: ``bad_option`` (label empty or too long), ``too_many_tokens``.
        """
        if not label or len(label) > MAX_LABEL or not label.isprintable():
            raise AccountError("bad_option", f"a token's label is 1..{MAX_LABEL} printable "
                               "characters", "label")
        if len(self.store.api_tokens(account.id)) >= MAX_TOKENS:
            raise AccountError("too_many_tokens", f"an account has at most {MAX_TOKENS} "
                               "tokens: revoke one first")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token_id = "t" + secrets.token_hex(6)
        now = self.wall()
        self.store.add_api_token(token_id, account.id, hash_token(token), label, now)
        return ApiTokenRecord(token_id, account.id, label, now, None), token

    def tokens(self, account: AccountRecord) -> list[ApiTokenRecord]:
        """The account's tokens, oldest first (without the tokens themselves)."""
        return self.store.api_tokens(account.id)

    def revoke_token(self, account: AccountRecord, token_id: str) -> list[str]:
        """Revoke one of the account's tokens at once, and the resume tokens of the
        sessions that logged in with it.

        Returns:
            The ids of those sessions (their connections should be closed).

        Raises:
            AccountError: ``no_such_token``.
        """
        sessions = self.store.revoke_api_token(account.id, token_id)
        if sessions is None:
            raise AccountError("no_such_token", f"your account has no token {token_id!r}",
                               "token")
        return sessions


def _checked(name: str) -> str:
    try:
        return check_name(name)
    except BadName as exc:
        raise AccountError("bad_name", str(exc), "name") from None
