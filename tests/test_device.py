import random

import numpy as np
import pytest
import torch

from toymodels.device import get_device, seed_everything


@pytest.fixture(autouse=True)
def _auto_device(monkeypatch):
    """These tests check the automatic choice: without the CPU pin of tests/conftest.py."""
    monkeypatch.delenv("TOYMODELS_DEVICE", raising=False)


def test_cpu_when_no_accelerator(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("toymodels.device._mps_works", lambda: False)
    assert get_device() == torch.device("cpu")


def test_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device().type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("toymodels.device._mps_works", lambda: True)
    assert get_device().type == "mps"


def test_env_var_overrides_auto(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("TOYMODELS_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")
    assert get_device("auto") == torch.device("cpu")


def test_explicit_argument_beats_env(monkeypatch):
    monkeypatch.setenv("TOYMODELS_DEVICE", "cuda")
    assert get_device("cpu") == torch.device("cpu")


def test_unavailable_or_bad_device_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="CUDA is not available"):
        get_device("cuda")
    with pytest.raises(ValueError, match="unknown device"):
        get_device("tpu9000")
    monkeypatch.setenv("TOYMODELS_DEVICE", "cuda")
    with pytest.raises(ValueError, match="CUDA is not available"):
        get_device()


def _draws():
    return random.random(), np.random.rand(), torch.rand(1).item()


def test_seed_everything_seeds_all_three_generators():
    seed_everything(123)
    first = _draws()
    seed_everything(123)
    assert _draws() == first
    seed_everything(124)
    assert all(a != b for a, b in zip(_draws(), first))


def test_seed_returns_generator_and_rejects_bad_seed():
    g1, g2 = seed_everything(5), seed_everything(5)
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))
    with pytest.raises(ValueError):
        seed_everything(-1)
