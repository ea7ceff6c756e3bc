"""Beyond one machine, on Dask: chunked evaluation and synchronous data-parallel training.

Needs the ``distributed`` extra (``pip install arignote[distributed]``: dask and
distributed). Everything runs through a ``distributed.Client``, on a
``LocalCluster`` or any scheduler address; see docs/distributed.md.
"""
try:
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(f"arignote.distributed needs dask and distributed ({err}): "
                      "pip install 'arignote[distributed]'") from err

from arignote.distributed.batches import map_batches
from arignote.distributed.publish import release
from arignote.distributed.rules import adadelta, momentum, sgd
from arignote.distributed.training import DataParallel, OutOfStep, TrainingStateLost

__all__ = ["map_batches", "release", "DataParallel", "OutOfStep", "TrainingStateLost", "sgd", "momentum", "adadelta"]
