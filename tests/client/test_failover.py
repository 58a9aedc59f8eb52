"""client/failover.py and parse_addresses: which address a session tries, in what order."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from client.address import Address, parse_addresses
from client.failover import Failover, NoAddressAnswered

A, B, C = Address("a", 1), Address("b", 2), Address("c", 3)


def test_parse_addresses_splits_commas_and_drops_repeats() -> None:
    assert parse_addresses("a:1,b:2") == [A, B]
    assert parse_addresses(["a:1", "b:2,a:1", "c:3"]) == [A, B, C]
    assert parse_addresses("tls://a:1")[0].tls is True
    assert parse_addresses("[::1]:7,::1") == [("::1", 7), ("::1", 7000)]
    for bad in ("", [], "a:1,,b:2", "a:1,b:x"):
        with pytest.raises(ValueError):
            parse_addresses(bad)


class Opener:
    """Opens memory streams to the addresses that are ``up``; records every try."""

    def __init__(self, *up: Address) -> None:
        self.up = set(up)
        self.tried: list[Address] = []

    async def __call__(self, address: Address) -> trio.abc.Stream:
        self.tried.append(address)
        await trio.lowlevel.checkpoint()
        if address not in self.up:
            raise ConnectionRefusedError(f"{address} is down")
        return trio.testing.memory_stream_pair()[0]


async def test_the_first_call_tries_the_given_order_until_one_answers() -> None:
    opener = Opener(B, C)
    failover = Failover([A, B, C], opener)
    await failover()
    assert opener.tried == [A, B] and failover.current == B


async def test_after_a_loss_the_next_address_comes_first_and_the_lost_one_last() -> None:
    opener = Opener(A, B, C)
    failover = Failover([A, B, C], opener)
    await failover()
    assert failover.current == A
    opener.up = {A, C}
    opener.tried.clear()
    await failover()  # reconnecting: B first, which is down, then C
    assert opener.tried == [B, C] and failover.current == C
    assert failover.candidates() == [A, B, C]


async def test_welcome_nodes_come_before_the_given_addresses() -> None:
    failover = Failover([A], Opener(A, B, C))
    await failover()
    failover.welcomed(["a:1", "c:3", "b:2", "not an address!"])
    assert failover.ring() == [A, C, B]
    assert failover.candidates() == [C, B, A]


async def test_nodes_listed_over_tls_are_reached_over_tls() -> None:
    tls_a = Address("a", 1, tls=True)
    failover = Failover([tls_a], Opener(tls_a))
    await failover()
    failover.welcomed(["a:1", "b:2"])
    assert [x.tls for x in failover.ring()] == [True, True]


async def test_no_address_answering_names_them_all() -> None:
    failover = Failover([A, B], Opener())
    with pytest.raises(NoAddressAnswered) as caught:
        await failover()
    assert "a:1" in str(caught.value) and "b:2" in str(caught.value)
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


async def test_one_address_raises_its_own_error() -> None:
    with pytest.raises(ConnectionRefusedError):
        await Failover([A], Opener())()


async def test_a_token_refused_by_a_stranger_tries_the_others_first() -> None:
    opener = Opener(A, B)
    failover = Failover([A, B], opener)
    await failover()                         # A, a single server (no nodes)
    failover.welcomed(None)
    await failover()                         # A lost: B, which does not know us
    assert failover.current == B
    assert failover.token_refused() is True  # A may be back and know us
    assert failover.candidates() == [A]
    await failover()
    assert failover.current == A
    assert failover.token_refused() is False  # nobody else left to ask


async def test_a_token_refused_by_a_node_of_the_cluster_is_final() -> None:
    failover = Failover([A], Opener(A, B))
    await failover()
    failover.welcomed(["a:1", "b:2"])
    await failover()
    assert failover.current == B
    assert failover.token_refused() is False  # the cluster shares its sessions
