"""Where tensors live, and how every run is seeded.

`get_device()` picks CUDA when it is available, then Apple's MPS where it works,
else the CPU. The environment variable ``TOYMODELS_DEVICE`` (``cpu``, ``cuda``,
``cuda:1``, ``mps``) overrides the choice, and an explicit ``device=`` argument
overrides both. Results are bit-for-bit reproducible on the CPU only: GPU kernels
may reorder floating-point sums.
"""
from __future__ import annotations

import os
import random

import numpy as np
import torch

ENV_VAR = "TOYMODELS_DEVICE"


def _mps_works() -> bool:
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_available():
        return False
    try:  # some builds report MPS available but fail on first use
        torch.zeros(1, device="mps") + 1
        return True
    except Exception:  # pragma: no cover - depends on the machine
        return False


def get_device(device: str | torch.device | None = None) -> torch.device:
    """Resolve the device a computation runs on.

    Parameters
    ----------
    device : str, torch.device or None
        An explicit choice ("cpu", "cuda", "cuda:0", "mps"). ``None`` or ``"auto"``
        means: the ``TOYMODELS_DEVICE`` environment variable if set, else CUDA,
        else MPS, else CPU.

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        If the requested device is not a valid device string or is not available here.

    Example
    -------
    >>> get_device("cpu")
    device(type='cpu')
    """
    if isinstance(device, torch.device):
        choice = str(device)
    else:
        choice = (device or "").strip().lower()
    if choice in ("", "auto"):
        choice = os.environ.get(ENV_VAR, "").strip().lower()
    if choice in ("", "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_works():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(choice)
    except RuntimeError as exc:
        raise ValueError(f"unknown device {choice!r}: use cpu, cuda, cuda:N or mps") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {choice!r} requested but CUDA is not available on this machine")
    if dev.type == "mps" and not _mps_works():
        raise ValueError(f"device {choice!r} requested but Apple MPS is not available on this machine")
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"unsupported device {choice!r}: use cpu, cuda, cuda:N or mps")
    return dev


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's ``random``, NumPy's global RNG and torch (CPU and CUDA) together.

    Returns a CPU ``torch.Generator`` seeded with the same value, for code that
    prefers an explicit generator to global state.

    >>> _ = seed_everything(0); a = torch.rand(2)
    >>> _ = seed_everything(0); bool((a == torch.rand(2)).all())
    True
    """
    seed = int(seed)
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    return torch.Generator().manual_seed(seed)


def describe(device: torch.device | None = None) -> str:
    """A one-line human description of the device, for page footers and CLI logs."""
    dev = device or get_device()
    if dev.type == "cuda":
        return f"CUDA ({torch.cuda.get_device_name(dev)})"
    if dev.type == "mps":
        return "Apple MPS"
    return f"CPU ({torch.get_num_threads()} threads)"


# --------------------------------------------------------------------------- the build a result was computed by

#: The libraries whose versions a shipped view records (``environment``): a bit-for-bit comparison holds only
#: under the same ones, on the same kind of device.
EXACT_LIBRARIES = ("torch", "numpy", "pandas", "scipy", "scikit-learn")

def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def environment(device: str | torch.device | None = None) -> dict:
    """The build a computation runs under, as a shipped view records it: Python (major.minor), the versions of
    ``EXACT_LIBRARIES`` (torch's as ``torch.__version__``, with its local build tag: ``+cpu``, ``+cu130``), the
    device type (``get_device(device)``) and the machine's architecture."""
    import platform
    import sys

    env = {"python": "{}.{}".format(*sys.version_info[:2]), "torch": torch.__version__}
    env.update({lib: _version(lib) for lib in EXACT_LIBRARIES if lib != "torch"})
    env["device"] = get_device(device).type
    env["machine"] = platform.machine()
    return env
