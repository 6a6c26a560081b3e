"""Diffusion memorisation, the experiments: the stacked ensemble, the window, the ELS machine, flow alignment, the
shipped store, the contract, and the device path."""
from dataclasses import asdict

import numpy as np
import pytest
import torch

import toymodels.diffusion as D
from tests.exact import verify_shipped
from toymodels import store
from toymodels.diffusion import config, core, els, experiments, explore, flows, network, training
from toymodels.topic import InputError

torch.set_num_threads(1)


# --------------------------------------------------------------------------- learned denoiser


def test_network_size_and_stacked_ensemble_equals_single_models():
    p = network.init_params(3, 8, 128, [0, 1, 2])
    assert sum(v[0].numel() for v in p.values()) == network.n_params(128, 8) == 102_024
    x = torch.randn(3, 5, 8)
    emb = network.time_embedding(1000, 128)[torch.tensor([1, 500, 999, 3, 7])]
    out = network.forward(p, x, emb)
    for m in range(3):
        single = network.forward({k: v[m:m + 1] for k, v in p.items()}, x[m:m + 1], emb)
        torch.testing.assert_close(out[m:m + 1], single)
    one = network.init_params(1, 8, 128, [1])
    torch.testing.assert_close(one["w_in"][0], p["w_in"][1])   # each model from its own seed


def test_train_window_tiny_run_and_validation():
    cfg = config.WindowConfig(ns=[8, 16], seeds=1, steps_per_n=12, n_samples=100, ddim_steps=10, ckpt_per_decade=2)
    res = experiments.train_window(cfg)
    c = res["curves"]
    assert set(c.n) == {8, 16} and c.groupby("n").step.max().tolist() == [96, 192]
    assert res["closed_form_fmem_min"] == 1.0
    assert ((c.f_lo <= c.f_mem) & (c.f_mem <= c.f_hi)).all()
    assert experiments.train_window(cfg)["curves"].equals(c)           # seeded: same numbers
    for bad in (dict(ns=[2, 8]), dict(ns=[8, 5000]), dict(ns=[16]), dict(ns=[16, 16]), dict(seeds=0),
                dict(width=4), dict(steps_per_n=1), dict(lr=1.0)):
        with pytest.raises(InputError):
            experiments.train_window(config.WindowConfig(**{**asdict(cfg), **bad}))


def test_window_live_budget_is_the_pages_old_bound():
    default = D.VIEWS["window"].arguments()["cfg"]
    assert config.window_cost(default) == 4 * 1 * 128**2 * 150 == 9_830_400 <= config.WINDOW_BUDGET
    with pytest.raises(InputError, match="live budget"):
        experiments.train_window(config.WindowConfig(ns=[256, 512], steps_per_n=300))


def test_els_machine_makes_locally_consistent_black_and_white_mosaics():
    """Kamb & Ganguli's check: train on an all-black and an all-white image, 3×3 circular patches. Every output
    pixel is black or white and equals the majority colour of its 3×3 neighbourhood (Thm 4.1). A finite sampler
    ends on the majority map of its previous iterate, and majority dynamics can hold period-2 pixels, so we ask
    for 95% of pixels (we measure 98%)."""
    train = torch.stack([-torch.ones(8, 8), torch.ones(8, 8)])
    z = torch.randn(6, 64, generator=torch.Generator().manual_seed(0))
    x = core.sample(els.els_denoiser(train, 3), z, core.Schedule("ddpm"), 100)
    assert torch.allclose(x.abs(), torch.ones_like(x), atol=1e-3)
    imgs = x.view(6, 8, 8)
    majority = torch.sign(els.image_patches(torch.sign(imgs), 3).sum(-1)).view(6, 8, 8)
    assert float((torch.sign(imgs) == majority).float().mean()) >= 0.95
    assert len({tuple(v) for v in torch.sign(x).tolist()}) > 2      # mosaics, not just the two training images


def test_shipped_digits_view_is_bit_for_bit_what_the_moved_code_computes():
    """After the move into one package (issue #26) the shipped view is fresh and recomputes identically on the CPU."""
    kwargs = D.VIEWS["process_digits"].arguments()
    verify_shipped("diffusion", "process_digits", explore.process_digits, rtol=0, **kwargs)
    shipped = store.load_shipped("diffusion", "process_digits")
    fresh = store.normalise(explore.process_digits(**kwargs))
    for key in ("u", "forward", "samples", "nearest", "nearest_dist"):
        assert np.array_equal(np.asarray(fresh[key]), np.asarray(shipped[key])), key
    assert fresh["fmem"] == shipped["fmem"]


def test_flow_alignment_is_early_in_high_dimension():
    df = flows.flow_alignment(n=300, ts=[0.1, 0.5], draws=100)
    at = df.set_index(["d", "t"]).cos_median
    assert at[(1024, 0.1)] > 0.95 and at[(2, 0.1)] < 0.9 and at[(2, 0.5)] < at[(1024, 0.5)]


# --------------------------------------------------------------------------- the topic contract


def test_views_headline_and_visualiser_views():
    assert D.HEADLINE == "study" and set(D.VIZ_VIEW.values()) | set(D.ELS_VIEW.values()) <= set(D.VIEWS)


def test_run_summary_of_a_visitors_run_names_its_slopes():
    import pandas as pd

    ns = np.array([16, 32, 64, 128], float)
    res = {"summary": pd.DataFrame({"n": ns.astype(int), "tau_mem": 300 * ns, "tau_gen": np.full(4, 200.0)}),
           "tau_mem_slope": 1.0, "tau_gen_slope": 0.0}
    text = D.run_summary(res)
    assert "n^1.00" in text and "n^0.00" in text and "4 of 4" in text and "inside the claims' bands" in text
    worse = D.run_summary({**res, "tau_mem_slope": 0.4})
    assert "outside" in worse


def test_visualiser_takes_ids_not_labels_and_never_clamps():
    with pytest.raises(InputError, match="dataset must be one of"):
        explore.process_2d(dataset="2-D: ring of 8 Gaussians")
    with pytest.raises(InputError):
        explore.els_digits(P=4)
    with pytest.raises(InputError):
        explore.process_digits(n=5000)
    assert set(D.VIZ_DATA) == set(D.VIZ_VIEW) and all(" " not in k for k in D.VIZ_DATA)


def test_library_never_changes_the_thread_count(monkeypatch):
    """Issue 14 #6: one_thread() changed torch's process-wide thread count from inside train_window."""
    calls = []
    monkeypatch.setattr(torch, "set_num_threads", lambda n: calls.append(n))
    experiments.train_window(config.WindowConfig(ns=[8, 16], steps_per_n=10, n_samples=100, ddim_steps=10,
                                              ckpt_per_decade=1))
    training.fit_denoiser(core.gmm_sample(8, 2), steps=5)
    assert calls == []


# --------------------------------------------------------------------------- the device path, on a CPU


from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

FAKE = torch.device("meta")


class OnDevice(torch.Tensor):
    """A CPU tensor playing a tensor on an accelerator (real values, so the code runs end to end)."""


def _is_fake(dev) -> bool:
    try:
        return dev is not None and torch.device(dev).type == "meta"
    except (TypeError, RuntimeError):
        return False


class FakeAccelerator(TorchFunctionMode):
    """``device=torch.device("meta")`` stands for an accelerator: tensors created on it or moved to it become
    ``OnDevice`` CPU tensors. Records what a real GPU or MPS refuses or does badly: a float64 tensor on the device,
    a CPU generator handed to an op on the device, a CPU tensor (not a scalar) mixed into a device op."""

    def __init__(self):
        super().__init__()
        self.violations: list[str] = []
        self.device_ops = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "__get__":                    # properties: .device says where it lives, .grad lives there
            if func == torch.Tensor.device.__get__ and isinstance(args[0], OnDevice):
                return FAKE
            out = func(*args, **kwargs)
            return out.as_subclass(OnDevice) if isinstance(args[0], OnDevice) and type(out) is torch.Tensor else out
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        on_dev_in = any(isinstance(t, OnDevice) for t in tensors)
        factory_on_dev = _is_fake(kwargs.get("device"))
        if factory_on_dev:
            kwargs["device"] = "cpu"
        gen = kwargs.get("generator")
        if gen is not None and gen.device.type == "cpu" and (factory_on_dev or on_dev_in):
            self.violations.append(f"a CPU generator handed to {name} on the device")
        target = None
        if func in (torch.Tensor.to, torch.Tensor.cpu):
            target = torch.device("cpu") if func is torch.Tensor.cpu else next(
                (torch.device(a) for a in [kwargs.get("device"), *args[1:]] if isinstance(a, (str, torch.device))),
                None)
            if _is_fake(target):
                kwargs.pop("device", None)
                args = tuple(a for a in args if not _is_fake(a) or isinstance(a, torch.Tensor))
        elif on_dev_in and name not in ("__getitem__", "__setitem__"):
            plain = [t for t in tensors if not isinstance(t, OnDevice) and t.dim() > 0]
            if plain:
                self.violations.append(f"a CPU tensor {tuple(plain[0].shape)} mixed into {name} on the device")
        out = func(*args, **kwargs)
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        if isinstance(out, torch.Tensor) and target is not None and target.type == "cpu":
            out = out.as_subclass(torch.Tensor)
            outs = []
        elif isinstance(out, torch.Tensor) and (factory_on_dev or _is_fake(target)):
            out = out.as_subclass(OnDevice)
            outs = [out]
        on_dev = [o for o in outs if isinstance(o, OnDevice)]
        self.device_ops += len(on_dev)
        if any(o.dtype == torch.float64 for o in on_dev):
            self.violations.append(f"a float64 tensor on the device from {name}")
        return out


def test_fake_accelerator_catches_what_a_gpu_refuses():
    with FakeAccelerator() as mode:
        torch.zeros(3, dtype=torch.float64, device=FAKE)
        torch.randint(0, 5, (3,), generator=torch.Generator().manual_seed(0), device=FAKE)
        torch.ones(2, device=FAKE) + torch.ones(2)
        x = torch.randn(4, generator=torch.Generator().manual_seed(0)).to(FAKE)      # the right way
        assert x.device == FAKE and float((x * 2).sum().cpu()) == pytest.approx(float(x.cpu().sum()) * 2)
    kinds = " | ".join(mode.violations)
    assert "float64" in kinds and "CPU generator" in kinds and "CPU tensor (2,)" in kinds
    assert len(mode.violations) == 3


@pytest.mark.parametrize("name", ["rf", "window", "process_2d", "process_digits"])
def test_device_path_keeps_float64_and_generators_on_the_cpu(name, monkeypatch):
    """Issue 14 #11: rf.py kept float64 moments on the device, learned.py handed a CPU generator to randint on the
    device, and the visualiser ignored its device. Run each with a fake accelerator and demand a clean record."""
    for module in (experiments, explore, training):
        monkeypatch.setattr(module, "get_device", lambda device=None: FAKE)
    run = {
        "rf": lambda: experiments.run_rf(config.RFConfig(d=8, psi_p=32, psi_ns=[2, 4], samples=5000, n_test=200,
                                                         test_draws=5)),
        "window": lambda: experiments.train_window(config.WindowConfig(ns=[8, 16], steps_per_n=12, n_samples=100,
                                                                    ddim_steps=10, ckpt_per_decade=2)),
        "process_2d": lambda: explore.process_2d(n=8, train_steps=20, n_samples=50, sampler_steps=10),
        "process_digits": lambda: explore.process_digits(n=20, n_samples=2, sampler_steps=10),
    }[name]
    with FakeAccelerator() as mode:
        out = run()
    assert mode.violations == [], sorted(set(mode.violations))[:5]
    assert mode.device_ops > 10                       # the work really ran on the (fake) device
    assert out is not None


