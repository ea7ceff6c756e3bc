"""Run every workload against numpy, PyTensor, JAX, numba and PyTorch; write a table and a chart.

Usage: python benchmarks/run.py [--quick] [--only W7 W7c ...]. ``--only`` runs just
those workloads and writes results/<names>.md (and .png) instead of latest.*,
without the cold-start and memory sections. Each thread setting runs in its own
process (thread counts must be fixed before numpy loads its BLAS); inside it,
the frameworks of a workload are timed round-robin, each round split into
chunks of a few milliseconds, and both the median chunk and the fastest are
kept: drift on a shared machine hits all frameworks alike, the median carries
the other jobs' load, the fastest chunk is the closest to a quiet machine. Every
result is checked against numpy's before it is timed. Writes
benchmarks/results/latest.md and latest.png.

"1 thread" means one CPU: that worker is pinned to a single core
(``sched_setaffinity``), because thread-count variables do not bind every
framework (JAX's runtime, with ``--xla_cpu_multi_thread_eigen=false``, still
spreads one call's work over its other threads, measured at 1.9 CPU-seconds per
second on W3). The all-cores worker is not pinned.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def thread_env(threads: int) -> dict:
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "ARIGNOTE_NUM_THREADS"):
        env[name] = str(threads)
    env["XLA_FLAGS"] = f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


# ------------------------------------------------------------------ worker side
def worker(quick: bool, only: list[str] | None) -> dict:
    import numpy as np
    sys.path.insert(0, str(HERE))
    from workloads import WORKLOADS, available
    if available("arignote"):
        from arignote import config
        # The steady state is timed: a first call that meets an empty kernel cache waits
        # for the compiler instead of running numpy's kernels meanwhile (W5 times that).
        config.native_build = "wait"
    rounds = 3 if quick else 9
    out: dict = {}
    for key, (_desc, dtypes, calls, setups, rtol) in WORKLOADS.items():
        if only and key not in only:
            continue
        for dtype in dtypes:
            runs = {}
            reference = None
            for name, setup in setups.items():
                if not available(name.split(" ")[0]):
                    continue
                check_run, check_result = setup(dtype)
                check_run()
                value = np.asarray(check_result())
                if reference is None:
                    reference = value
                elif rtol == 0:
                    np.testing.assert_array_equal(value, reference, err_msg=f"{key} {name}")
                else:
                    np.testing.assert_allclose(value, reference, rtol=rtol, atol=rtol,
                                               err_msg=f"{key} {name} differs from numpy")
                run, _ = setup(dtype)
                run()
                runs[name] = run
            n = max(1, calls // (10 if quick else 1))
            chunk = max(1, n // 30)  # a few milliseconds: often between other jobs' time slices
            samples = {name: [] for name in runs}
            for _ in range(rounds):
                for name, run in runs.items():
                    for _ in range(max(1, n // chunk)):
                        start = time.perf_counter()
                        for _ in range(chunk):
                            run()
                        samples[name].append((time.perf_counter() - start) / chunk)
            out[f"{key} {dtype}"] = {name: {"median": statistics.median(v), "fastest": min(v)}
                                     for name, v in samples.items()}
    return out


def cold_compile(framework: str) -> dict:
    """W5: import time and cold compile of the W4 step, in this fresh process."""
    start = time.perf_counter()
    if framework == "arignote":
        import arignote  # noqa: F401
    elif framework == "pytensor":
        import pytensor  # noqa: F401
    else:
        import jax  # noqa: F401
    imported = time.perf_counter()
    sys.path.insert(0, str(HERE))
    import workloads
    workloads._w4_data("float32")  # the data, drawn before the clock starts
    begin = time.perf_counter()
    run, _ = getattr(workloads, f"w4_{framework}")("float32")
    run()  # JAX compiles on the first call
    done = time.perf_counter()
    result = {"import": imported - start, "compile": done - begin}
    if framework == "arignote":
        # The first call may run numpy's kernels while the native ones build in the
        # background: also the time from function() until they are in place.
        from arignote.compile import Function
        step = next(c.cell_contents for c in run.__closure__ if isinstance(c.cell_contents, Function))
        result["status"] = step.wait_native()
        result["native"] = time.perf_counter() - begin
    return result


def peak_memory(framework: str, workload: str) -> float:
    """Peak bytes numpy allocates during one call, after a warm-up (tracemalloc)."""
    import tracemalloc
    sys.path.insert(0, str(HERE))
    import workloads
    run, _ = getattr(workloads, f"{workload.lower()}_{framework}")("float32")
    run()
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


# ------------------------------------------------------------------ driver side
def one_cpu() -> None:
    """Pin this (child) process to one of the CPUs it may run on: the honest "1 thread"."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def spawn(args: list[str], threads: int, compiledir: Path | None = None, bytecode: bool = False,
          pin: bool = False) -> dict:
    env = thread_env(threads)
    if compiledir is not None:
        env["ARIGNOTE_FLAGS"] = f"compiledir={compiledir}"
    if bytecode:  # let this worker write the modules' .pyc files, whatever the caller said
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          env=env, timeout=3600, preexec_fn=one_cpu if pin else None)
    if done.returncode != 0:
        raise SystemExit(f"benchmark worker failed ({' '.join(args)}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def versions() -> dict:
    code = ("import json, importlib.metadata as m, numpy as np\n"
            "out = {}\n"
            "for p in ('arignote', 'numpy', 'scipy', 'pytensor', 'jax', 'jaxlib', 'numba', 'torch'):\n"
            "    try: out[p] = m.version(p)\n"
            "    except m.PackageNotFoundError: pass\n"
            "blas = np.show_config(mode='dicts')['Build Dependencies']['blas']\n"
            "out['BLAS'] = blas.get('name', '?') + ' ' + blas.get('version', '')\n"
            "print(json.dumps(out))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=thread_env(1))
    return json.loads(done.stdout)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer rounds and calls (smoke test)")
    parser.add_argument("--only", nargs="+", metavar="WORKLOAD", help="run only these workloads")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cold", help=argparse.SUPPRESS)
    parser.add_argument("--memory", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.quick, args.only)))
        return
    if args.cold:
        print(json.dumps(cold_compile(args.cold)))
        return
    if args.memory:
        print(json.dumps(peak_memory(*args.memory)))
        return

    sys.path.insert(0, str(HERE))
    from workloads import WORKLOADS, available
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()[0]
    unknown = set(args.only or ()) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}; there are {sorted(WORKLOADS)}")
    quick = ["--quick"] if args.quick else []
    only = ["--only", *args.only] if args.only else []
    timings = {threads: spawn(["--worker", *quick, *only], threads, pin=threads == 1)
               for threads in sorted({1, cores})}
    load = (load_before, os.getloadavg()[0])
    if args.only:
        report(timings, {}, {}, WORKLOADS, cores, load, stem="-".join(args.only))
        return
    frameworks = [f for f in ("arignote", "pytensor", "jax") if available(f)]
    # Cold start with an empty kernel cache, then warm (a new process each time).
    with tempfile.TemporaryDirectory(prefix="arignote-bench-cache-") as tmp:
        empty = Path(tmp)
        # Byte-compiled modules, as an installed package has them (pip compiles them at
        # install): one discarded run writes them, even where PYTHONDONTWRITEBYTECODE is set.
        spawn(["--cold", "arignote"], 1, compiledir=empty / "bytecode", bytecode=True)
        cold_native = [spawn(["--cold", "arignote"], 1, compiledir=empty / str(k))
                       for k in range(3)]
        warm_native = [spawn(["--cold", "arignote"], 1, compiledir=empty / "0") for _ in range(3)]
    cold = {f: [spawn(["--cold", f], 1) for _ in range(1 if args.quick else 3)] for f in frameworks}
    memory = {(f, w): spawn(["--memory", f, w], 1) for w in ("W3", "W4")
              for f in ("numpy", "arignote", "pytensor") if available(f)}
    report(timings, cold, memory, WORKLOADS, cores, load, cold_native, warm_native)


def report(timings: dict, cold: dict, memory: dict, workloads: dict, cores: int,
           load: tuple[float, float], cold_native: list = (), warm_native: list = (),
           stem: str = "latest") -> None:
    RESULTS.mkdir(exist_ok=True)
    info = versions()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# Benchmarks ({now})", "",
             f"Machine: {cpu_model()}, {cores} cores, {platform.system()} {platform.machine()}; "
             + ", ".join(f"{k} {v}" for k, v in info.items()), "",
             f"Load average (1 min) {load[0]:.1f} when the timings started, {load[1]:.1f} when they "
             "ended: other processes on the machine slow every framework, and multi-threaded ones most.",
             "",
             "Seconds per unit of work, the median chunk of calls and the fastest; ratio = time / "
             "numpy's time in the same run (lower is better).", ""]
    chart = []
    for threads, table in timings.items():
        lines += [f"## {threads} thread{'s' * (threads > 1)}{' (pinned to one CPU)' * (threads == 1)}", "",
                  "| workload | framework | median | ratio | fastest | ratio |", "|---|---|---|---|---|---|"]
        for key, row in table.items():
            base = row["numpy"]
            desc = workloads[key.split()[0]][0]
            for name, t in row.items():
                lines.append(f"| {key}: {desc} | {name} | {_fmt(t['median'])} | "
                             f"{t['median'] / base['median']:.2f} | {_fmt(t['fastest'])} | "
                             f"{t['fastest'] / base['fastest']:.2f} |")
                if name != "numpy":
                    chart.append((f"{key} {threads}t", name, t["median"] / base["median"]))
        lines.append("")
    if cold:
        lines += ["## W5: cold start (fresh process, W4 step)", "", "| framework | import | build + compile |",
                  "|---|---|---|"]
        for framework, runs in cold.items():
            lines.append(f"| {framework} | {_fmt(statistics.median(r['import'] for r in runs))} | "
                         f"{_fmt(statistics.median(r['compile'] for r in runs))} |")
    if cold_native:
        def runs(results: list, key: str) -> str:
            return (f"{_fmt(statistics.median(r[key] for r in results))} "
                    f"(runs: {', '.join(_fmt(r[key]) for r in results)})")
        lines += ["", "arignote's W4 step (function() and its first call; the native kernels are "
                  "built in the background, numpy's run until they are in place):",
                  f"native kernel cache empty: {runs(cold_native, 'compile')}, native kernels in "
                  f"place {runs(cold_native, 'native')} after function(); warm cache, new process: "
                  f"{runs(warm_native, 'compile')}, in place {runs(warm_native, 'native')} "
                  f"({', '.join(sorted({r['status'] for r in cold_native + warm_native}))})"]
    if memory:
        lines += ["", "## Peak memory during one call (numpy allocations, tracemalloc)", "",
                  "| workload | framework | peak |", "|---|---|---|"]
        for (framework, workload), peak in memory.items():
            lines.append(f"| {workload} | {framework} | {peak / 2**20:.1f} MiB |")
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    _chart(chart, RESULTS / f"{stem}.png")


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def _chart(rows: list, path: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart")
        return
    groups = sorted({g for g, _, _ in rows}, key=lambda g: (g.split()[0], g))
    names = sorted({n for _, n, _ in rows})
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        xs = [i + k * width for i, g in enumerate(groups)]
        ys = [next((r for g2, n, r in rows if g2 == g and n == name), 0) for g in groups]
        ax.bar(xs, ys, width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups, rotation=45, ha="right")
    ax.set_ylabel("time / numpy time (lower is better)")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
