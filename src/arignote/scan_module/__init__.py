"""Loops in the graph: ``scan`` and the views built on it (Theano's ``scan_module``).

``op`` holds the Scan Op (the loop, its inner graph compiled once),
``basic`` the ``scan`` function that builds it from a step function, ``views``
``map``/``reduce``/``foldl``/``foldr``, and ``grad`` the gradient of a loop,
itself a loop running backwards.
"""
from arignote.scan_module.op import Scan
from arignote.scan_module.basic import scan, until
from arignote.scan_module.views import foldl, foldr, map, reduce  # noqa: A004 - Theano's names
from arignote.scan_module import grad  # noqa: F401,E402  (registers the gradient of Scan)

__all__ = ["Scan", "scan", "until", "map", "reduce", "foldl", "foldr"]
