import json
import subprocess
import sys
import types

import pytest

from toymodels import cli
from toymodels.registry import PAPERS, TOPICS

AWARD_TOPICS = {"superposition", "diffusion", "gated-attention", "deep-crl", "hivemind", "rlvr", "transductive"}
MORE_TOPICS = {p.topic for p in PAPERS if p.award not in ("Best Paper", "Runner-up")}   # grokking, supercollapse
EXPECTED_TOPICS = AWARD_TOPICS | MORE_TOPICS


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "toymodels", *args], capture_output=True, text=True, timeout=120)


def test_topics_are_the_seven_award_papers_and_the_more_toy_models():
    assert set(TOPICS) == EXPECTED_TOPICS and len(TOPICS) == len(PAPERS)
    assert {p.topic for p in PAPERS if p.award in ("Best Paper", "Runner-up")} == AWARD_TOPICS
    assert sum(p.award == "Best Paper" for p in PAPERS) == 4 and sum(p.award == "Runner-up" for p in PAPERS) == 3


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


# --------------------------------------------------------------------------- every failure is one line


@pytest.mark.parametrize("out", ["/etc/passwd", "/proc/nope/out"])
def test_an_unwritable_out_folder_is_one_line_and_exit_2(out):
    res = run_cli("reproduce", "rlvr", "--quick", "--out", out)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "--out" in res.stderr


@pytest.mark.parametrize("argv", [["reproduce"], ["nosuchcommand"], ["reproduce", "rlvr", "--seed", "x"],
                                  ["precompute", "--view"], ["--threads", "0", "list"]])
def test_bad_usage_is_one_line_and_exit_2(argv):
    res = run_cli(*argv)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith("error:"), res.stderr


def test_a_failure_while_running_is_one_line_and_exit_1(monkeypatch, capsys):
    def reproduce(quick, seed):
        raise RuntimeError("the toy blew up\nwith a second line")

    monkeypatch.setattr(cli, "_module_for", lambda topic, fn: types.SimpleNamespace(reproduce=reproduce))
    assert cli.main(["reproduce", "rlvr"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "RuntimeError: the toy blew up with a second line" in err


def test_an_input_error_while_running_is_exit_2(monkeypatch, capsys):
    from toymodels.topic import InputError

    def reproduce(quick, seed):
        raise InputError("steps must be between 1 and 10, got 11")

    monkeypatch.setattr(cli, "_module_for", lambda topic, fn: types.SimpleNamespace(reproduce=reproduce))
    assert cli.main(["reproduce", "rlvr"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == "error: steps must be between 1 and 10, got 11"


def test_threads_flag_sets_the_process_policy_once(monkeypatch):
    import torch

    from toymodels import threads as device

    seen = []
    monkeypatch.setattr(device, "_THREADS_SET", None)
    monkeypatch.setattr(torch, "set_num_threads", lambda n: seen.append(n))
    monkeypatch.setattr(cli, "_module_for", lambda topic, fn: types.SimpleNamespace(reproduce=lambda: {}))
    assert cli.main(["--threads", "2", "reproduce", "rlvr"]) == 0
    assert device.set_thread_policy(2) == 2 and seen == [2]  # a second call with the same count: no change


def test_verdict_json_is_one_object_per_topic():
    res = run_cli("verdict", "--json")
    assert res.returncode == 0, res.stderr
    lines = [json.loads(line) for line in res.stdout.strip().splitlines()]
    assert {d["topic"] for d in lines} == EXPECTED_TOPICS
    for d in lines:
        assert set(d) == {"topic", "reproduced", "summary", "metrics", "claims", "fresh"}
        assert d["reproduced"] in (True, False, None) and d["fresh"] is True, d
        for v in d["metrics"].values():  # numbers, or JSON lists of them (never comma-joined strings)
            items = v if isinstance(v, list) else [v]
            assert all(isinstance(x, (int, float, str, bool, dict)) or x is None for x in items), v
        for c in d["claims"]:
            assert c["status"] in ("reproduced", "not reproduced", "not testable here", "illustrated")
