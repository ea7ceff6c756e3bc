"""The system C compiler: probed once, then used to build shared objects of kernels.

The probe asks ``config.cxx`` for its identity and version, tries OpenMP, finds
which functions of the vector math library (glibc's libmvec on x86_64 and
aarch64) can be declared SIMD-callable, and fixes the target flags. Its result
is cached on disk under a hash of the compiler's path, size and mtime and the
CPU's features, so a new process runs no compiler until it needs a kernel (nor
imports ``subprocess`` and ``tempfile``: they are imported where a compiler runs);
:func:`known` says what is known without running one.

The flags keep numpy's results: no ``-ffast-math`` (NaN, inf, -0.0 and
overflow behave as IEEE says), ``-ffp-contract=off`` (no fused multiply-adds
that numpy does not do), ``-fwrapv`` (integers wrap as numpy's do). Only
``-fno-math-errno`` and ``-fno-trapping-math`` are relaxed, which change no
result, only errno and the floating-point exception flags (nobody reads them);
the second lets gcc compute both sides of a select on floats and blend them,
which is what vectorises ``x > 10 ? 10 : x`` in a loop.
"""
from __future__ import annotations

import ctypes
import functools
import json
import os
import platform
import shutil
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import NamedTuple

from arignote.backends.kernels import cache
from arignote.config import config

FIX = "install a C compiler (e.g. `apt install gcc`) and set config.cxx to it (cxx=gcc)"

# The C names (float64; float32 adds "f") of the math functions the scalar table's
# expressions call that a vector library may provide, by arity.
VECTOR_MATH = {"exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1,
               "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1,
               "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1, "erf": 1, "erfc": 1,
               "pow": 2, "atan2": 2}
# glibc's vector ABI names: _ZGV<isa><mask><lanes><args>_<name>; every ISA the
# simd attribute clones for on that machine must be there.
_ISAS = {"x86_64": [("b", 2), ("c", 4), ("d", 4), ("e", 8)], "aarch64": [("n", 2)]}

# -O2: loops marked `omp simd` vectorise as at -O3, and a kernel builds in ~70% of the time.
BASE_FLAGS = ("-O2", "-fPIC", "-shared", "-fno-math-errno", "-fno-trapping-math",
              "-ffp-contract=off", "-fwrapv", "-fno-semantic-interposition")
# gcc's (the probe drops them where the compiler refuses them): no second, narrower vector
# loop for each loop's last few elements (they run scalar). A module of the 60 int16
# kernels of the op-table test builds in 8.0 s of CPU instead of 10.2 s. And the
# instructions scheduled before register allocation too (as gcc does not on x86), minding
# register pressure: W3's kernel (float32 tanh and exp) runs ~6% faster on Zen 3, and the
# op-table test's modules build in as much CPU time (82 s against 86 s, noise).
GCC_FLAGS = ("--param=vect-epilogues-nomask=0", "-fschedule-insns", "-fsched-pressure")


class CompileError(RuntimeError):
    """The compiler refused a kernel module (a bug in the renderer: please report it)."""


@dataclass(frozen=True)
class Toolchain:
    """A compiler that works, and how it is called."""
    path: str
    identity: str  # the first line of ``cxx --version``
    flags: tuple[str, ...]
    libs: tuple[str, ...]
    openmp: bool
    vector_library: str  # "libmvec" or "" (plain libm calls)
    vector_functions: tuple[str, ...]  # C names declared SIMD-callable
    features: str  # digest of the CPU's feature flags

    def key(self) -> str:
        """A digest of every field (memoized: the same in every process, so it may pickle)."""
        found = self.__dict__.get("_key")
        if found is None:
            # The fields as asdict() gives them (str, bool, tuples of str), without its
            # deep copies, which a new process's first call would pay for.
            found = cache.digest(json.dumps({f.name: getattr(self, f.name) for f in fields(self)},
                                            sort_keys=True))
            object.__setattr__(self, "_key", found)
        return found

    def declarations(self) -> str:
        """``simd`` declarations of the vector library's functions (float32 and float64)."""
        lines = []
        for name in self.vector_functions:
            double = name in VECTOR_MATH
            arity = VECTOR_MATH[name if double else name[:-1]]
            ctype = "double" if double else "float"
            lines.append(f'__attribute__((simd("notinbranch"))) {ctype} {name}('
                         f'{", ".join([ctype] * arity)});')
        return "\n".join(lines)


@dataclass(frozen=True)
class Unavailable:
    """Why there is no working compiler, and the fix."""
    reason: str
    fix: str = FIX


_lock = threading.Lock()
_probed: dict[tuple, Toolchain | Unavailable] = {}


class Settings(NamedTuple):
    """The flags a build reads, read once when a call needs the kernels: a build in the
    background must not see the flags changed after that."""
    cxx: str
    openmp: bool
    compiledir: str
    openmp_elemwise_minsize: int


def settings() -> Settings:
    return Settings(config.own("cxx"), config.openmp, config.compiledir, config.openmp_elemwise_minsize)


def toolchain(flags: Settings | None = None) -> Toolchain | Unavailable:
    """The probed compiler for ``cxx`` and ``openmp`` (default: ``config``'s; memoized, not
    per ``compiledir``, which holds the probe's disk entry but does not change it)."""
    flags = flags or settings()
    wanted = (flags.cxx, flags.openmp)
    found = _probed.get(wanted)
    if found is None:
        with _lock:
            found = _probed.get(wanted)
            if found is None:
                found = _probed[wanted] = _probe(flags)
    return found


def known(flags: Settings | None = None) -> Toolchain | Unavailable | None:
    """What :func:`toolchain` would say, if that is known without running the compiler
    (memoized, on disk, or no compiler to run); else None."""
    flags = flags or settings()
    wanted = (flags.cxx, flags.openmp)
    found = _probed.get(wanted)
    if found is None:
        found = _without_running(flags)
        if found is not None:
            with _lock:
                found = _probed.setdefault(wanted, found)
    return found


def _without_running(flags: Settings) -> Toolchain | Unavailable | None:
    """The probe's answer from the disk cache, or for a compiler that is not there; None
    when only running it will tell."""
    cxx = flags.cxx
    if not cxx.strip():
        return Unavailable("config.cxx is empty, so native kernels are off",
                           "set cxx to a C compiler (e.g. cxx=gcc) to turn them on")
    path = shutil.which(cxx)
    if path is None:
        return Unavailable(f"config.cxx={cxx!r} is not an executable on PATH")
    try:
        return Toolchain(**{k: tuple(v) if isinstance(v, list) else v
                            for k, v in json.loads(_entry(path, flags).read_text()).items()})
    except (OSError, ValueError, TypeError):
        return None


def _entry(path: str, flags: Settings) -> Path:
    """The probe's disk entry, keyed by the compiler's file, the CPU and what the probe
    itself tries (flags, source)."""
    stat = os.stat(path)
    key = cache.digest(path, str(stat.st_size), str(stat.st_mtime_ns), _features(), str(flags.openmp),
                       json.dumps([BASE_FLAGS, GCC_FLAGS, VECTOR_MATH]), _PROBE_SOURCE)
    return cache.directory(flags.compiledir) / f"probe-{key[:32]}.json"


def _features() -> str:
    return cache.digest(_cpu_features(), platform.machine())


def _probe(flags: Settings) -> Toolchain | Unavailable:
    found = _without_running(flags)
    if found is not None:
        return found
    cxx, openmp = flags.cxx, flags.openmp
    path = shutil.which(cxx) or cxx
    import subprocess
    try:
        identity = subprocess.run([path, "--version"], capture_output=True, text=True,
                                  timeout=60).stdout.splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError, IndexError) as err:
        return Unavailable(f"config.cxx={cxx!r} does not run ({err})")
    functions = _vector_functions()
    attempts = [(openmp, functions), (openmp, ()), (False, ())] if openmp else [(False, functions), (False, ())]
    error = ""
    targets = (_target_flags() + list(GCC_FLAGS), _target_flags(), [])
    for target, (use_openmp, names) in [(t, a) for t in targets for a in attempts]:
        options = [*BASE_FLAGS, *target, "-fopenmp" if use_openmp else "-fopenmp-simd"]
        chain = Toolchain(path, identity, tuple(options),
                          ("-lmvec", "-lm") if names else ("-lm",), use_openmp,
                          "libmvec" if names else "", tuple(names), _features())
        error = _try(chain)
        if not error:
            cache.write_atomic(_entry(path, flags), json.dumps(asdict(chain)).encode())
            return chain
    return Unavailable(f"{identity or cxx} cannot build a shared object here: {error.strip()[-400:]}")


@functools.cache
def _cpu_features() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _target_flags() -> list[str]:
    """``-march=native`` (the probe drops it where the compiler refuses it), with 512-bit
    vectors on AVX-512."""
    flags = ["-march=native"]
    if "avx512f" in _cpu_features().split():
        flags.append("-mprefer-vector-width=512")
    return flags


def _vector_functions() -> list[str]:
    """The math functions whose every SIMD variant the vector library exports."""
    import ctypes.util
    isas = _ISAS.get(platform.machine())
    name = ctypes.util.find_library("mvec") if isas and platform.system() == "Linux" else None
    if not name:
        return []
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return []
    found = []
    for base, arity in VECTOR_MATH.items():
        for cname, lanes_per in ((base + "f", 2), (base, 1)):
            if all(hasattr(lib, f"_ZGV{isa}N{lanes * lanes_per}{'v' * arity}_{cname}")
                   for isa, lanes in isas):
                found.append(cname)
    return found


_PROBE_SOURCE = """#include <math.h>
{declarations}
#ifdef _OPENMP
#include <omp.h>
#endif
int arignote_probe(float *out, const float *x, int n) {{
  #pragma omp parallel for simd
  for (int i = 0; i < n; i++) out[i] = expf(x[i]) + tanhf(x[i]);
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}}
"""


def _try(chain: Toolchain) -> str:
    """'' when ``chain`` builds and loads a small vectorised, threaded module; else the error."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="arignote-probe-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(_PROBE_SOURCE.format(declarations=chain.declarations()))
        out = Path(tmp) / "probe.so"
        error = _run(chain.path, [*chain.flags, "-o", str(out), str(src), *chain.libs])
        if error:
            return error
        try:
            lib = ctypes.CDLL(str(out))
            values = (ctypes.c_float * 4)(0, 1, -1, 2)
            result = (ctypes.c_float * 4)()
            lib.arignote_probe(result, values, 4)
        except OSError as err:
            return str(err)
        if abs(result[1] - 3.4798759) > 1e-5:
            return f"the probe computed exp(1) + tanh(1) = {result[1]}"
    return ""


def _run(path: str, args: list[str]) -> str:
    """'' on success, else the compiler's error output."""
    import subprocess
    try:
        done = subprocess.run([path, *args], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as err:
        return str(err)
    return "" if done.returncode == 0 else (done.stderr or done.stdout or f"exit {done.returncode}")


def build(chain: Toolchain, source: str, target: Path) -> None:
    """Compile ``source`` into the shared object ``target`` (written atomically)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="arignote-build-") as tmp:
        src = Path(tmp) / "module.c"
        src.write_text(source)
        out = Path(tmp) / "module.so"
        error = _run(chain.path, [*chain.flags, "-o", str(out), str(src), *chain.libs])
        if error:
            raise CompileError(f"{chain.identity} failed on a generated kernel module:\n{error[-3000:]}")
        cache.write_atomic(target, out.read_bytes())
