"""The busy-poll window (server/spin.py): it grows while requests follow soon,
shrinks to nothing when they come far apart, and is never longer than its limit."""

from __future__ import annotations

import pytest

from server.spin import GROW_START, SpinWindow


def test_it_starts_at_its_limit_and_shrinks_to_nothing_when_sleeps_are_long() -> None:
    spin = SpinWindow(0.0008)
    assert spin.window == 0.0008
    windows = []
    for _ in range(5):
        spin.slept(1.0)
        windows.append(spin.window)
    assert windows == [0.0004, 0.0002, 0.0001, 0.0, 0.0]


def test_it_grows_back_to_its_limit_when_wake_ups_come_within_it() -> None:
    spin = SpinWindow(0.0008)
    for _ in range(4):
        spin.slept(1.0)
    assert spin.window == 0.0
    windows = []
    for _ in range(5):
        spin.slept(0.0005)
        windows.append(spin.window)
    assert windows == [0.0008 * GROW_START, 0.0002, 0.0004, 0.0008, 0.0008]


def test_a_limit_of_zero_never_polls() -> None:
    spin = SpinWindow(0.0)
    spin.slept(0.0)
    spin.slept(5.0)
    assert spin.window == 0.0


def test_it_counts_what_polling_cost_and_caught() -> None:
    spin = SpinWindow(0.001)
    spin.poll_caught(0.0003)
    spin.poll_missed(0.001)
    assert spin.caught == 1
    assert spin.polled == pytest.approx(0.0013)


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="busy-poll"):
        SpinWindow(-0.1)
