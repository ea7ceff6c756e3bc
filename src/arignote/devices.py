"""What hardware and libraries this machine has, and what each can run.

``arignote info`` answers the seed note's question ("can this machine use its
GPU, and how?"): for CUDA and for OpenCL, each piece that is there, and for
each missing piece the reason and the fix.
"""
from __future__ import annotations

import ctypes.util
import importlib
import os
import platform
import sys
from dataclasses import dataclass, field

import numpy as np
import scipy


@dataclass
class Section:
    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)

    def render(self) -> str:
        width = max((len(k) for k, _ in self.rows), default=0)
        lines = [self.title]
        lines += [f"  {key.ljust(width)}  {value}" for key, value in self.rows]
        return "\n".join(lines)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_info() -> str:
    """The BLAS numpy was built with, as numpy reports it."""
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        blas = deps.get("blas", {})
        return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()
    except Exception:  # older numpy without mode="dicts"
        return "unknown (numpy does not report it)"


OPENCL_FIX = 'pip install "arignote[opencl]" (pyopencl, and PoCL: an OpenCL device on any CPU)'
CUDA_FIX = ('an NVIDIA GPU with its driver, then pip install "arignote[cuda]"; any other GPU '
            "(Intel, AMD, Apple): use device=opencl0:0")


def _runtime(kind: str) -> tuple[object | None, str]:
    """The runtime module (None if it cannot be imported) and why not."""
    try:
        return importlib.import_module(f"arignote.backends.gpu.{kind}"), ""
    except ImportError as err:
        return None, str(err)


def cuda_section() -> tuple[Section, list[str]]:
    """The CUDA section, and the device names usable here."""
    rows: list[tuple[str, str]] = []
    driver = ctypes.util.find_library("cuda") or (os.path.exists("/proc/driver/nvidia/version")
                                                  and "/proc/driver/nvidia")
    rows.append(("driver", f"found ({driver})" if driver else
                 f"not found: no NVIDIA driver (libcuda) on this machine; needs {CUDA_FIX}"))
    runtime, why = _runtime("cuda")
    usable: list[str] = []
    if runtime is None:
        rows.append(("CuPy", f"not importable ({why}): {CUDA_FIX}"))
    else:
        rows.append(("CuPy", runtime.version()))
        try:
            found = runtime.devices()
        except Exception as err:  # the driver's own error types
            rows.append(("devices", f"none usable ({err})"))
            found = []
        for index, dev in enumerate(found):
            rows.append((f"cuda{index}", f"{dev['name']}, compute capability "
                         f"{dev['compute_capability']}, {dev['memory'] / 2**30:.1f} GiB"))
            usable.append(f"cuda{index}")
    return Section("CUDA (device=cuda, cudaN)", rows), usable


def opencl_section() -> tuple[Section, list[str]]:
    """The OpenCL section, and the device names usable here."""
    rows: list[tuple[str, str]] = []
    loader = ctypes.util.find_library("OpenCL")
    rows.append(("ICD loader", f"system {loader}" if loader else
                 "no system libOpenCL (pyopencl wheels bring their own)"))
    runtime, why = _runtime("opencl")
    usable: list[str] = []
    if runtime is None:
        rows.append(("pyopencl", f"not importable ({why}): {OPENCL_FIX}"))
        return Section("OpenCL (device=opencl, openclP:D)", rows), usable
    rows.append(("pyopencl", runtime.version()))
    try:
        found = runtime.platforms()
    except Exception as err:  # pyopencl raises its own error when no ICD is installed
        rows.append(("platforms", f"none ({err}): {OPENCL_FIX}"))
        found = []
    for p, plat in enumerate(found):
        rows.append((f"platform {p}", f"{plat['name']} ({plat['version']})"))
        for d, dev in enumerate(plat["devices"]):
            fp64 = "fp64: yes" if dev["fp64"] else "fp64: no (no fp64 on this device: set floatX=float32)"
            rows.append((f"  opencl{p}:{d}", f"{dev['name']}, {dev['type']}, {dev['version']}, "
                         f"{dev['memory'] / 2**30:.1f} GiB, {dev['compute_units']} compute units, {fp64}"))
            usable.append(f"opencl{p}:{d}")
    if not found:
        rows.append(("devices", f"none: install a GPU's OpenCL driver, or {OPENCL_FIX}"))
    if not any(dev["gpu"] for plat in found for dev in plat["devices"]):
        rows.append(("GPU", no_gpu_driver(gpus_present())))
    return Section("OpenCL (device=opencl, openclP:D)", rows), usable


# PCI vendors of GPUs, and the OpenCL driver packages that make each one a device.
GPU_VENDORS = {"0x8086": ("Intel", "intel-opencl-icd (or Mesa rusticl: mesa-opencl-icd)"),
               "0x1002": ("AMD", "ROCm's OpenCL runtime (rocm-opencl-runtime) or Mesa rusticl "
                                 "(mesa-opencl-icd)"),
               "0x10de": ("NVIDIA", "the NVIDIA driver (its OpenCL ICD), or use device=cuda")}
DRIVER_PACKAGES = "intel-opencl-icd, Mesa rusticl, ROCm"


def gpus_present(root: str = "/sys/class/drm") -> list[str]:
    """PCI vendor ids of the display devices the kernel sees (``/sys/class/drm/card*``)."""
    found = []
    try:
        cards = sorted(os.listdir(root))
    except OSError:
        return found
    for card in cards:
        if not card.startswith("card") or "-" in card:
            continue
        try:
            with open(os.path.join(root, card, "device", "vendor"), encoding="ascii") as handle:
                found.append(handle.read().strip())
        except OSError:
            continue
    return found


def no_gpu_driver(vendors: list[str]) -> str:
    """What ``info`` says when OpenCL shows no GPU-type device: which GPU the system has
    (if it sees one) and the driver package to install."""
    known = [GPU_VENDORS[v] for v in dict.fromkeys(vendors) if v in GPU_VENDORS]
    if known:
        return "; ".join(f"an {name} GPU is present but has no usable OpenCL driver: install {fix}"
                         if name[0] in "AEIOU" else
                         f"a {name} GPU is present but has no usable OpenCL driver: install {fix}"
                         for name, fix in known)
    return (f"no GPU-type OpenCL device: install your GPU's driver ({DRIVER_PACKAGES}); "
            "device=opencl runs on the CPU device until then")


def native_section() -> Section:
    """The C compiler native CPU kernels are built with, or why numpy's kernels run."""
    from arignote.backends.cpu import native
    from arignote.config import config
    chain = native.toolchain()
    if not hasattr(chain, "flags"):
        return Section("Native CPU kernels", [("status", f"off: {chain.reason}; numpy's kernels run"),
                                              ("fix", chain.fix)])
    threads = (f"OpenMP, {os.environ.get('OMP_NUM_THREADS') or os.cpu_count()} threads from "
               f"{config.openmp_elemwise_minsize} elements" if chain.openmp else "one thread")
    return Section("Native CPU kernels", [
        ("compiler", f"{chain.identity} ({chain.path})"),
        ("flags", " ".join(chain.flags + chain.libs)),
        ("vector math", f"{chain.vector_library}: {len(chain.vector_functions)} functions"
         if chain.vector_library else "none: plain libm calls (not vectorised)"),
        ("threads", threads),
        ("numpy below", f"{config.native_min_size} elements (reductions, softmax: "
                        f"{config.native_reduce_min_size})"),
        ("cache", f"{config.compiledir} (arignote cache: what it holds; arignote cache clear)"),
        ("builds", _builds_text(native.history())),
    ])


def _builds_text(history: dict) -> str:
    """This process's background builds of native kernels, and the last failure's reason."""
    from arignote.config import config
    text = (f"native_build={config.native_build}: {history['built']} built in the background, "
            f"{history['failed']} failed")
    if history["failed"]:
        text += f" (last: {history['last error']}; those functions run numpy's kernels)"
    return text


def usable_devices() -> list[str]:
    """``cpu`` and every GPU device that can be opened here, for ``arignote check``."""
    return ["cpu"] + opencl_section()[1] + cuda_section()[1]


def report() -> str:
    """The text of ``arignote info``."""
    from arignote import __version__
    from arignote.config import config
    software = Section("Software", [
        ("arignote", __version__),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("numpy", np.__version__),
        ("scipy", scipy.__version__),
        ("BLAS", blas_info()),
    ])
    cpu = Section("CPU (device 'cpu': always available)", [
        ("model", cpu_model()),
        ("cores", str(os.cpu_count())),
        ("machine", f"{platform.system()} {platform.machine()}"),
    ])
    flags = Section("Configuration", [
        ("floatX", config.floatX), ("device", config.device), ("mode", config.mode),
        ("warn_float64", config.warn_float64),
    ])
    flags.rows += [("force_device", str(config.force_device)), ("contexts", config.contexts or "(none)")]
    sections = (software, cpu, native_section(), opencl_section()[0], cuda_section()[0], flags)
    return "\n\n".join(s.render() for s in sections)
