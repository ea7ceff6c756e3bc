"""Global configuration, read once from ``ARIGNOTE_FLAGS`` and a config file.

Flags are typed and validated when set, so a typo in ``ARIGNOTE_FLAGS`` fails at
import with a message that lists the allowed values instead of being ignored.
Precedence, lowest first: defaults, the config file (``ARIGNOTERC`` or
``~/.arignoterc``, section ``[global]``; section ``[unittests]`` holds the
dotted flags ``unittests.*``), ``ARIGNOTE_FLAGS``, then assignments and
:meth:`Config.change_flags` at run time.

Under the ``theano`` alias (``arignote run``, ``arignote.compat.theano.install()``)
:meth:`Config.load_theano` also reads ``THEANO_FLAGS`` and ``.theanorc``
through ``THEANO_FLAG_MAP`` (Theano's name -> ours, or None where the flag
does not apply here). Ranks, lowest first: defaults, ``.theanorc``, the
arignote config file, ``THEANO_FLAGS``, ``ARIGNOTE_FLAGS``, run time; so
ARIGNOTE_FLAGS wins where both set a flag.
"""
from __future__ import annotations

import configparser
import contextlib
import difflib
import os
import re
import shutil
import warnings
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterable, Iterator, Mapping


@dataclass(frozen=True)
class Flag:
    """One flag. ``default`` may be a callable, called when the flag is first read (when nothing
    set it), as Theano's callable defaults were; ``fixed`` flags take one value, then refuse
    assignment and ``change_flags`` (Theano's ``allow_override=False``)."""
    name: str
    default: Any
    doc: str
    check: Callable[[Any], Any]
    fixed: bool = False


@dataclass(frozen=True)
class _Deferred:
    """The value of a flag whose callable default has not been read yet."""
    make: Callable[[], Any]


def _choice(*allowed: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(map(repr, allowed))}")
        return value
    return check


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected True or False")


_DEVICE = re.compile(r"cpu|cuda\d*|opencl(\d+:\d+)?")


def _device(value: Any) -> str:
    text = str(value).strip()
    if not _DEVICE.fullmatch(text):
        raise ValueError("expected 'cpu', 'cuda' (first CUDA GPU), 'cudaN', 'opencl' (first "
                         "OpenCL device) or 'openclP:D' (platform P, device D; see `arignote info`)")
    return text


def _contexts(value: Any) -> str:
    """``name->device;name->device``: several GPUs, each under a name graphs can target."""
    text = str(value).strip()
    for item in filter(None, (i.strip() for i in text.split(";"))):
        name, sep, device = item.partition("->")
        if not sep or not name.strip():
            raise ValueError(f"entry {item!r} is not of the form name->device "
                             "(for example contexts=dev0->cuda0;dev1->opencl0:0)")
        _device(device)
    return text


def _optimizer(value: Any) -> str:
    text = "None" if value is None else str(value).strip()
    if text not in ("", "fast_run", "fast_compile", "merge", "None"):
        raise ValueError("expected '' (the mode's own rewrites), 'fast_run', 'fast_compile', "
                         "'merge' (merging equal nodes only) or 'None' (no rewrites)")
    return text


def _seed(value: Any) -> int | str:
    text = str(value).strip()
    if text in ("random", "None", ""):
        return "random"
    try:
        return int(text)
    except ValueError:
        raise ValueError("expected an int, or 'random' for a new seed each run") from None


def _anything(value: Any) -> Any:
    return value


def _default_cxx() -> str:
    """The system C compiler, if one is on PATH (the probe decides whether it works)."""
    return next((found for name in ("cc", "gcc", "clang") if (found := shutil.which(name))), "")


def _default_compiledir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "arignote")


def _count(value: Any) -> int:
    number = int(value)
    if number < 0:
        raise ValueError("expected a count of elements, 0 or more")
    return number


_FLAGS = [
    Flag("floatX", "float64", "dtype given to Python floats and to constructors "
         "such as tensor.vector() that take no dtype",
         _choice("float64", "float32", "float16")),
    Flag("warn_float64", "ignore", "what to do when a float64 variable is created",
         _choice("ignore", "warn", "raise", "pdb")),
    Flag("mode", "FAST_RUN", "default compilation mode of function()",
         _choice("FAST_RUN", "FAST_COMPILE", "Mode", "DebugMode", "DEBUG_MODE", "NanGuardMode")),
    Flag("optimizer", "", "rewrites of the default mode when set: fast_run, fast_compile, merge "
         "or None ('' keeps the mode's own)", _optimizer),
    Flag("optimizer_excluding", "", "rewrite names or tags, separated by ':', the default mode "
         "leaves out (as mode.excluding)", str),
    Flag("optimizer_including", "", "rewrite names or tags, separated by ':', the default mode "
         "adds (as mode.including)", str),
    Flag("optimizer_requiring", "", "tags, separated by ':', every rewrite of the default mode "
         "must carry (as mode.requiring)", str),
    Flag("device", "cpu", "where compiled functions run: cpu, cuda, cudaN, opencl or openclP:D",
         _device),
    Flag("contexts", "", "named GPU devices for several-GPU graphs: name->device;...", _contexts),
    Flag("force_device", False, "raise when the requested device cannot be used, instead of "
         "warning and running on the CPU", _boolean),
    Flag("allow_gc", False, "free intermediate buffers after each call "
         "(False keeps them for reuse, which is faster)", _boolean),
    Flag("on_unused_input", "raise", "default for function(on_unused_input=)",
         _choice("raise", "warn", "ignore")),
    Flag("profile", False, "profile every compiled function (f.profile) and print each "
         "profile at exit", _boolean),
    Flag("compute_test_value", "off", "evaluate graphs on x.tag.test_value as they are built, "
         "so a shape error points at the line that built the node: 'off', 'ignore' (skip "
         "nodes whose inputs lack test values), 'warn' or 'raise' (about such inputs)",
         _choice("off", "ignore", "warn", "raise")),
    Flag("print_test_value", False, "repr() of a variable adds its test value on a second line",
         _boolean),
    Flag("exception_verbosity", "low", "'high' adds the failing node's input graph to the note "
         "an error raised while running a node carries", _choice("low", "high")),
    Flag("unittests.rseed", 666, "seed of arignote.testing.fetch_seed ('random': a new one "
         "each run)", _seed),


    Flag("cxx", _default_cxx(), "the C compiler for native CPU kernels; empty: numpy's kernels only",
         str),
    Flag("compiledir", _default_compiledir(), "where compiled kernels are cached", str),
    Flag("opencl.background_binaries", True, "on an OpenCL device that is the CPU (PoCL): when a "
         "program is built from source a second time (in any process), a detached, low-priority "
         "process makes its binary for compiledir, which later processes load in a fraction of "
         "the time (PoCL takes seconds to give a binary, so no process waits for it); False: "
         "never, every process builds from source through PoCL's own cache", _boolean),
    Flag("openmp", True, "let native kernels run on OMP_NUM_THREADS threads (all cores by default)",
         _boolean),
    Flag("openmp_elemwise_minsize", 200000, "elements an array needs before a native kernel "
         "spreads it over threads", _count),
    Flag("native_build", "background", "when a Function first needs its native kernels and "
         "they are not cached: 'background' (numpy's kernels run until the compiler is done, "
         "then the native ones are swapped in between two calls) or 'wait' (that call waits "
         "for the compiler)", _choice("background", "wait")),
    Flag("native_min_size", 2048, "elements below which an elementwise op runs numpy's kernel "
         "instead of a native one (0: always native)", _count),
    Flag("conv.assert_shape", False, "Theano's flag: abstract_conv.assert_shape checks the "
         "shapes it is given at run time (off: it returns its input as it is); the convolution "
         "ops check their input_shape/filter_shape always", _boolean),
    # The defaults of DebugMode(), NanGuardMode() and ProfileStats.summary(), under Theano's names.
    Flag("DebugMode.patience", 10, "how many times DebugMode rewrites each graph to see that the "
         "result does not depend on chance", _count),
    Flag("DebugMode.check_c", True, "DebugMode runs the backends' thunks and compares them with "
         "perform (False: perform only)", _boolean),
    Flag("DebugMode.check_py", True, "DebugMode compares each node's result with perform's", _boolean),
    Flag("DebugMode.check_finite", True, "DebugMode refuses NaN and inf in any node's output", _boolean),
    Flag("DebugMode.check_strides", 0, "DebugMode on strides differing from perform's: 0 ignore, "
         "1 warn, 2 raise", _count),
    Flag("NanGuardMode.nan_is_error", True, "NanGuardMode's default for nan_is_error", _boolean),
    Flag("NanGuardMode.inf_is_error", True, "NanGuardMode's default for inf_is_error", _boolean),
    Flag("NanGuardMode.big_is_error", True, "NanGuardMode's default for big_is_error", _boolean),
    Flag("profiling.n_ops", 20, "rows of the per-Op tables ProfileStats.summary prints", _count),
    Flag("profiling.n_apply", 20, "rows of the per-node table ProfileStats.summary prints", _count),
    Flag("profiling.ignore_first_call", False, "profiles leave out each function's first call "
         "(its one-time work: kernel builds, first allocations)", _boolean),
    Flag("profiling.debugprint", False, "ProfileStats.summary ends with each function's "
         "debugprint, its nodes' times included", _boolean),
    Flag("profile_memory", False, "profiled functions also record the shape of each node's "
         "outputs, and their summary prints Theano's memory profile", _boolean),
    Flag("profiling.min_peak_memory", False, "the memory profile also searches the node orders "
         "for the lowest peak (exact on small graphs, bounds past a fixed number of steps)", _boolean),
    Flag("profiling.min_memory_size", 1024, "the memory profile lists no node whose outputs take "
         "fewer bytes than this", _count),
    Flag("profiling.destination", "stderr", "where the profiles printed at exit go: stderr, stdout "
         "or a file's path (appended to)", str),
    Flag("native_reduce_min_size", 0, "elements below which a reduction, softmax or log_softmax "
         "runs numpy's path instead of a native kernel (0: always native)", _count),
]

# Theano 1.0's flags under the ``theano`` alias: the flag of ours each one sets, or None
# where it has no meaning here (accepted; ``load_theano`` lists those in one notice).
# A flag of ours named here that this build lacks counts as None.
THEANO_FLAG_MAP: dict[str, str | None] = {
    **{name: name for name in ("floatX", "device", "mode", "optimizer", "warn_float64", "allow_gc",
                               "compute_test_value", "on_unused_input", "profile", "cxx",
                               "exception_verbosity", "unittests.rseed", "force_device",
                               "contexts", "openmp", "openmp_elemwise_minsize", "compiledir",
                               "conv.assert_shape", "optimizer_excluding", "optimizer_including",
                               "optimizer_requiring", "print_test_value", "DebugMode.patience", "DebugMode.check_c",
                               "DebugMode.check_py", "DebugMode.check_finite", "DebugMode.check_strides",
                               "NanGuardMode.nan_is_error", "NanGuardMode.inf_is_error",
                               "NanGuardMode.big_is_error", "profiling.n_ops", "profiling.n_apply",
                               "profiling.destination", "profiling.ignore_first_call",
                               "profiling.debugprint", "profile_memory", "profiling.min_peak_memory",
                               "profiling.min_memory_size")},
    **dict.fromkeys(("linker", "cast_policy", "int_division", "deterministic", "cycle_detection",
                     "check_input", "compute_test_value_opt", "pickle_test_value",
                     "optimizer_verbose", "on_opt_error", "on_shape_error",
                     "nocleanup", "base_compiledir", "compiledir_format",
                     "init_gpu_device", "print_active_device", "print_global_stats",
                     "assert_no_cpu_op", "unpickle_function", "reoptimize_unpickled_function",
                     "cache_optimizations", "check_stack_trace", "profile_optimizer",
                     "experimental.unpickle_gpu_on_cpu")),
}
# Whole families of Theano flags that do not apply here (GPU back ends, C compilation, ...).
THEANO_IGNORED_SECTIONS = ("lib", "gpuarray", "gpu", "gpuelemwise", "dnn", "cuda", "nvcc", "pycuda",
                           "blas", "gcc", "cmodule", "magma", "ctc", "metaopt", "optdb", "profiling",
                           "DebugMode", "NanGuardMode", "numpy", "scan", "tensor", "traceback",
                           "experimental", "vm", "compile", "conv", "warn", "mkl")
# Names whose meaning under the alias differs from our flag of that name: what they read there.
# Theano's ``cxx`` is the compiler of Ops' C code (``c_code``); arignote compiles no Op's C code
# (each Op runs its ``perform`` or one of our native kernels), so it reads '' and Theano code
# takes the paths it had without a compiler. Setting it (``THEANO_FLAGS=cxx=...``, assignment)
# still sets the compiler of our native kernels, which our code reads with ``config.own``.
THEANO_READS: dict[str, Any] = {"cxx": ""}
# What a Theano flag reads when nothing set it and no flag of ours stands for it.
THEANO_DEFAULTS: dict[str, Any] = {
    "linker": "cvm", "cast_policy": "custom", "int_division": "int", "deterministic": "default",
    "cycle_detection": "regular", "check_input": True,
    "compute_test_value": "off", "compute_test_value_opt": "off", "pickle_test_value": True,
    "profile": False, "profile_optimizer": False, "cxx": "",
    "openmp": False, "openmp_elemwise_minsize": 200000, "optimizer_verbose": False,
    "on_opt_error": "warn", "on_shape_error": "warn", "nocleanup": False,
    "traceback.limit": 8, "traceback.compile_limit": 0, "warn.ignore_bug_before": "0.9",
    "warn.round": False, "warn.subtensor_merge_bug": False, "warn.sum_div_dimshuffle_bug": False,
    "warn.sum_sum_bug": False, "warn.argmax_pushdown_bug": False, "warn.reduce_join": True,
    "warn.inc_set_subtensor1": False, "warn.identify_1pexp_bug": False,
    "warn.gpusum_01_011_0111_bug": False, "warn.vm_gc_bug": False, "warn.gpu_set_subtensor1": False,
    "warn.signal_conv2d_interface": True, "warn.inc_subtensor1_opt": True,
    "tensor.cmp_sloppy": 0, "tensor.local_elemwise_fusion": True, "scan.allow_gc": True,
    "scan.allow_output_prealloc": True, "scan.debug": False, "lib.cnmem": 0,
    "gpuarray.preallocate": 0, "dnn.enabled": "auto", "blas.ldflags": "", "vm.lazy": None,
    "experimental.unpickle_gpu_on_cpu": False, "numpy.seterr_all": "ignore",
    "unpickle_function": True, "reoptimize_unpickled_function": False,
    "DebugMode.check_preallocated_output": "", "DebugMode.warn_input_not_reused": True,
    "NanGuardMode.action": "raise", "profiling.output_line_width": 512, "cmodule.debug": False,
}


class TheanoFlagsNotice(UserWarning):
    """Theano flags were given that have no effect under arignote (one notice lists them)."""


class _Section:
    """``config.unittests``: attribute access to the dotted flags ``unittests.*``."""

    def __init__(self, config: Config, prefix: str):
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._config, f"{self._prefix}.{name}")

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._config, f"{self._prefix}.{name}", value)

    def __dir__(self) -> list[str]:
        start = self._prefix + "."
        return sorted(n[len(start):].split(".")[0] for n in self._config._flags if n.startswith(start))


_RUN_TIME = 5  # the rank of values set by assignment or change_flags


class Config:
    """Attribute access to the flags; assignment validates."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {f.name: f for f in _FLAGS})
        object.__setattr__(self, "_values", {f.name: f.default for f in _FLAGS})
        object.__setattr__(self, "_ranks", {})  # name -> rank of the source that set it
        object.__setattr__(self, "_reads", {})  # THEANO_READS while the alias is loaded
        # Values the environment gave names no flag has yet, for a flag a library registers
        # later (Theano's AddConfigVar): name -> {rank: (source, value)}.
        object.__setattr__(self, "_held", {})

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._reads[name] if name in self._reads else self._values[name]
        except KeyError:
            pass
        else:
            return self.own(name) if type(value) is _Deferred else value
        if any(flag.startswith(name + ".") for flag in self._flags):
            return _Section(self, name)
        raise AttributeError(self._unknown(name, "arignote.config"))

    def own(self, name: str) -> Any:
        """Our flag ``name``'s value, also under the alias where Theano's meaning of the name
        reads otherwise (``THEANO_READS``): what arignote's own code reads."""
        try:
            value = self._values[name]
        except KeyError:
            raise AttributeError(self._unknown(name, "arignote.config")) from None
        if type(value) is _Deferred:
            value = self._values[name] = self._validate(name, value.make(), "the default")
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        self._refuse_if_fixed(name, "assignment")
        self._values[name] = self._validate(name, value)
        self._ranks[name] = _RUN_TIME

    def __str__(self) -> str:
        return self.describe()

    def _refuse_if_fixed(self, name: str, how: str) -> None:
        flag = self._flags.get(name)
        if flag is not None and flag.fixed and type(self._values[name]) is not _Deferred:
            raise ValueError(f"{how}: flag {name} is fixed once it has a value (it was registered "
                             f"with allow_override=False); set it with THEANO_FLAGS, ARIGNOTE_FLAGS "
                             "or a config file instead")

    def register(self, flag: Flag, source: str = "Config.register") -> None:
        """Add a flag of a library's own (Theano's ``AddConfigVar``). Its value is what the
        environment (``ARIGNOTE_FLAGS``, ``THEANO_FLAGS``, the config files) gave its name, the
        highest rank winning, else its default; either is checked now, so a bad one raises
        here (``source`` names the caller in the error) and the flag stays unregistered."""
        name = flag.name
        taken = next((known for known in self._flags if name == known or known.startswith(name + ".")
                      or name.startswith(known + ".")), None)
        if taken is not None:
            what = "is already a flag" if taken == name else f"clashes with the flag {taken!r}"
            raise AttributeError(f"{source}: {name!r} {what}; a flag is registered once (pick "
                                 "another name, or read the existing one as config.<name>)")
        held = self._held.pop(name, {})
        rank = max(held, default=0)
        given, value = held.get(rank, (f"{source} (the default)", flag.default))
        self._flags[name] = flag
        try:
            self._values[name] = (_Deferred(value) if not held and callable(value)
                                  else self._validate(name, value, given))
        except (ValueError, TypeError):
            del self._flags[name]
            raise
        if held:
            self._ranks[name] = rank

    def _hold(self, source: str, name: str, value: str, rank: int) -> None:
        self._held.setdefault(name, {})[rank] = (source, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {n.split(".")[0] for n in self._flags})

    def _validate(self, name: str, value: Any, source: str = "arignote.config") -> Any:
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError(self._unknown(name, source))
        try:
            return flag.check(value)
        except ValueError as err:
            raise ValueError(f"{source}: flag {name}={value!r} is invalid: {err}") from None

    def _unknown(self, name: str, source: str) -> str:
        close = difflib.get_close_matches(name, list(self._flags), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return (f"{source}: there is no flag {name!r}; {hint}"
                f"known flags: {', '.join(sorted(self._flags))}")

    def change_flags(self, changes: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
                     **more: Any) -> contextlib.AbstractContextManager[None]:
        """Set flags for the duration of a ``with`` block (or of a decorated
        function), then restore them, also when an exception leaves the block.

        ``config.change_flags(floatX="float32")``,
        ``config.change_flags({"floatX": "float32"})`` or, as Theano took too,
        ``config.change_flags([("floatX", "float32")])``. Every value is checked
        before any flag changes.
        """
        return self._changed({**dict(changes or {}), **more})

    @contextlib.contextmanager
    def _changed(self, changes: dict[str, Any]) -> Iterator[None]:
        for name in changes:
            self._refuse_if_fixed(name, "change_flags")
        new = {name: self._validate(name, value, "change_flags") for name, value in changes.items()}
        old = {name: self._values[name] for name in new}
        self._values.update(new)
        try:
            yield
        finally:
            self._values.update(old)

    def describe(self) -> str:
        """Every flag, one a line, with its value and doc: ``print(config)``."""
        return "\n".join(f"{name} = {getattr(self, name)!r}  # {flag.doc}"
                         for name, flag in self._flags.items())

    def load(self, environ: Mapping[str, str]) -> None:
        """Apply the config file, then ``ARIGNOTE_FLAGS``, from ``environ``.

        ``ARIGNOTERC`` names the config file (several, separated by
        ``os.pathsep``, later ones winning); without it ``~/.arignoterc`` is read
        if it exists. Flags go in its ``[global]`` section, dotted ones in the
        section of their prefix (``[unittests]`` ``rseed = 3``). ``ARIGNOTE_FLAGS``
        is ``name=value`` pairs separated by commas. An unknown flag or an invalid
        value raises ValueError naming where it came from; a dotted name in a
        section no flag here has (``[mylib]``, ``mylib.depth=3``) is held for a
        library that registers it (:meth:`register`), ignored if none does.
        """
        explicit = "ARIGNOTERC" in environ
        paths = environ.get("ARIGNOTERC", os.path.expanduser("~/.arignoterc"))
        for path in filter(None, paths.split(os.pathsep)):
            if not os.path.isfile(path):
                if explicit:
                    raise ValueError(f"ARIGNOTERC names {path!r}, which is not a file: "
                                     "fix the path or unset ARIGNOTERC")
                continue
            for source, name, value in _read_ini(path):
                self._set_from(source, name, value, rank=2)
        for name, value in _pairs(environ.get("ARIGNOTE_FLAGS", ""), "ARIGNOTE_FLAGS"):
            self._set_from("ARIGNOTE_FLAGS", name, value, rank=4)

    def _set_from(self, source: str, name: str, value: str, rank: int) -> None:
        # Flag names are matched without case: floatx=... sets floatX. A dotted name in a
        # section of no flag of ours (mylib.depth) is held for a library's registration.
        canonical = next((known for known in self._flags if known.lower() == name.lower()), None)
        if canonical is None and "." in name and not any(
                known.startswith(name.rpartition(".")[0] + ".") for known in self._flags):
            self._hold(source, name, value, rank)
            return
        if canonical is None:
            raise ValueError(self._unknown(name, source))
        if self._ranks.get(canonical, 0) <= rank:
            self._values[canonical] = self._validate(canonical, value, source)
            self._ranks[canonical] = rank

    # ----------------------------------------------------------- Theano's flags
    def load_theano(self, environ: Mapping[str, str]) -> list[str]:
        """Read ``.theanorc`` and ``THEANO_FLAGS`` for code run under the ``theano`` alias.

        ``THEANORC`` names the files (``os.pathsep``-separated), else
        ``~/.theanorc`` and ``~/.theanorc.txt`` are read; ``[global]`` holds plain
        flags, ``[section]`` the flags ``section.*``. Each Theano flag sets the
        flag of ours ``THEANO_FLAG_MAP`` names, unless a source of higher rank
        (``ARIGNOTE_FLAGS``, or the arignote config file for ``.theanorc``) set
        it. A Theano flag without meaning here is accepted, readable as
        ``config.<name>``, and listed with any name Theano did not have in one
        :class:`TheanoFlagsNotice` (such a name is held for a library's
        :meth:`register`, as Theano's ``THEANO_FLAGS_DICT`` held it for
        ``AddConfigVar``); ``device=gpu``/``gpuN`` (Theano's old CUDA back end) is
        refused. Returns the names ignored.
        """
        for name, default in THEANO_DEFAULTS.items():
            if name not in self._flags:
                self._add_theano_flag(name, default)
        self._reads.update(THEANO_READS)
        ignored: list[str] = []
        unknown: list[str] = []
        given = environ.get("THEANORC", "~/.theanorc" + os.pathsep + "~/.theanorc.txt")
        sources = [(src, name, value, 1) for path in given.split(os.pathsep) if path
                   if os.path.isfile(os.path.expanduser(path))
                   for src, name, value in _read_ini(os.path.expanduser(path))]
        sources += [("THEANO_FLAGS", name, value, 3)
                    for name, value in _pairs(environ.get("THEANO_FLAGS", ""), "THEANO_FLAGS")]
        for source, name, value, rank in sources:
            if name == "device" and re.fullmatch(r"gpu\d*", value.strip()):
                raise ValueError(f"{source}: device={value} names Theano's old CUDA back end, which "
                                 "arignote does not have: use device=cuda (or cudaN) for an NVIDIA "
                                 "GPU, or device=opencl (or openclP:D) for any OpenCL device; "
                                 "`arignote info` lists them")
            ours = THEANO_FLAG_MAP.get(name)
            if ours is None or ours not in self._flags or self._flags[ours].check is _anything:
                if not (name in THEANO_FLAG_MAP or name in THEANO_DEFAULTS
                        or name.split(".")[0] in THEANO_IGNORED_SECTIONS):
                    unknown.append(name)
                    self._hold(source, name, value, rank)
                    continue
                ignored.append(name)
                ours = name
                if name not in self._flags:
                    self._add_theano_flag(name, value)
            if self._ranks.get(ours, 0) <= rank:
                self._values[ours] = self._validate(ours, value, source)
                self._ranks[ours] = rank
        if ignored or unknown:
            parts = [f"these Theano flags have no effect under arignote: {', '.join(dict.fromkeys(ignored))}"
                     ] if ignored else []
            if unknown:
                parts.append(f"these are not Theano 1.0 flags: {', '.join(dict.fromkeys(unknown))} "
                             "(kept for flags a library registers with theano.configparser.AddConfigVar, "
                             "ignored otherwise)")
            warnings.warn("; ".join(parts) + " (docs/theano-differences.md lists how each Theano "
                          "flag maps)", TheanoFlagsNotice, stacklevel=2)
        return ignored

    def unload_theano(self) -> None:
        """Back to our meanings of ``THEANO_READS``'s names (the alias is uninstalled); the
        values Theano's flags set stay."""
        self._reads.clear()

    def _add_theano_flag(self, name: str, default: Any) -> None:
        """A Theano flag with no meaning here: it holds what it is given, and does nothing."""
        self.register(Flag(name, default, "Theano flag, accepted under the theano alias; "
                           "no effect in arignote", _anything), "load_theano")


def _read_ini(path: str) -> list[tuple[str, str, str]]:
    """(source, flag name, value) of every entry of an ini file; ``[s] k`` is flag ``s.k``."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep the case, so errors quote the flag as written
    try:
        parser.read(path)
    except configparser.Error as err:
        reason = "; ".join(str(err).splitlines())
        raise ValueError(f"config file {path}: cannot parse it ({reason})") from None
    return [(f"config file {path} [{section}]", name if section == "global" else f"{section}.{name}", value)
            for section in parser.sections() for name, value in parser.items(section)]


def _pairs(text: str, source: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        if item.strip():
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"{source} entry {item.strip()!r} is not of the form name=value "
                                 f"(for example {source}=floatX=float32,warn_float64=warn)")
            pairs.append((name.strip(), value.strip()))
    return pairs


config = Config()
config.load(dict(os.environ))
