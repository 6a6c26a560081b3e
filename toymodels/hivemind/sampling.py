"""The collector: sample responses from an OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp) into the
analyzer's (model, prompt, response) CSV, and its command line ``python -m toymodels hivemind collect``.

Every argument is checked before the first request (``check_collect``), and the CLI also opens its output file
before it: a run never collects for an hour and then finds it cannot save. Reads are bounded (the prompts file,
each response body, each request's time), tries are bounded (at most COLLECT_MAX_RETRIES retries, pauses capped at
COLLECT_MAX_WAIT), redirects are not followed, and an API key travels only over https or to this machine
(localhost, 127.0.0.0/8, ::1).
"""
from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import pandas as pd

from toymodels.topic import InputError, Range, as_progress, check

from .config import COLUMNS, MAX_MODEL_CHARS, MAX_PROMPT_CHARS

COLLECT_MAX_N = 1000            # responses per prompt (the paper: 50)
COLLECT_MAX_PROMPTS = 1000      # prompts per run (the paper: 100)
COLLECT_MAX_REQUESTS = 100_000  # prompts x n per run
COLLECT_MAX_RETRIES = 10        # retries per request, after the first try
COLLECT_MAX_WAIT = 30.0         # seconds: the longest pause between two tries (exponential backoff, capped)
COLLECT_MAX_TOKENS = 32_768     # max_tokens per response (the paper: 2,048)
COLLECT_MAX_TIMEOUT = 600.0     # seconds one request may take, first byte sent to last byte read
PROMPT_FILE_MAX_BYTES = 1_000_000   # the prompts file (1,000 prompts of 1,000 characters)
RESPONSE_MAX_BYTES = 4_000_000  # one HTTP response body (32,768 tokens of text with JSON escapes fit)
_RETRY_HTTP = {408, 425, 429, 500, 502, 503, 504}  # statuses worth another try; any other error status is final


class _Final(Exception):
    """A failure that another try would repeat (a 4xx status, a redirect, a body over the size cap)."""


def _endpoint(base_url) -> str:
    """The chat-completions URL of an OpenAI-compatible server, from its base URL (http or https only)."""
    from urllib.parse import urlsplit, urlunsplit

    if not isinstance(base_url, str) or not base_url.strip():
        raise InputError("the base URL is empty: give e.g. http://localhost:8000/v1")
    if len(base_url) > 2000 or any(ch.isspace() or not ch.isprintable() for ch in base_url):
        raise InputError("the base URL must be one line without spaces, at most 2,000 characters")
    parts = urlsplit(base_url)
    if parts.scheme.lower() not in ("http", "https"):
        raise InputError(f"the base URL must start with http:// or https:// (got {base_url[:60]!r})")
    try:
        parts.port  # noqa: B018 - reading it raises ValueError for a bad port
    except ValueError:
        raise InputError(f"the base URL has an invalid port ({base_url[:60]!r})") from None
    if not parts.hostname:
        raise InputError(f"the base URL names no host ({base_url[:60]!r})")
    if parts.username is not None or parts.password is not None:
        raise InputError("the base URL must not hold a user name or password: pass a key with --api-key")
    if parts.query or parts.fragment:
        raise InputError("the base URL must not have a query (?...) or a fragment (#...)")
    path = parts.path.rstrip("/")
    path += "/chat/completions" if path.endswith("/v1") else "/v1/chat/completions"
    return urlunsplit((parts.scheme.lower(), parts.netloc, path, "", ""))


def key_allowed(url: str) -> bool:
    """Whether an API key may be sent to ``url``: over https, or to this machine (localhost, 127.0.0.0/8,
    ::1) over http. Anywhere else plain http would show the key to every network hop."""
    import ipaddress
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme.lower() == "https":
        return True
    host = (parts.hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_collect(base_url, model, prompts=None, n=5, temperature=1.0, top_p=0.9, max_tokens=512,
                  api_key=None, retries=3, timeout=120.0, backoff=1.0, min_p=None) -> str:
    """Check every argument of ``collect`` (``prompts=None``: all but the prompts) and return the endpoint
    URL; raise InputError with a one-line message otherwise. Nothing is sent."""
    url = _endpoint(base_url)
    if not isinstance(model, str) or not model.strip():
        raise InputError("the model name is empty")
    if len(model) > MAX_MODEL_CHARS or not model.isprintable():
        raise InputError(f"the model name must be one line of at most {MAX_MODEL_CHARS} characters (the page "
                         "refuses longer labels)")
    check("n", n, Range(1, COLLECT_MAX_N, integer=True))
    check("temperature", temperature, Range(0.0, 2.0))
    check("top_p", top_p, Range(0.0, 1.0))
    if top_p == 0:
        raise InputError("top_p must be above 0 (and at most 1), got 0")
    if min_p is not None:
        check("min_p", min_p, Range(0.0, 1.0))
    check("max_tokens", max_tokens, Range(1, COLLECT_MAX_TOKENS, integer=True))
    check("retries", retries, Range(0, COLLECT_MAX_RETRIES, integer=True))
    check("timeout", timeout, Range(0.1, COLLECT_MAX_TIMEOUT, unit="seconds"))
    check("backoff", backoff, Range(0.0, COLLECT_MAX_WAIT, unit="seconds"))
    if api_key is not None:
        if not isinstance(api_key, str) or not api_key or len(api_key) > 1000 or \
                not all(33 <= ord(ch) < 127 for ch in api_key):
            raise InputError("the API key must be 1 to 1,000 visible ASCII characters")
        if not key_allowed(url):
            raise InputError(f"refusing to send the API key over plain http to {url.split('/')[2]!r}: use an "
                             "https:// URL or a server on this machine, or pass --no-api-key to send none (the "
                             "key comes from --api-key or $OPENAI_API_KEY)")
    if prompts is not None:
        if isinstance(prompts, str) or not isinstance(prompts, (list, tuple)):
            raise InputError("prompts must be a list of texts")
        if not prompts:
            raise InputError("no prompts")
        if len(prompts) > COLLECT_MAX_PROMPTS:
            raise InputError(f"{len(prompts):,} prompts; the limit is {COLLECT_MAX_PROMPTS:,} per run")
        for i, q in enumerate(prompts, 1):
            if not isinstance(q, str) or not q.strip():
                raise InputError(f"prompt {i:,} is empty or not text")
            if len(q) > MAX_PROMPT_CHARS:
                raise InputError(f"prompt {i:,} has {len(q):,} characters; the limit is {MAX_PROMPT_CHARS:,} (the "
                                 "page refuses longer labels)")
        if len(prompts) * int(n) > COLLECT_MAX_REQUESTS:
            raise InputError(f"{len(prompts):,} prompts x {int(n):,} responses is {len(prompts) * int(n):,} "
                             f"requests; the limit is {COLLECT_MAX_REQUESTS:,} per run")
    return url


def _opener():
    """HTTP(S) only, no redirects (a redirect would carry the Authorization header elsewhere), no proxies."""
    import urllib.request

    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.UnknownHandler()):
        opener.add_handler(handler)
    return opener


def _chat(url: str, model: str, prompt: str, temperature: float, top_p: float, max_tokens: int,
          api_key: str | None, timeout: float, min_p: float | None = None, opener=None) -> str:
    """One chat completion: the reply's text. The body is read up to RESPONSE_MAX_BYTES, the whole request
    within about ``timeout`` seconds (a server that trickles bytes is cut off)."""
    import urllib.request

    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}],
                       "temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
                       **({"min_p": min_p} if min_p is not None else {})}, allow_nan=False).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    deadline = time.monotonic() + timeout
    with (opener or _opener()).open(req, timeout=timeout) as resp:
        length = resp.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > RESPONSE_MAX_BYTES:
            raise _Final(f"the response is {int(length):,} bytes; the limit is {RESPONSE_MAX_BYTES:,}")
        chunks, size = [], 0
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > RESPONSE_MAX_BYTES:
                raise _Final(f"the response is longer than {RESPONSE_MAX_BYTES:,} bytes")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the response took longer than {timeout:g} s")
            chunks.append(chunk)
    try:
        doc = json.loads(b"".join(chunks).decode("utf-8"))
        content = doc["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ValueError("the reply is not an OpenAI chat completion (no choices[0].message.content)") from None
    if not isinstance(content, str):
        raise ValueError("the reply's message content is not text")
    return content


def _why(exc: BaseException) -> str:
    import urllib.error

    if isinstance(exc, urllib.error.HTTPError):
        extra = " (redirects are not followed: give the final URL)" if 300 <= exc.code < 400 else ""
        return f"HTTP {exc.code} {exc.reason}{extra}"
    if isinstance(exc, urllib.error.URLError):
        return f"cannot connect: {exc.reason}"
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def collect(base_url: str, model: str, prompts: list[str], n: int = 5, temperature: float = 1.0,
            top_p: float = 0.9, max_tokens: int = 512, api_key: str | None = None, retries: int = 3,
            timeout: float = 120.0, backoff: float = 1.0, min_p: float | None = None,
            progress=None, on_response=None) -> pd.DataFrame:
    """Sample ``n`` responses per prompt from an OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp).

    Defaults follow the paper's decoding (top-p 0.9, temperature 1.0); its diversity-oriented setting is
    ``min_p=0.1, top_p=1.0, temperature=2.0`` (``min_p`` is an extension that vLLM and llama.cpp accept).
    Every argument is checked first (``check_collect``: InputError, nothing sent). A request that fails for a
    passing reason (no connection, a timeout, HTTP 408/429/5xx, a malformed reply) is retried up to
    ``retries`` times, pausing ``backoff * 2**attempt`` seconds (at most COLLECT_MAX_WAIT); one that still
    fails, or fails for good (another HTTP error, a redirect, a body over RESPONSE_MAX_BYTES), raises
    RuntimeError naming the prompt. ``on_response(model, prompt, text)`` is called for each response as it
    arrives (the CLI saves it at once). Returns a (model, prompt, response) table.
    """
    import http.client
    import urllib.error

    url = check_collect(base_url, model, prompts, n, temperature, top_p, max_tokens, api_key, retries, timeout,
                        backoff, min_p)
    n, retries = int(n), int(retries)
    bar = as_progress(progress)
    opener = _opener()
    rows, total, done = [], len(prompts) * n, 0
    for q in prompts:
        for _ in range(n):
            for attempt in range(retries + 1):
                try:
                    text = _chat(url, model, q, temperature, top_p, max_tokens, api_key, timeout, min_p, opener)
                    break
                except _Final as exc:
                    raise RuntimeError(f"request for prompt {q[:40]!r} failed: {exc}") from None
                except (OSError, ValueError, http.client.HTTPException) as exc:
                    if isinstance(exc, urllib.error.HTTPError):
                        exc.close()
                        if exc.code not in _RETRY_HTTP:
                            raise RuntimeError(f"request for prompt {q[:40]!r} failed: {_why(exc)}") from None
                    if attempt == retries:
                        raise RuntimeError(f"request for prompt {q[:40]!r} failed after {retries + 1} tries: "
                                           f"{_why(exc)}") from None
                    time.sleep(min(backoff * 2 ** attempt, COLLECT_MAX_WAIT))
            rows.append((model, q, text))
            if on_response is not None:
                on_response(model, q, text)
            done += 1
            bar(done / total, f"{done}/{total}")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _read_prompts(path: str) -> list[str]:
    """Prompts from a text file (one per line) or JSON lines (``{"prompt": ...}`` or a JSON string per line;
    a ``.json`` file may also hold one array). At most PROMPT_FILE_MAX_BYTES are read."""
    import stat

    p = Path(path)
    try:
        info = p.stat()
    except OSError as exc:
        raise InputError(f"cannot read the prompts file {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"the prompts file {path} is not a regular file")
    try:
        with open(p, "rb") as f:
            data = f.read(PROMPT_FILE_MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the prompts file {path}: {exc.strerror}") from None
    if len(data) > PROMPT_FILE_MAX_BYTES:
        raise InputError(f"the prompts file is larger than {PROMPT_FILE_MAX_BYTES:,} bytes: split it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the prompts file is not UTF-8 (byte {exc.start})") from None
    if not path.endswith((".jsonl", ".json", ".ndjson")):
        return [line.strip() for line in text.splitlines() if line.strip()]
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            items = list(enumerate(json.loads(stripped), 1))
        else:
            items = [(i, json.loads(line)) for i, line in enumerate(stripped.splitlines(), 1) if line.strip()]
    except json.JSONDecodeError as exc:
        raise InputError(f"the prompts file is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise InputError("the prompts file nests JSON too deeply") from None
    out = []
    for i, obj in items:
        q = obj.get("prompt") if isinstance(obj, dict) else obj
        if not isinstance(q, str):
            raise InputError(f"prompts file, item {i:,}: expected a string or an object with a 'prompt' string")
        out.append(q)
    return out


def _open_out(path: str):
    """Open the output CSV for appending before any request, so a bad --out costs nothing. An existing file
    must be a responses CSV (first line ``model,prompt,response``). Returns (file, created)."""
    out = Path(path)
    if out.is_dir():
        raise InputError(f"--out {path} is a directory: name a CSV file")
    if not out.parent.is_dir():
        raise InputError(f"the directory of --out does not exist: {out.parent}")
    exists = out.exists()
    if exists:
        if not out.is_file():
            raise InputError(f"--out {path} exists and is not a regular file")
        with open(out, "rb") as f:
            first = f.readline(200).strip().decode("utf-8-sig", "replace")
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if size:
                f.seek(size - 1)
                last = f.read(1)
        if first and first.lower().replace(" ", "") != ",".join(COLUMNS):
            raise InputError(f"--out {path} exists and is not a responses CSV (its first line is not "
                             "model,prompt,response): name a new file")
    try:
        f = open(out, "a", newline="", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write --out {path}: {exc.strerror}") from None
    if f.tell() == 0:
        f.write(",".join(COLUMNS) + "\n")
    elif exists and size and last not in (b"\n", b"\r"):
        f.write("\n")
    f.flush()
    return f, not exists


def main(argv: list[str] | None = None) -> int:
    """``python -m toymodels hivemind collect --base-url URL --model NAME --prompts FILE --n N --temperature T``

    Exit 2 (one line on stderr) for bad usage, refused before any request; 1 when a request fails (the
    responses received so far stay in --out); 0 with one JSON line ``{"rows": ..., "out": ...}``.
    """
    import argparse
    import sys

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # one line on stderr, exit 2 (argparse prints its usage block otherwise)
            self.exit(2, f"error: {message} (see python -m toymodels hivemind collect --help)\n")

    parser = Parser(prog="python -m toymodels hivemind")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="sample responses from an OpenAI-compatible endpoint into a CSV")
    c.add_argument("--base-url", required=True, help="http(s) URL, e.g. http://localhost:8000/v1 (vLLM) or "
                   "http://localhost:11434/v1 (Ollama); redirects are not followed")
    c.add_argument("--model", required=True, help=f"at most {MAX_MODEL_CHARS} characters")
    c.add_argument("--prompts", required=True, help="text file, one prompt per line (or JSONL with 'prompt'); "
                   f"at most {PROMPT_FILE_MAX_BYTES // 1_000_000} MB, {COLLECT_MAX_PROMPTS:,} prompts of "
                   f"{MAX_PROMPT_CHARS:,} characters")
    c.add_argument("--n", type=int, default=5, help=f"responses per prompt, 1-{COLLECT_MAX_N} (paper: 50)")
    c.add_argument("--temperature", type=float, default=1.0, help="0-2 (paper: 1.0)")
    c.add_argument("--top-p", type=float, default=0.9, help="above 0, at most 1 (paper: 0.9)")
    c.add_argument("--min-p", type=float, default=None, help="0-1; paper's diversity setting: --min-p 0.1 "
                   "--top-p 1.0 --temperature 2.0 (sent only when given)")
    c.add_argument("--max-tokens", type=int, default=512, help=f"1-{COLLECT_MAX_TOKENS:,} (paper: 2,048)")
    c.add_argument("--retries", type=int, default=3, help=f"retries per request, 0-{COLLECT_MAX_RETRIES}, with "
                   f"exponential pauses of at most {COLLECT_MAX_WAIT:g} s")
    c.add_argument("--timeout", type=float, default=120.0, help=f"seconds per request, at most "
                   f"{COLLECT_MAX_TIMEOUT:g}")
    c.add_argument("--out", default="responses.csv", help="CSV to write; rows are appended as they arrive "
                   "(to an existing responses CSV too)")
    keys = c.add_mutually_exclusive_group()
    keys.add_argument("--api-key", default=None, help="default: $OPENAI_API_KEY; sent only over https or to "
                      "localhost / 127.0.0.1 / ::1")
    keys.add_argument("--no-api-key", action="store_true", help="send no key (e.g. to a plain-http server on "
                      "another machine while $OPENAI_API_KEY is set)")
    args = parser.parse_args(argv)
    api_key = None if args.no_api_key else (args.api_key or os.environ.get("OPENAI_API_KEY") or None)
    settings = dict(n=args.n, temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens,
                    api_key=api_key, retries=args.retries, timeout=args.timeout, min_p=args.min_p)
    try:
        check_collect(args.base_url, args.model, None, **settings)
        prompts = _read_prompts(args.prompts)
        check_collect(args.base_url, args.model, prompts, **settings)
        f, created = _open_out(args.out)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from tqdm import tqdm

    saved = 0
    writer = csv.writer(f, lineterminator="\n")

    def save(model, prompt, text):
        nonlocal saved
        writer.writerow((model, prompt, text))
        f.flush()
        saved += 1

    bar = tqdm(total=len(prompts) * args.n, desc=f"collect {args.model}", file=sys.stderr)

    def progress(fraction, message=""):
        bar.n = int(round(fraction * bar.total))
        bar.refresh()

    try:
        collect(args.base_url, args.model, prompts, progress=progress, on_response=save, **settings)
    except (RuntimeError, InputError) as exc:
        bar.close()
        print(f"error: {exc} ({saved:,} response(s) saved to {args.out})", file=sys.stderr)
        return 1
    finally:
        bar.close()
        f.close()
        if created and saved == 0:
            Path(args.out).unlink(missing_ok=True)
    print(json.dumps({"rows": saved, "out": str(args.out)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
