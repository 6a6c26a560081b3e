"""The collector: checked before any request, bounded reads, retries and pauses, no redirects, the API key only
over https or to this machine; against local servers."""
import http.server
import json
import threading

import numpy as np
import pytest

from toymodels.hivemind import config as K
from toymodels.hivemind import memo as Mm
from toymodels.hivemind import sampling as C
from toymodels.hivemind import uploads as U

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_parse_memo(monkeypatch):
    """Each test parses afresh: the memo of parsed inputs (keyed by the input) would otherwise hand one test
    the result another test computed with a monkeypatched parser."""
    monkeypatch.setattr(U, "_PARSED", Mm._ByteLRU(K.PARSE_MEMO_BYTES, 32))


class _Handler(http.server.BaseHTTPRequestHandler):
    calls = 0

    def do_POST(self):  # noqa: N802
        _Handler.calls += 1
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.last = body
        if _Handler.calls == 2:  # one transient failure, to exercise the retry
            self.send_response(503)
            self.end_headers()
            return
        assert self.path == "/v1/chat/completions"
        text = f"echo {body['messages'][0]['content']} t={body['temperature']}"
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def test_collect_cli_against_local_server(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        prompts = tmp_path / "prompts.txt"
        prompts.write_text("Write a haiku.\n\nName a colour.\n")
        out = tmp_path / "r.csv"
        rc = C.main(["collect", "--base-url", f"http://127.0.0.1:{server.server_port}/v1", "--model", "toy",
                     "--prompts", str(prompts), "--n", "2", "--temperature", "0.7", "--out", str(out)])
        assert rc == 0
        df, _ = U.parse_upload(out.read_bytes(), "r.csv")
        assert len(df) == 4 and set(df["model"]) == {"toy"}
        assert df["response"].iloc[0] == "echo Write a haiku. t=0.7"
        assert _Handler.calls == 5  # 4 successes + 1 retried failure
        assert "min_p" not in _Handler.last and _Handler.last["top_p"] == 0.9  # the paper's default decoding
        C.collect(f"http://127.0.0.1:{server.server_port}", "toy", ["q"], n=1, temperature=2.0, top_p=1.0, min_p=0.1)
        assert _Handler.last["min_p"] == 0.1 and _Handler.last["temperature"] == 2.0
        rc = C.main(["collect", "--base-url", "http://127.0.0.1:1", "--model", "x", "--prompts", str(prompts),
                     "--n", "1", "--retries", "0", "--out", str(tmp_path / "none.csv")])
        assert rc == 1
    finally:
        server.shutdown()


class _Fake(http.server.BaseHTTPRequestHandler):
    """A scripted OpenAI-compatible server on 127.0.0.1: ``plan(n)`` gives the reply to the n-th request
    (1-based) as (status, headers, body bytes, seconds between bytes); every request is recorded."""

    protocol_version = "HTTP/1.0"

    def do_POST(self):  # noqa: N802
        srv = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        srv.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        status, headers, out, drip = srv.plan(len(srv.seen))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            if drip:
                import time

                for b in out:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    time.sleep(drip)
            else:
                self.wfile.write(out)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


def _reply(text="a reply"):
    out = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
    return 200, {"Content-Type": "application/json", "Content-Length": str(len(out))}, out, 0


@pytest.fixture
def fake_server():
    servers = []

    def start(plan=lambda n: _reply(f"reply {n}")):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
        srv.daemon_threads = True
        srv.plan, srv.seen = plan, []
        srv.url = f"http://127.0.0.1:{srv.server_port}/v1"
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def _cli(argv, capsys) -> tuple[int, str, str]:
    try:
        rc = C.main(argv)
    except SystemExit as exc:  # argparse's own refusals (a non-number for --n) exit 2 with one line
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def prompts_file(tmp_path):
    path = tmp_path / "prompts.txt"
    path.write_text("Write a haiku.\nName a colour.\n")
    return path


BAD_ARGUMENTS = [
    (["--retries", "-1"], "retries must be between 0 and 10"),    # issue 25: exit 0, nothing done
    (["--retries", "1000000"], "retries must be between 0 and 10"),  # issue 25: hung
    (["--temperature", "nan"], "temperature must be a finite number"),  # issue 25: NaN was sent
    (["--temperature", "inf"], "temperature must be a finite number"),
    (["--temperature", "-0.5"], "temperature must be between 0 and 2"),
    (["--temperature", "2.5"], "temperature must be between 0 and 2"),
    (["--top-p", "0"], "top_p must be above 0"),
    (["--top-p", "1.5"], "top_p must be between 0 and 1"),
    (["--top-p", "nan"], "top_p must be a finite number"),
    (["--min-p", "-0.1"], "min_p must be between 0 and 1"),
    (["--min-p", "nan"], "min_p must be a finite number"),
    (["--max-tokens", "-5"], "max_tokens must be between 1 and 32,768"),  # issue 25: accepted
    (["--max-tokens", "0"], "max_tokens must be between 1 and 32,768"),
    (["--max-tokens", "1000000000"], "max_tokens must be between 1 and 32,768"),
    (["--n", "0"], "n must be between 1 and 1,000"),
    (["--n", "1001"], "n must be between 1 and 1,000"),
    (["--n", "abc"], "invalid int value"),
    (["--timeout", "0"], "timeout must be between"),
    (["--timeout", "nan"], "timeout must be a finite number"),
    (["--timeout", "100000"], "timeout must be between"),
    (["--base-url", "file:///etc/passwd"], "must start with http:// or https://"),  # issue 25: accepted
    (["--base-url", "ftp://127.0.0.1/v1"], "must start with http:// or https://"),
    (["--base-url", "localhost:8000/v1"], "must start with http:// or https://"),
    (["--base-url", "http:///v1"], "names no host"),
    (["--base-url", "http://127.0.0.1:99999/v1"], "invalid port"),
    (["--base-url", "http://user:pw@127.0.0.1/v1"], "user name or password"),
    (["--base-url", "http://127.0.0.1/v1 x"], "without spaces"),
    (["--model", ""], "model name is empty"),
    (["--model", "m" * 101], "at most 100 characters"),
    (["--out", "{tmp}/no/such/dir/r.csv"], "directory of --out does not exist"),  # issue 25: lost everything
    (["--out", "{tmp}"], "is a directory"),
    (["--out", "{tmp}/other.csv"], "not a responses CSV"),
    (["--prompts", "{tmp}/missing.txt"], "cannot read the prompts file"),
    (["--prompts", "{tmp}/big.txt"], "larger than 1,000,000 bytes"),     # issue 25: read whole
    (["--prompts", "/dev/zero"], "not a regular file"),                  # read_text would never end
    (["--prompts", "{tmp}/long.txt"], "prompt 2 has 1,001 characters"),
    (["--prompts", "{tmp}/empty.txt"], "no prompts"),
    (["--prompts", "{tmp}/latin1.txt"], "not UTF-8"),
    (["--prompts", "{tmp}/bad.jsonl"], "item 1: expected a string"),
    (["--api-key", "sk-test", "--no-api-key"], "not allowed with argument"),
]


@pytest.mark.parametrize("extra,msg", BAD_ARGUMENTS, ids=[" ".join(a)[:40] for a, _ in BAD_ARGUMENTS])
def test_collect_cli_refuses_each_bad_argument_before_any_request(extra, msg, fake_server, prompts_file, tmp_path,
                                                                  capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "other.csv").write_text("name,score\nx,1\n")
    (tmp_path / "big.txt").write_text("p\n" * 500_001)
    (tmp_path / "long.txt").write_text("short\n" + "q" * 1001 + "\n")
    (tmp_path / "empty.txt").write_text("\n \n")
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    (tmp_path / "bad.jsonl").write_text('{"text": "no prompt key"}\n')
    srv = fake_server()
    out = tmp_path / "r.csv"
    argv = ["collect", "--base-url", srv.url, "--model", "toy", "--prompts", str(prompts_file), "--n", "2",
            "--retries", "0", "--out", str(out)]
    argv += [a.replace("{tmp}", str(tmp_path)) for a in extra]  # argparse: the last of a repeated option wins
    rc, stdout, err = _cli(argv, capsys)
    assert rc == 2, (rc, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and msg in err, err
    assert srv.seen == []  # refused before the first request
    assert not out.exists() and stdout == ""


def test_collect_cli_with_good_arguments_reaches_the_server(fake_server, prompts_file, tmp_path, capsys, monkeypatch):
    # the same command line as above, unchanged: so each refusal above is the bad argument's doing
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    srv = fake_server()
    out = tmp_path / "r.csv"
    rc, stdout, err = _cli(["collect", "--base-url", srv.url, "--model", "toy", "--prompts", str(prompts_file),
                            "--n", "2", "--retries", "0", "--out", str(out)], capsys)
    assert rc == 0, err
    assert json.loads(stdout) == {"rows": 4, "out": str(out)} and len(srv.seen) == 4
    sent = json.loads(srv.seen[0]["body"])
    assert sent["max_tokens"] == 512 and sent["temperature"] == 1.0 and srv.seen[0]["auth"] is None
    assert len(U.parse_upload(out.read_bytes(), "r.csv")[0]) == 4


def test_api_key_only_over_https_or_to_this_machine(fake_server, prompts_file, tmp_path, capsys, monkeypatch):
    import socket

    for url, ok in [("https://api.example.com/v1", True), ("http://localhost:8000/v1", True),
                    ("http://127.0.0.1:8000", True), ("http://127.0.0.9/v1", True), ("http://[::1]:8000/v1", True),
                    ("http://example.com/v1", False), ("http://10.0.0.5:8000/v1", False),
                    ("http://localhost.evil.example/v1", False), ("http://127.0.0.1.nip.io/v1", False),
                    ("HTTP://EXAMPLE.COM/v1", False)]:
        assert C.key_allowed(C._endpoint(url)) is ok, url
    # a key in the environment and a plain-http remote host: refused, and no connection is even attempted
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    tries = []

    def no_network(*args, **kwargs):
        tries.append(args)
        raise OSError("no network in tests")

    monkeypatch.setattr(socket, "create_connection", no_network)
    argv = ["collect", "--model", "toy", "--prompts", str(prompts_file), "--n", "1", "--retries", "0",
            "--out", str(tmp_path / "r.csv")]
    rc, _, err = _cli(["collect", "--base-url", "http://example.invalid:8000/v1"] + argv[1:], capsys)
    assert rc == 2 and "refusing to send the API key over plain http" in err and err.count("\n") == 1
    assert tries == [] and "sk-secret" not in err
    # --no-api-key: the request goes out (here it fails: no network), without the key
    rc, _, err = _cli(["collect", "--base-url", "http://example.invalid:8000/v1", "--no-api-key"] + argv[1:], capsys)
    assert rc == 1 and len(tries) == 1 and not (tmp_path / "r.csv").exists()
    monkeypatch.undo()
    # to this machine over http the key goes; with --no-api-key it does not
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    srv = fake_server()
    assert _cli(["collect", "--base-url", srv.url] + argv[1:], capsys)[0] == 0
    assert _cli(["collect", "--base-url", srv.url, "--no-api-key"] + argv[1:], capsys)[0] == 0
    assert [s["auth"] for s in srv.seen] == ["Bearer sk-secret"] * 2 + [None] * 2


def test_collect_follows_no_redirect(fake_server):
    elsewhere = fake_server()
    redirect = fake_server(lambda n: (307, {"Location": elsewhere.url + "/chat/completions",
                                            "Content-Length": "0"}, b"", 0))
    with pytest.raises(RuntimeError, match="HTTP 307.*redirects are not followed"):
        C.collect(redirect.url, "toy", ["q"], n=1, api_key="sk-secret", retries=3, backoff=0)
    assert len(redirect.seen) == 1 and elsewhere.seen == []  # not retried, and the key went nowhere else


@pytest.mark.parametrize("with_length", [True, False], ids=["content-length", "streamed"])
def test_collect_response_body_is_capped(fake_server, monkeypatch, with_length):
    monkeypatch.setattr(C, "RESPONSE_MAX_BYTES", 1000)
    status, headers, body, _ = _reply("x" * 5000)
    if not with_length:
        headers = {"Content-Type": "application/json"}  # HTTP/1.0: the body ends when the server closes
    srv = fake_server(lambda n: (status, headers, body, 0))
    with pytest.raises(RuntimeError, match="1,000"):
        C.collect(srv.url, "toy", ["q"], n=1, retries=3, backoff=0)
    assert len(srv.seen) == 1  # a body over the cap is final: no retry


def test_collect_retries_are_bounded_and_pauses_capped(fake_server, monkeypatch):
    sleeps = []
    monkeypatch.setattr(C.time, "sleep", sleeps.append)
    srv = fake_server(lambda n: (503, {"Content-Length": "0"}, b"", 0))
    with pytest.raises(RuntimeError, match="failed after 11 tries: HTTP 503"):
        C.collect(srv.url, "toy", ["q"], n=1, retries=C.COLLECT_MAX_RETRIES, backoff=C.COLLECT_MAX_WAIT)
    assert len(srv.seen) == 11 and len(sleeps) == 10
    assert sleeps == [min(30.0 * 2 ** k, 30.0) for k in range(10)] and max(sleeps) <= C.COLLECT_MAX_WAIT
    # a client error is final: one request, no pause
    srv = fake_server(lambda n: (401, {"Content-Length": "0"}, b"", 0))
    with pytest.raises(RuntimeError, match="HTTP 401"):
        C.collect(srv.url, "toy", ["q"], n=1, retries=5, backoff=1.0)
    assert len(srv.seen) == 1 and len(sleeps) == 10


def test_collect_cuts_off_a_server_that_trickles(fake_server):
    import time

    status, headers, body, _ = _reply("slow")
    srv = fake_server(lambda n: (status, headers, body, 0.05))  # ~70 bytes, 0.05 s apart: ~3.5 s in all
    t = time.monotonic()
    with pytest.raises(RuntimeError, match="longer than 1 s"):
        C.collect(srv.url, "toy", ["q"], n=1, retries=0, timeout=1.0)
    assert time.monotonic() - t < 2.5


def test_collect_cli_keeps_what_it_received_when_a_request_fails(fake_server, prompts_file, tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    srv = fake_server(lambda n: _reply(f"reply {n}") if n <= 3 else (400, {"Content-Length": "0"}, b"", 0))
    out = tmp_path / "r.csv"
    argv = ["collect", "--base-url", srv.url, "--model", "toy", "--prompts", str(prompts_file), "--n", "2",
            "--out", str(out)]
    rc, _, err = _cli(argv, capsys)
    last = err.rstrip("\n").split("\n")[-1]  # after the progress bar's line: one line saying what happened
    assert rc == 1 and last.startswith("error: ") and "HTTP 400" in last and "3 response(s) saved" in last
    df, _ = U.parse_upload(out.read_bytes(), "r.csv")
    assert df["response"].tolist() == ["reply 1", "reply 2", "reply 3"]
    # a second run appends to the same responses CSV, under the one header
    srv.plan = lambda n: _reply(f"again {n}")
    assert _cli(argv, capsys)[0] == 0
    df, _ = U.parse_upload(out.read_bytes(), "r.csv")
    assert len(df) == 7 and out.read_text().count("model,prompt,response") == 1
