"""``arignote info`` and ``arignote check`` with the GPU sections."""
from __future__ import annotations

import io

from arignote.cli import main, seed_check
from arignote.devices import usable_devices
from tests.gpu.conftest import unavailable


def test_info_says_why_cuda_is_unavailable_and_lists_opencl_devices(capsys):
    assert main(["info"]) == 0
    text = capsys.readouterr().out
    cuda = text[text.index("CUDA (device=cuda"):]
    assert "CuPy" in cuda and ("not importable" not in cuda or "arignote[cuda]" in cuda)
    opencl = text[text.index("OpenCL (device=opencl"):text.index("CUDA (device=cuda")]
    if unavailable("opencl"):
        assert 'pip install "arignote[opencl]"' in opencl
    else:
        assert "opencl0:0" in opencl and "fp64: " in opencl


def test_check_runs_the_seed_test_on_every_usable_device():
    devices = usable_devices()
    assert devices[0] == "cpu" and (unavailable("opencl") is not None) != ("opencl0:0" in devices)
    for device in devices:
        out = io.StringIO()
        used_gpu = seed_check("float32", iters=3, out=out, device=device)
        text = out.getvalue()
        cpu_device = device.startswith("opencl") and "CPU" in _device_type(device)
        assert used_gpu == (device != "cpu" and not cpu_device)
        if cpu_device:
            assert "which is the CPU itself: no GPU was used" in text and "Used the gpu" not in text
        assert "Result matches numpy: yes" in text
        assert ("With the result left on the device" in text) == (device != "cpu")


def _device_type(name: str) -> str:
    from arignote.backends.gpu.opencl import platforms
    p, d = (int(n) for n in name[len("opencl"):].split(":"))
    return platforms()[p]["devices"][d]["type"]
