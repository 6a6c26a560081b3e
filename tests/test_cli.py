import json
import subprocess
import sys
import types

import pytest

from toymodels import cli
from toymodels.registry import PAPERS, TOPICS

EXPECTED_TOPICS = {"superposition", "diffusion", "gated-attention", "deep-crl", "hivemind", "rlvr", "transductive"}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "toymodels", *args], capture_output=True, text=True, timeout=120)


def test_topics_are_exactly_the_seven():
    assert set(TOPICS) == EXPECTED_TOPICS and len(TOPICS) == 7
    assert sum(p.award == "Best Paper" for p in PAPERS) == 4


def test_list_prints_every_topic_with_status():
    res = run_cli("list")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert {line.split()[0] for line in lines} == EXPECTED_TOPICS
    assert all(("implemented" in line) or ("not built yet" in line) for line in lines)


def test_unknown_topic_exits_nonzero_with_message():
    res = run_cli("reproduce", "nosuchtopic")
    assert res.returncode != 0
    assert "unknown topic 'nosuchtopic'" in res.stderr and "superposition" in res.stderr


def test_bad_device_is_a_clear_error(monkeypatch, capsys):
    fake = types.SimpleNamespace(reproduce=lambda quick, seed: {"x": 1})
    monkeypatch.setattr(cli, "_module_for", lambda topic, fn: fake)
    assert cli.main(["reproduce", "rlvr", "--device", "tpu9000"]) == 2
    assert "unknown device" in capsys.readouterr().err


def test_reproduce_dispatches_and_last_line_is_json(monkeypatch, capsys, tmp_path):
    seen = {}

    def reproduce(quick, seed, out, progress):  # no `device`: the CLI passes only what is named
        seen.update(quick=quick, seed=seed, out=out)
        progress(0.5, "half way")
        (out / "table.csv").write_text("a,b\n1,2\n")
        return {"metric": 0.25, "nan_becomes_null": float("nan"), "flag": True}

    monkeypatch.setattr(cli, "_module_for", lambda topic, fn: types.SimpleNamespace(reproduce=reproduce))
    assert cli.main(["reproduce", "rlvr", "--quick", "--seed", "7", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert json.loads(out[-1]) == {"metric": 0.25, "nan_becomes_null": None, "flag": True}
    assert seen == {"quick": True, "seed": 7, "out": tmp_path / "o"}
    assert (tmp_path / "o" / "table.csv").exists()


def test_not_yet_built_topic_exits_nonzero(monkeypatch):
    paper = PAPERS[0]
    monkeypatch.setattr(type(paper), "load", lambda self: None)
    with pytest.raises(cli.CLIError, match="not implemented yet"):
        cli._module_for(paper.topic, "reproduce")


@pytest.mark.parametrize("paper", [p for p in PAPERS if p.implemented], ids=lambda p: p.topic)
def test_implemented_modules_follow_the_contract(paper):
    import inspect

    params = inspect.signature(paper.load().reproduce).parameters
    assert "quick" in params and "seed" in params


def test_topic_subcommands_dispatch_to_the_module(monkeypatch):
    seen = []
    fake = types.SimpleNamespace(main=lambda argv: seen.append(argv) or 0)
    monkeypatch.setattr(cli, "_module_for", lambda topic, fn: fake)
    assert cli.main(["hivemind", "collect", "--n", "3"]) == 0
    assert seen == [["collect", "--n", "3"]]


def test_topic_without_subcommands_is_a_clear_error(capsys):
    assert cli.main(["transductive", "anything"]) == 2
    assert "no subcommands" in capsys.readouterr().err
