"""Turn, the lock of a Function's calls: one holder at a time, no lost wake-up,
given back after an exception."""
from __future__ import annotations

import sys
import threading

import pytest

from arignote.compile.turn import Turn


def test_one_holder_at_a_time_and_every_waiter_gets_its_turn():
    turn = Turn()
    inside, most, done = [0], [0], [0]
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def work() -> None:
        for _ in range(3000):
            with turn.held():
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                inside[0] -= 1
                done[0] += 1

    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads)  # nobody left waiting for a lost wake-up
    finally:
        sys.setswitchinterval(before)
    assert most[0] == 1 and done[0] == 6 * 3000
    assert turn.token == [True] and turn.waiting == [0]


def test_the_turn_is_given_back_when_the_holder_raises():
    turn = Turn()
    with pytest.raises(ValueError):
        with turn.held():
            raise ValueError("inside")
    with turn.held():
        assert turn.token == []
    assert turn.token == [True]
