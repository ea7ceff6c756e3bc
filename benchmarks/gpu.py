"""GPU benchmarks: launch overhead, reductions, kernel builds and a training step on one device.

Usage: python benchmarks/gpu.py [--device opencl0:0] [--quick] [--baseline FILE |
--baseline-src DIR] [--save FILE]. Each figure is the median of several rounds, timed
with the device synchronised before the clock stops. The peers run in the same process
and the same rounds: pyopencl's own typed ``ElementwiseKernel`` (CuPy's on CUDA) for the
launch, numpy for the reductions. G4 times a 12-kernel graph in fresh processes: cold
(arignote's, PoCL's and pyopencl's caches empty: a new XDG_CACHE_HOME and
POCL_CACHE_DIR); then a second process on the caches the cold run filled ("warm from
source": on PoCL it rebuilds the program from source through PoCL's cache and, a second
build, starts the background process that makes the program's binary,
backends/gpu/binary_producer.py); then, once that producer has ended (its lock gone; the
wait is shown), "warm": a new process on those caches, what a user running the same
script again meets from then on (three such processes per round). Each times opening the
device (pyopencl's import, the context), ``function()`` (and the kernel builds in it)
and the first call (where PoCL loads or compiles each kernel's work-group function), the
issue's figure being ``function()`` + first call; the input data is made before the
clocks start (numpy's first RandomState costs ~12 ms). G1-G3 and G5 run with the
producer off, so none runs behind their timings. G4's peer, on OpenCL: pyopencl alone
building the same kernels as one program and launching each as our first call did, in a
fresh process with caches of its own (the experiment issue 14 reported). Every figure is
then the median over three worker processes. ``--baseline-src`` measures another
checkout's ``src/`` in the same run, its workers taking turns with ours so the load of a
shared machine drifts over both alike, and shows it as a column (``--baseline``: the
figures an earlier ``--save`` wrote; those of main before issue 14 are in
benchmarks/results/gpu-baseline.json). Writes benchmarks/results/gpu-latest.md, with the
machine's load average before and after.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _median_call(run, sync, calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            run()
        sync()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def _peer_exp(ctx, x_host):
    """pyopencl's (or CuPy's) own typed elementwise kernel: ``out = exp(x)``."""
    device = ctx.device
    if device.name.startswith("opencl"):
        import pyopencl.array as cla
        from pyopencl.elementwise import ElementwiseKernel
        knl = ElementwiseKernel(device.context, "float *out, const float *x", "out[i] = exp(x[i])")
        x = cla.to_device(device.queue, x_host)
        out = cla.empty_like(x)
        return (lambda: knl(out, x)), (lambda: out.get())
    import cupy
    knl = cupy.ElementwiseKernel("float32 x", "float32 out", "out = exp(x)")
    x = cupy.asarray(x_host)
    out = cupy.empty_like(x)
    return (lambda: knl(x, out)), (lambda: cupy.asnumpy(out))


def timings(device: str, quick: bool) -> dict:
    from arignote import Out, config, function, shared, tensor as T
    from arignote.backends.gpu import get_context
    rounds = 3 if quick else 9
    results: dict = {}
    # No PoCL binary producer behind these timings (a tree before it has no such flag).
    quiet = {"opencl.background_binaries": False} if hasattr(config, "opencl") else {}
    with config.change_flags(device=device, floatX="float32", force_device=True, **quiet):
        ctx = get_context(None)
        sync = ctx.device.synchronize
        results["device"] = f"{ctx.device.name}: {ctx.device.description}"
        # G1: launch overhead.
        x10 = np.linspace(-1, 1, 10).astype("float32")
        s = shared(x10)
        f = function([], Out(T.exp(s).transfer(None), borrow=True))
        peer, peer_result = _peer_exp(ctx, x10)
        f(), peer()
        np.testing.assert_allclose(f().get(), np.exp(x10), rtol=1e-6)
        np.testing.assert_allclose(peer_result(), np.exp(x10), rtol=1e-6)
        calls = 300 if quick else 3000
        ours, theirs = [], []
        for _ in range(rounds):  # round-robin, so drift on a shared machine hits both alike
            ours.append(_median_call(f, sync, calls, 1))
            theirs.append(_median_call(peer, sync, calls, 1))
        results["G1 exp, 10 elements: arignote"] = statistics.median(ours)
        results["G1 exp, 10 elements: peer typed ElementwiseKernel"] = statistics.median(theirs)
        # G2, G3: reductions of a 2000x2000 float32 matrix on the device.
        big = np.random.RandomState(0).rand(2000, 2000).astype("float32")
        m = shared(big)
        for key, expr, reference in (("G2 full sum", T.sum(m), lambda: big.sum()),
                                     ("G3 sum over axis 1", T.sum(m, axis=1), lambda: big.sum(axis=1))):
            g = function([], Out(expr.transfer(None), borrow=True))
            np.testing.assert_allclose(np.asarray(g()), reference(), rtol=1e-3)
            results[f"{key}, 2000x2000: arignote"] = _median_call(g, sync, 3 if quick else 20, rounds)
            results[f"{key}, 2000x2000: numpy"] = _median_call(reference, lambda: None,
                                                               3 if quick else 20, rounds)
        # G5: one SGD step of a 784-500-10 MLP, batch 128, data kept on the device.
        step = _mlp_step(shared, function, T)
        step(0)
        results["G5 MLP step 784-500-10, batch 128: arignote"] = _median_call(
            lambda: step(1), sync, 3 if quick else 5, rounds)
    return results


def _mlp_step(shared, function, T):
    import arignote
    rng = np.random.RandomState(4)
    n, batch = 1024, 128
    data = shared(rng.rand(n, 784).astype("float32"))
    labels = T.cast(shared(rng.randint(0, 10, n).astype("float32")), "int32")
    W1 = shared(rng.uniform(-0.05, 0.05, (784, 500)).astype("float32"))
    b1 = shared(np.zeros(500, "float32"))
    W2 = shared(np.zeros((500, 10), "float32"))
    b2 = shared(np.zeros(10, "float32"))
    i = T.lscalar("i")
    x, y = T.matrix("x"), T.ivector("y")
    p = T.nnet.softmax(T.dot(T.tanh(T.dot(x, W1) + b1), W2) + b2)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y]) + 1e-4 * ((W1 ** 2).sum() + (W2 ** 2).sum())
    params = [W1, b1, W2, b2]
    grads = arignote.grad(cost, params)
    return function([i], cost, updates=[(q, q - 0.01 * g) for q, g in zip(params, grads)],
                    givens={x: data[i * batch:(i + 1) * batch], y: labels[i * batch:(i + 1) * batch]})


G4_GRAPH = "exp, sin, sums and max over axes, argmax, softmax, logsoftmax, dot, fused elementwise"


def twelve_kernels(device: str, dump: str | None = None) -> dict:
    """Open the device, compile, and call once a graph with 12 kernels, in this fresh process;
    ``dump``: where to write its program and launches for :func:`peer_program`."""
    data = np.random.RandomState(1).rand(2, 64, 64).astype("float32")
    start = time.perf_counter()
    from arignote import config, function, tensor as T
    from arignote.backends.gpu import get_context
    from arignote.compile.profiling import kernel_builds
    imported = time.perf_counter()
    with config.change_flags(device=device, floatX="float32", force_device=True):
        device_obj = get_context(None).device
        programs = _record_programs(device_obj) if dump else None
        opened = time.perf_counter()
        x, y = T.matrix("x"), T.matrix("y")
        outputs = [T.exp(x), T.sin(y) * 2, x.sum(axis=0), x.sum(axis=1), y.max(axis=1),
                   T.argmax(x, axis=1), T.nnet.softmax(y), T.nnet.logsoftmax(x), T.dot(x, y),
                   T.sqrt(abs(x)) + 1, y.prod(axis=0), T.maximum(x, y) - T.log1p(abs(y))]
        f = function([x, y], outputs)
        compiled = time.perf_counter()
        f(data[0], data[1])
        done = time.perf_counter()
        if dump:  # after the clock: the launches of a second call, for the peer to replay
            Path(dump).write_text(json.dumps({"programs": programs,
                                              "launches": _record_launches(device_obj, f, data)}))
    seconds, count = kernel_builds()
    return {"import": imported - start, "open device": opened - imported,
            "function()": compiled - opened, "of which kernel builds": seconds,
            "first call": done - compiled, "function() + first call": done - opened,
            "build + first call": done - imported, "kernels": count}


def _record_programs(device) -> list:
    """The programs ``device`` builds from now on: (source, options, {entry: arg dtypes})."""
    from arignote.backends.kernels import program
    found = []
    build = device._build_program

    def recording(group, options):
        found.append((program.join(device.dialect, group), list(options),
                      {program.entry_name(k): program.arg_dtypes(device.dialect, k) for k in group}))
        return build(group, options)
    device._build_program = recording
    return found


def _record_launches(device, f, data) -> list:
    """Each launch of a call of ``f``: (entry, global size, local size, arguments), a buffer
    as its size in bytes."""
    import pyopencl as cl
    found = []
    launch = device.launch

    def recording(kernel, global_size, local_size, args, token=None):
        found.append((kernel.function_name, global_size, local_size,
                      [["buffer", a.size] if isinstance(a, cl.Buffer) else ["value", a.item() if
                       hasattr(a, "item") else a] for a in args]))
        return launch(kernel, global_size, local_size, args, token)
    device.launch = recording
    f(data[0], data[1])
    del device.launch
    return found


def peer_program(dump: str, device_name: str) -> dict:
    """The issue's experiment in this fresh process: pyopencl alone builds the same kernels
    as one program and launches each as arignote's first call did (on fresh buffers)."""
    import pyopencl as cl
    recorded = json.loads(Path(dump).read_text())
    [(source, options, dtypes)] = recorded["programs"]
    platform, index = (int(n) for n in device_name.removeprefix("opencl").split(":"))
    device = cl.get_platforms()[platform].get_devices()[index]
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    buffers = [[cl.Buffer(context, cl.mem_flags.READ_WRITE, size) for kind, size in args if kind == "buffer"]
               for _, _, _, args in recorded["launches"]]
    start = time.perf_counter()
    built = cl.Program(context, source).build(options=options)
    kernels = {k.function_name: k for k in built.all_kernels()}
    for name, k in kernels.items():
        k.set_scalar_arg_dtypes([None if t is None else np.dtype(t) for t in dtypes[name]])
    compiled = time.perf_counter()
    for (name, global_size, local_size, args), own in zip(recorded["launches"], buffers):
        mine = iter(own)
        kernels[name](queue, global_size, local_size,
                      *[next(mine) if kind == "buffer" else value for kind, value in args])
    queue.finish()
    done = time.perf_counter()
    return {"build": compiled - start, "build + first launches": done - start}


def spawn(args: list[str], env: dict) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env,
                          timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"benchmark worker failed ({' '.join(args)}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _env(src: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src) + os.pathsep + env.get("PYTHONPATH", "")
    return env


G4_OURS = ("open device", "function()", "of which kernel builds", "first call",
           "function() + first call", "build + first call")
G4_PEER = "G4 peer: pyopencl, the same kernels as one program"


def _caches(env: dict, tmp: str) -> dict:
    """Every cache empty: ours (compiledir), PoCL's and pyopencl's all live under
    XDG_CACHE_HOME, PoCL's moved there explicitly in case POCL_CACHE_DIR is set."""
    return dict(env, XDG_CACHE_HOME=tmp, POCL_CACHE_DIR=os.path.join(tmp, "pocl"))


G4_RUNS = ("cold", "warm from source", "warm")
WARM_RUNS = 3  # warm processes per round (each a new one on the same caches)


def _producer_done(cache: Path, limit: float = 600.0) -> float:
    """Seconds until no binary producer holds a lock in ``cache`` (our compiledir)."""
    start = time.perf_counter()
    while list(cache.glob("gpu-*.lock")) and time.perf_counter() - start < limit:
        time.sleep(0.05)
    return time.perf_counter() - start


def cold_and_warm(device: str, rounds: int, src: Path, peer: bool) -> dict:
    """The 12-kernel graph in new processes with every cache empty (cold), then on the caches
    the cold run filled (warm from source: the second build, which starts the binary
    producer on PoCL), then, the producer done, warm; ``peer``: pyopencl building the same
    kernels alike, its caches its own."""
    env = _env(src)
    runs: dict[str, list[dict]] = {label: [] for label in (*G4_RUNS, "peer cold", "peer warm")}
    waits, stored = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as theirs:
            dump = os.path.join(theirs, "program.json")
            runs["cold"].append(spawn(["--twelve", device] + ["--dump", dump] * peer, _caches(env, ours)))
            runs["warm from source"].append(spawn(["--twelve", device], _caches(env, ours)))
            waits.append(_producer_done(Path(ours, "arignote")))
            stored.append(len(list(Path(ours, "arignote").glob("gpu-*.bin"))))
            runs["warm"] += [spawn(["--twelve", device], _caches(env, ours)) for _ in range(WARM_RUNS)]
            if peer:
                runs["peer cold"].append(spawn(["--peer", dump, device], _caches(env, theirs)))
                runs["peer warm"].append(spawn(["--peer", dump, device], _caches(env, theirs)))
    out = {}
    for label in G4_RUNS:
        for key in G4_OURS:
            out[f"G4 12-kernel graph, {label}: {key}"] = statistics.median(r[key] for r in runs[label])
    out["G4 wait for the binary producer after the second process"] = statistics.median(waits)
    out["G4 program binaries stored before the warm run"] = min(stored)
    for label in ("cold", "warm"):
        for key in ("build", "build + first launches"):
            if runs[f"peer {label}"]:
                out[f"{G4_PEER}, {label}: {key}"] = statistics.median(r[key] for r in runs[f"peer {label}"])
    out["G4 kernels built"] = runs["cold"][0]["kernels"]
    return out


def _fmt(value) -> str:
    if not isinstance(value, float):
        return str(value)
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.2f} µs"


def report(results: dict, baseline: dict | None, load: str, rounds: int) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# GPU benchmarks ({now})", "", f"Device: {results['device']}", "",
             f"Machine load (load average): {load}.", "",
             f"Median per call (G4: per fresh process), then the median of {rounds} worker "
             "processes per tree, the trees taking turns. `baseline`: main before issue 14 "
             "(`--baseline-src`), or the figures an earlier `--save` wrote (`--baseline`).", "",
             "G4, each in a new process: cold (every cache empty), warm from source (the second "
             "process, on the caches cold filled; on PoCL it starts the background producer of the "
             "program's binary), then, once the producer has ended (the wait is shown), warm: what "
             "a user running the same script again meets from then on. Its figure: function() + "
             "first call.", ""]
    header = "| figure | now |" + (" baseline | now / baseline |" if baseline else "")
    lines += [header, "|---|---|" + ("---|---|" if baseline else "")]
    for key, value in results.items():
        if key == "device":
            continue
        row = f"| {key} | {_fmt(value)} |"
        if baseline:
            old = baseline.get(key)
            ratio = f"{value / old:.2f}" if isinstance(old, float) and isinstance(value, float) else ""
            row += f" {_fmt(old) if old is not None else ''} | {ratio} |"
        lines.append(row)
    g1 = results["G1 exp, 10 elements: arignote"] / results["G1 exp, 10 elements: peer typed ElementwiseKernel"]
    lines += ["", f"G1 arignote / typed ElementwiseKernel: {g1:.2f}"]
    if baseline:
        for key in ("G2 full sum, 2000x2000: arignote", "G3 sum over axis 1, 2000x2000: arignote"):
            if key in baseline:
                lines.append(f"{key.split(':')[0]}: {baseline[key] / results[key]:.1f}x faster than the baseline")
        # Each tree against the peer timed in its own process: the load a worker met cancels out.
        lines += ["", "Against the peer of the same process (arignote / peer; a shared machine's load "
                  "cancels out):", ""]
        for figure, peer in (("G1 exp, 10 elements", "peer typed ElementwiseKernel"),
                             ("G2 full sum, 2000x2000", "numpy"), ("G3 sum over axis 1, 2000x2000", "numpy")):
            now, old = (r[f"{figure}: arignote"] / r[f"{figure}: {peer}"] for r in (results, baseline))
            lines.append(f"- {figure}: now {now:.2f}, baseline {old:.2f} ({old / now:.1f}x faster)")
    return "\n".join(lines) + "\n"


def _median_of(runs: list[dict]) -> dict:
    """Each figure's median over runs (the first run's value where it is not a time)."""
    return {key: statistics.median(r[key] for r in runs) if isinstance(value, float) else value
            for key, value in runs[0].items()}


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (1 min), {five:.1f} (5 min)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="opencl0:0")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and calls (smoke test)")
    parser.add_argument("--baseline", help="a JSON file written by --save, shown as a column")
    parser.add_argument("--baseline-src", help="another checkout's src/ directory (main before "
                        "issue 14, say), measured in this same run and shown as the baseline")
    parser.add_argument("--save", help="also write the figures to this JSON file")
    parser.add_argument("--twelve", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    parser.add_argument("--peer", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--timings", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.twelve:
        print(json.dumps(twelve_kernels(args.twelve, args.dump)))
        return
    if args.peer:
        print(json.dumps(peer_program(*args.peer)))
        return
    if args.timings:
        print(json.dumps(timings(args.timings, args.quick)))
        return
    rounds = 1 if args.quick else 3
    quick = ["--quick"] if args.quick else []
    trees = {"now": HERE.parent / "src"}
    if args.baseline_src:  # the same figures from the other tree, in this run
        trees["baseline"] = Path(args.baseline_src).resolve()
    load_before = _load()
    runs: dict[str, list[dict]] = {label: [] for label in trees}
    for _ in range(rounds):  # the trees take turns, so the machine's load drifts over both alike
        for label, src in trees.items():
            figures = spawn(["--timings", args.device, *quick], _env(src))
            figures.update(cold_and_warm(args.device, 1, src, peer=label == "now"
                                         and args.device.startswith("opencl")))
            runs[label].append(figures)
    results = _median_of(runs["now"])
    baseline = _median_of(runs["baseline"]) if args.baseline_src else None
    if args.baseline:
        baseline = json.loads(Path(args.baseline).read_text())
    if args.save:
        Path(args.save).write_text(json.dumps(results, indent=1) + "\n")
    load = f"{load_before} before, {_load()} after, on {os.cpu_count()} cores"
    text = report(results, baseline, load, rounds)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "gpu-latest.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
