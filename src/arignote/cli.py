"""The ``arignote`` command: ``info`` (what this machine has), ``check`` (the seed test) and
``run`` (a legacy Theano program, unchanged, under the ``theano`` alias)."""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import time
from collections.abc import Sequence
from typing import TextIO

import numpy as np

VLEN = 10 * 30 * 768  # the seed note's vector: 10 x #cores x #threads per core
ITERS = 1000


def seed_check(floatX: str, iters: int = ITERS, out=sys.stdout, device: str | None = None) -> bool:
    """Run the seed note's GPU test on ``device`` (default: config.device); True when it used a
    GPU (an OpenCL device that is the CPU, as PoCL's, is said to be one and is not).

    The script is the note's own, with the import line and ``xrange`` changed,
    plus what the note could not see: the same loop in numpy next to it, on a
    GPU the loop again with the result left on the device (synchronised before
    the clock stops, so the time is the work's and not the queue's), and the
    result checked against numpy.
    """
    from arignote import Out, config, function, progress, shared, tensor
    from arignote.backends.gpu import get_context

    with config.change_flags(floatX=floatX, device=device or config.device), \
            progress.task(f"arignote check on {device or config.device}, floatX={floatX}"):
        rng = np.random.RandomState(22)
        x = shared(np.asarray(rng.rand(VLEN), config.floatX))
        f = function([], tensor.exp(x))
        print(f"floatX={floatX}, device={config.device}", file=out)
        print(f.maker.fgraph.toposort(), file=out)
        t0 = time.perf_counter()
        for start in range(0, iters, 100):  # the seed's loop, reporting every 100 calls
            progress.step(f"call {start} of {iters}")
            for _ in range(min(100, iters - start)):
                r = f()
        t1 = time.perf_counter()
        value = x.get_value(borrow=True)
        n0 = time.perf_counter()
        for _ in range(iters):
            expected = np.exp(value)
        n1 = time.perf_counter()
        print(f"Looping {iters} times took {t1 - t0:f} seconds "
              f"(numpy's np.exp loop: {n1 - n0:f} s, ratio {(t1 - t0) / (n1 - n0):.2f})", file=out)
        ctx = get_context(None)
        if ctx is not None:
            kept = function([], Out(tensor.exp(x).transfer(None), borrow=True))
            kept()
            ctx.device.synchronize()
            k0 = time.perf_counter()
            for _ in range(iters):
                kept()
            ctx.device.synchronize()
            k1 = time.perf_counter()
            print(f"With the result left on the device: {k1 - k0:f} seconds", file=out)
        print(f"Result is {r}", file=out)
        ok = np.allclose(r, expected, rtol=1e-6 if floatX == "float32" else 1e-12)
        print(f"Result matches numpy: {'yes' if ok else 'NO'}", file=out)
        on_cpu = any(isinstance(node.op, tensor.Elemwise) and "Gpu" not in type(node.op).__name__
                     for node in f.maker.fgraph.toposort())
        cpu_device = ctx is not None and ctx.device.on_cpu
        if on_cpu:
            print("Used the cpu", file=out)
        elif cpu_device:  # the seed's test would say "Used the gpu": its ops are Gpu ops
            print(f"Used the OpenCL device {ctx.device.name} ({ctx.device.description}), which is "
                  "the CPU itself: no GPU was used (see `arignote info` for a GPU's driver)", file=out)
        else:
            print(f"Used the gpu ({ctx.device.name}: {ctx.device.description})", file=out)
        if not ok:
            raise SystemExit("arignote check: the result differs from numpy's")
        return not on_cpu and not cpu_device


RUN_USAGE = """usage: arignote run script.py [args ...]
       arignote run -m module [args ...]
       arignote run -c command [args ...]

Runs a Python program as `python` would (sys.argv as the program expects,
__name__ == '__main__', its exit code), with `import theano` resolving to
arignote and THEANO_FLAGS / .theanorc read (ARIGNOTE_FLAGS wins where both
set a flag). Example: arignote run -m pytest legacy_tests/"""


def run(argv: Sequence[str]) -> int:
    """``arignote run``: run a script, ``-m`` module or ``-c`` command under the ``theano`` alias."""
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help") or (argv[0] in ("-m", "-c") and len(argv) < 2):
        print(RUN_USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    from arignote.compat import theano as alias
    alias.install()
    if argv[0] == "-m":
        sys.argv = [argv[1]] + argv[2:]  # runpy puts the module's path in sys.argv[0]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c"] + argv[2:]  # as python -c sets them
        sys.path.insert(0, "")
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        script = argv[0]
        if not os.path.exists(script):
            print(f"arignote run: cannot open {script!r}: no such file", file=sys.stderr)
            return 2
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    return 0


def show_cache(action: str, out: TextIO | None = None) -> None:
    """``arignote cache [list|clear]``: the cache directory's entries by kind, or empty it."""
    from arignote.backends.kernels import cache
    out = out or sys.stdout
    from arignote.config import config
    where = os.path.expanduser(config.compiledir)
    if action == "clear":
        files, size = cache.clear()
        print(f"removed {files} files ({_megabytes(size)}) from {where}", file=out)
        return
    rows = cache.contents()
    print(f"kernel cache {where} (config.compiledir)", file=out)
    width = max([len(kind) for kind, _, _ in rows] + [5])
    for kind, files, size in rows:
        print(f"  {kind:<{width}}  {files:>7} files  {_megabytes(size):>9}", file=out)
    total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"  {'total':<{width}}  {total[0]:>7} files  {_megabytes(total[1]):>9}", file=out)
    print("arignote cache clear empties it (kernels are compiled again when next needed)", file=out)


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:
        return run(argv[1:])
    parser = argparse.ArgumentParser(prog="arignote", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="report Python, numpy, BLAS, CPU and devices")
    check = sub.add_parser("check", help="run the seed note's GPU test on every usable device")
    check.add_argument("--iters", type=int, default=ITERS, help="calls to time (default 1000)")
    sub.add_parser("run", help="run a Theano program unchanged: arignote run script.py [args] "
                   "or arignote run -m module [args]")
    cache_cmd = sub.add_parser("cache", help="show what the kernel cache (config.compiledir) "
                               "holds; arignote cache clear empties it")
    cache_cmd.add_argument("action", nargs="?", choices=["list", "clear"], default="list")
    args = parser.parse_args(argv)
    if args.command == "info":
        from arignote.devices import report
        print(report())
    elif args.command == "cache":
        show_cache(args.action)
    else:
        from arignote.devices import usable_devices
        for device in usable_devices():
            for floatX in ("float32", "float64"):
                seed_check(floatX, args.iters, device=device)
                print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
