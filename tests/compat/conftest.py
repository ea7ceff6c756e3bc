"""The ``theano`` alias installed for one test, and every trace of it removed afterwards."""
import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arignote import config
from arignote.compat import theano as alias

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def theano():
    """``import theano`` for the length of a test (no THEANO_FLAGS read)."""
    stores = (config._flags, config._values, config._ranks, config._held)
    saved = [dict(store) for store in stores[:3]] + [copy.deepcopy(config._held)]
    alias.install(environ={"THEANORC": ""})
    try:
        import theano as module
        yield module
    finally:
        alias.uninstall()
        for store, old in zip(stores, saved):
            store.clear()
            store.update(old)


def run(args, cwd=None, **env):
    """``arignote run ARGS`` in a fresh process; env values replace the caller's."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ARIGNOTE", "THEANO"))}
    environ.update(PYTHONPATH=str(ROOT / "src"), HOME=env.pop("HOME", "/nonexistent"), **env)
    return subprocess.run([sys.executable, "-m", "arignote.cli", "run", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=300)
