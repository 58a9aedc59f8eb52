"""Accounts (server/accounts.py): passwords, tokens, limits, look-alike names."""

from __future__ import annotations

from typing import Any

import argon2
import pytest

from server.accounts import TOKEN_PREFIX, AccountError, Accounts, AttemptLimiter, Limits
from server.store import Store

#: Valid argon2id with the smallest costs: these tests check logic, not hardness.
CHEAP = argon2.PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _direct(fn: Any, *args: Any) -> Any:
    return fn(*args)


def _accounts(store: Store | None = None, clock: FakeClock | None = None,
              limits: Limits | None = None) -> Accounts:
    return Accounts(store or Store(":memory:"), clock=clock or FakeClock(), wall=lambda: 5.0,
                    hasher=CHEAP, limits=limits or Limits(), run_slow=_direct)


async def _code(coro: Any) -> str:
    with pytest.raises(AccountError) as info:
        await coro
    return info.value.code


def test_limiter_window() -> None:
    clock = FakeClock()
    limiter = AttemptLimiter(clock, limit=3, window=60)
    for _ in range(3):
        assert limiter.retry_after("k") == 0
        limiter.record("k")
    assert limiter.retry_after("k") == pytest.approx(60)
    assert limiter.retry_after("other") == 0
    clock.now += 59.5
    assert limiter.retry_after("k") == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.retry_after("k") == 0
    limiter.record("k")
    limiter.clear("k")
    assert limiter.retry_after("k") == 0
    with pytest.raises(ValueError):
        AttemptLimiter(clock, 0, 1)


def test_limiter_memory_is_bounded() -> None:
    clock = FakeClock()
    limiter = AttemptLimiter(clock, limit=1, window=60, max_keys=3)
    for key in "abcd":
        clock.now += 1
        limiter.record(key)
    assert len(limiter._failures) == 3 and limiter.retry_after("a") == 0
    assert limiter.retry_after("d") > 0


async def test_register_and_log_in() -> None:
    store = Store(":memory:")
    accounts = _accounts(store)
    alice = await accounts.register("Alice", "correct horse", "127.0.0.1")
    assert alice.name == "Alice" and alice.password_hash.startswith("$argon2id$")
    dump = "\n".join(store._db.iterdump())
    assert "correct horse" not in dump
    assert (await accounts.login_password("alice", "correct horse", "a")).id == alice.id
    assert await _code(accounts.login_password("Alice", "wrong", "a")) == "bad_credentials"
    assert await _code(accounts.login_password("Alice", "", "a")) == "bad_credentials"
    assert await _code(accounts.login_password("nobody", "x", "a")) == "bad_credentials"
    assert await _code(accounts.register("ALICE", "pw", "a")) == "name_taken"
    assert await _code(accounts.register("аlice", "pw", "a")) == "bad_name"  # mixed scripts
    await accounts.register("ace", "pw", "a")
    assert await _code(accounts.register("асе", "pw", "a")) == "name_taken"  # all Cyrillic
    assert await _code(accounts.register("bob", "", "a")) == "bad_password"
    assert await _code(accounts.register("bob\u202e", "pw", "a")) == "bad_name"
    with pytest.raises(AccountError) as info:
        accounts.check_guest_name("alice")
    assert info.value.code == "name_taken" and "'Alice'" in info.value.message
    assert accounts.check_guest_name("bob") == "bob"


async def test_password_change() -> None:
    accounts = _accounts()
    alice = await accounts.register("alice", "old", "a")
    assert await _code(accounts.change_password(alice, "nope", "new", "a")) == "bad_credentials"
    assert await _code(accounts.change_password(alice, "old", "", "a")) == "bad_password"
    await accounts.change_password(alice, "old", "new", "a")
    assert await _code(accounts.login_password("alice", "old", "a")) == "bad_credentials"
    assert (await accounts.login_password("alice", "new", "a")).id == alice.id


async def test_failed_logins_are_limited_per_name_and_per_address() -> None:
    clock = FakeClock()
    accounts = _accounts(clock=clock, limits=Limits(login_per_name=(3, 60),
                                                    login_per_address=(5, 60)))
    await accounts.register("alice", "pw", "x")
    await accounts.register("bob", "pw", "x")
    for address in ("1", "2", "3"):
        assert await _code(accounts.login_password("alice", "guess", address)) == \
            "bad_credentials"
    # the name is locked, even for the right password and from a fresh address
    with pytest.raises(AccountError) as info:
        await accounts.login_password("alice", "pw", "4")
    assert info.value.code == "rate_limited" and info.value.retry_after == pytest.approx(60)
    clock.now += 61
    assert (await accounts.login_password("alice", "pw", "4")).name == "alice"
    # one address failing over many names is locked too
    for name in ("bob", "carol", "dave", "erin", "frank"):
        await _code(accounts.login_password(name, "guess", "9"))
    assert await _code(accounts.login_password("bob", "pw", "9")) == "rate_limited"
    assert (await accounts.login_password("bob", "pw", "8")).name == "bob"


async def test_registrations_are_limited_per_address() -> None:
    accounts = _accounts(limits=Limits(register_per_address=(2, 3600)))
    await accounts.register("a1", "pw", "x")
    await accounts.register("a2", "pw", "x")
    assert await _code(accounts.register("a3", "pw", "x")) == "rate_limited"
    await accounts.register("a3", "pw", "y")


async def test_api_tokens() -> None:
    store = Store(":memory:")
    accounts = _accounts(store)
    alice = await accounts.register("alice", "pw", "a")
    bob = await accounts.register("bob", "pw", "a")
    record, token = accounts.create_token(alice, "my bot")
    assert token.startswith(TOKEN_PREFIX) and len(token) > 40
    assert token not in "\n".join(store._db.iterdump())
    assert [t.label for t in accounts.tokens(alice)] == ["my bot"] and accounts.tokens(bob) == []
    account, token_id = await accounts.login_token("Alice", token, "a")
    assert account.id == alice.id and token_id == record.id
    assert accounts.tokens(alice)[0].last_used == 5.0
    assert await _code(accounts.login_token("bob", token, "a")) == "bad_credentials"
    assert await _code(accounts.login_token("alice", token + "x", "a")) == "bad_credentials"
    with pytest.raises(AccountError, match="no token"):
        accounts.revoke_token(bob, record.id)
    assert accounts.revoke_token(alice, record.id) == []
    assert await _code(accounts.login_token("alice", token, "a")) == "bad_credentials"
    for bad in ("", "x" * 65, "a\nb"):
        with pytest.raises(AccountError) as info:
            accounts.create_token(alice, bad)
        assert info.value.code == "bad_option"


async def test_bot_accounts() -> None:
    store = Store(":memory:")
    accounts = _accounts(store)
    robo = await accounts.register("robo", "pw", "a", bot=True)
    assert robo.bot and accounts.find("robo").bot
    accounts.set_bot(robo, False)
    assert not accounts.find("robo").bot


async def test_hashing_runs_in_a_worker_thread() -> None:
    accounts = Accounts(Store(":memory:"), hasher=CHEAP)
    await accounts.register("alice", "pw", "a")
    assert (await accounts.login_password("alice", "pw", "a")).name == "alice"


async def test_old_parameters_are_rehashed_on_login() -> None:
    store = Store(":memory:")
    await _accounts(store).register("alice", "pw", "a")
    stronger = argon2.PasswordHasher(time_cost=2, memory_cost=16, parallelism=1)
    accounts = Accounts(store, hasher=stronger, run_slow=_direct)
    await accounts.login_password("alice", "pw", "a")
    assert "t=2" in accounts.find("alice").password_hash
