"""A worker plugin that kills its own worker process, once, for the fault tests."""
import os
import signal

from distributed import WorkerPlugin
from distributed.utils import key_split


class KillOnce(WorkerPlugin):
    """SIGKILLs the worker process when its ``count``-th task named ``prefix`` starts,
    on the first worker to get there (``marker`` is created first, so only once)."""

    def __init__(self, prefix: str, count: int, marker: str):
        self.prefix, self.count, self.marker = prefix, count, marker

    def setup(self, worker):
        self.seen = 0

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or key_split(key) != self.prefix:
            return
        self.seen += 1
        if self.seen < self.count:
            return
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        os.kill(os.getpid(), signal.SIGKILL)
