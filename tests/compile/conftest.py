"""The device fixture (cpu, opencl, cuda; skipping where absent) for tests of the
compile layer that must hold on every device (threads, pickles)."""
from tests.gpu.conftest import device, opencl  # noqa: F401
