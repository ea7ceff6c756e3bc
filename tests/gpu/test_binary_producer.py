"""The requests of PoCL's background binary producer, without a device: a marker first, then one
lock per program (one taker among threads at once), a stale lock taken over, an unwritable
cache skipped. (The producer itself, across real processes: test_program_cache.py.)"""
from __future__ import annotations

import json
import os
import threading
import time

import pytest

from arignote import config
from arignote.backends.gpu import binary_producer

JOB = {"platform": 0, "device": 0, "source": "kernel void k() {}", "options": []}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """compiledir in ``tmp_path``; a producer that does nothing (so its lock stays)."""
    monkeypatch.setattr(binary_producer, "_command", lambda lock: ["true"])
    with config.change_flags(compiledir=str(tmp_path)):
        yield tmp_path


def test_the_second_build_asks_for_a_producer_once(cache):
    assert binary_producer.built_from_source("abc", JOB) is False
    assert [f.name for f in cache.iterdir()] == ["gpu-abc.src"]
    assert binary_producer.built_from_source("abc", JOB) is True
    job = json.loads((cache / "gpu-abc.lock").read_text())
    assert job == dict(JOB, name="abc", compiledir=str(cache))
    assert binary_producer.built_from_source("abc", JOB) is False  # its producer holds the lock


def test_one_thread_of_many_takes_a_lock(cache):
    lock = cache / "gpu-abc.lock"
    results, barrier = [], threading.Barrier(8)

    def take():
        barrier.wait()
        results.append(binary_producer.start(lock, JOB))
    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    assert json.loads(lock.read_text()) == JOB


def test_a_stale_lock_is_taken_over_and_a_fresh_one_kept(cache):
    lock = cache / "gpu-abc.lock"
    lock.write_text("{}")
    assert binary_producer.start(lock, JOB) is False
    os.utime(lock, (time.time() - 2 * binary_producer.STALE,) * 2)
    assert binary_producer.start(lock, JOB) is True
    assert json.loads(lock.read_text()) == JOB
    assert [f.name for f in cache.iterdir()] == ["gpu-abc.lock"]  # the stale one is gone


def test_a_producer_that_cannot_start_leaves_no_lock(cache, monkeypatch):
    monkeypatch.setattr(binary_producer.subprocess, "run", _refuse)
    lock = cache / "gpu-abc.lock"
    assert binary_producer.start(lock, JOB) is False
    assert not lock.exists()


def _refuse(*args, **kwargs):
    raise OSError("no sh here")


def test_a_cache_that_cannot_be_written_asks_for_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.touch()
    with config.change_flags(compiledir=str(blocker / "cache")):
        assert binary_producer.built_from_source("abc", JOB) is False
