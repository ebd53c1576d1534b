"""Test scaffolding: a fake `torch` that answers the calls Leasehold's probes make.

It reads `torch.json` from the profile directory in $FAKE_GPU_PROFILE (or its `base` profile).
No torch.json means "not installed": importing raises ModuleNotFoundError like a real missing
package. Kernel launches fail with the profile's `kernel_error` (e.g. the real "no kernel
image is available for execution on the device"), and CUDA initialisation raises the
profile's `warnings` as UserWarnings, as real torch does for an unsupported GPU.
"""
import json
import os
import time
import warnings as _warnings


def _profile_file(name):
    profile = os.environ.get("FAKE_GPU_PROFILE", "")
    path = os.path.join(profile, name)
    if os.path.exists(path):
        return path
    base = os.path.join(profile, "base")
    if os.path.exists(base):
        with open(base) as f:
            path = os.path.join(os.path.dirname(profile.rstrip("/")), f.read().strip(), name)
        if os.path.exists(path):
            return path
    return None


_path = _profile_file("torch.json")
if _path is None:
    raise ModuleNotFoundError("No module named 'torch'")
with open(_path) as _f:
    _P = json.load(_f)

__version__ = _P["version"]


class _Version:
    cuda = _P.get("cuda")


version = _Version()

float16 = "float16"
bfloat16 = "bfloat16"
float32 = "float32"


class _Scalar:
    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value

    def all(self):
        return self


class Tensor:
    def __init__(self, shape, value=1.0):
        self.shape = shape
        self.value = value

    def _count(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __mul__(self, other):
        return Tensor(self.shape, self.value * other)

    def sum(self):
        return _Scalar(self.value * self._count())

    def float(self):
        return self


def _launch(device):
    if device is None or not str(device).startswith("cuda"):
        return
    if not _P.get("available", False):
        raise RuntimeError("Found no NVIDIA driver on your system.")
    if _P.get("kernel_error"):
        raise RuntimeError(_P["kernel_error"])


def ones(*shape, device=None, dtype=None):
    _launch(device)
    return Tensor(shape, 1.0)


def randn(*shape, device=None, dtype=None):
    _launch(device)
    return Tensor(shape, 0.0)


def matmul(a, b):
    # Take as long as the profile's TFLOPS say a real GPU would.
    n = a.shape[0]
    tflops = float(_P.get("matmul_tflops", 100.0))
    time.sleep(2.0 * n * n * n / (tflops * 1e12))
    return Tensor((n, n), 0.0)


def isfinite(x):
    return _Scalar(True)


class _Properties:
    def __init__(self, device):
        self.total_memory = int(device.get("total_memory_mib", 0)) * 1024 * 1024
        self.name = device["name"]


class _DeviceContext:
    def __init__(self, index):
        self.index = index

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Cuda:
    def _init(self):
        for message in _P.get("warnings", []):
            _warnings.warn(message, UserWarning)

    def is_available(self):
        self._init()
        return bool(_P.get("available", False))

    def device_count(self):
        return len(_P.get("devices", [])) if _P.get("available", False) else 0

    def _device(self, i):
        return _P["devices"][i]

    def get_device_name(self, i=0):
        return self._device(i)["name"]

    def get_device_capability(self, i=0):
        major, minor = self._device(i)["capability"]
        return (major, minor)

    def get_device_properties(self, i=0):
        return _Properties(self._device(i))

    def get_arch_list(self):
        return list(_P.get("arch_list", []))

    def synchronize(self):
        return None

    def is_bf16_supported(self):
        return bool(_P.get("bf16", True))

    def device(self, index):
        return _DeviceContext(index)

    def empty_cache(self):
        return None


cuda = _Cuda()
