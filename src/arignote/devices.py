"""What hardware and libraries this machine has, and what each can run.

The GPU backends add their own sections; until then the CPU is the one device.
"""
from __future__ import annotations

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
    return "\n\n".join(s.render() for s in (software, cpu, flags))
