"""Progress: a compile or `arignote check` that runs past two seconds shows its steps on a
terminal, and nothing otherwise (a fake clock and a fake terminal; no test waits)."""
from __future__ import annotations

import io
import itertools
import threading

import pytest

from arignote import function, progress, tensor as T
from arignote.cli import seed_check


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def slow_clock(monkeypatch):
    """Each reading of the clock is one second after the last: every task is slow."""
    ticks = itertools.count()
    monkeypatch.setattr(progress, "_clock", lambda: float(next(ticks)))


def _compile():
    x = T.matrix("x")
    return function([x], T.tanh(T.dot(x, x.T) * 2 + 1).sum(), name="slow")


def test_a_slow_compile_shows_its_steps_on_a_terminal(monkeypatch, slow_clock):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    _compile()
    text = terminal.getvalue()
    assert "[arignote] compiling slow: rewriting (canonicalize)" in text
    assert "compiling slow: linking" in text
    assert text.endswith("s\n") and "compiling slow: done in" in text.splitlines()[-1]
    assert "\r\033[K" in text  # one line, rewritten in place


def test_nothing_is_shown_off_a_terminal_or_for_a_quick_compile(monkeypatch, slow_clock):
    log = io.StringIO()  # not a terminal
    monkeypatch.setattr("sys.stderr", log)
    _compile()
    assert log.getvalue() == ""
    monkeypatch.setattr(progress, "_clock", lambda: 0.0)  # a compile that takes no time
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    _compile()
    assert terminal.getvalue() == ""


def test_arignote_check_reports_its_calls_and_nested_compiles(monkeypatch, slow_clock):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    seed_check("float32", iters=300, out=io.StringIO(), device="cpu")
    text = terminal.getvalue()
    assert "[arignote] arignote check on cpu, floatX=float32: call 200 of 300" in text
    assert "arignote check on cpu, floatX=float32: compiling test_progress.py:" in text  # its line
    assert text.count("done in") == 1  # the compile inside is a step of the check


def test_threads_report_their_own_tasks(monkeypatch, slow_clock):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    seen = []

    def work(label):
        with progress.task(label):
            for k in range(5):
                progress.step(f"step {k}")
        seen.append(label)

    threads = [threading.Thread(target=work, args=(f"task {i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = terminal.getvalue()
    assert sorted(seen) == ["task 0", "task 1"]
    assert "task 0: step" in text and "task 1: step" in text and "task 0: task 1" not in text
