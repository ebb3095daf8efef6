"""Slurm's REST API as a transport: HTTP requests to slurmrestd with the user's JWT.

It moves request and reply bodies and keeps the token; what the bodies mean is the
`slurm_rest` dialect's business, what to ask the `RestSite`'s. It runs no command and
moves no file: the REST API has neither (`run`, `stat`, ... raise a clear error).

The token is a secret: it lives in this object's memory only, never in a message, a log
line, `describe()` or the store. It comes from the site's `token_command` (e.g.
`scontrol token lifespan=3600` where the user can run it, printing `SLURM_JWT=...`) or
`token_file`, and is fetched again `token_refresh_s` before its `exp` claim, and once more
when slurmrestd refuses it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Literal

import httpx

from ..config import TransportConfig
from ..digits import ascii_digits
from ..model import BadInput, SiteError
from .base import (
    DEFAULT_COMMAND_TIMEOUT_S,
    AuthError,
    CommandNotSent,
    CommandTimeout,
    ConnectionLost,
    OutputTooLarge,
    check_argv,
    open_regular,
    read_at_most,
)

# which of slurmrestd's APIs a call goes to: slurmctld's, or accounting (through slurmdbd)
RestApi = Literal["slurm", "slurmdb"]

MAX_TOKEN_FILE_BYTES = 64 << 10  # a JWT is a few hundred bytes: a token file, or what
# the token command prints on stdout or on stderr, is read up to this
_TOKEN = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# a refused connection (nothing was sent) is tried again this many times, after this, then
# twice this, ...: about 5 s in all, a slurmrestd's restart
REFUSED_RETRIES = 4
REFUSED_PAUSE_S = 0.5
ASSUMED_LIFESPAN_S = 1800.0  # a token whose expiry cannot be read is renewed after this


class _TooMuch(Exception):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


def _run_token_command_sync(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """`run_token_command` in a worker thread, with plain `subprocess`: a killed command is
    reaped by `wait()` here, not by asyncio's child watcher (under the test suite's many
    event loops a watcher tied to another loop never reported a killed command's end, and
    the caller waited for ever)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    got: dict[str, bytes | _TooMuch] = {}

    def read(stream: IO[bytes], name: str) -> None:
        data = bytearray()
        while chunk := stream.read1(1 << 16):
            data += chunk
            if len(data) > MAX_TOKEN_FILE_BYTES:
                got[name] = _TooMuch(name)
                proc.kill()  # the other stream then ends too
                return
        got[name] = bytes(data)

    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=read, args=(proc.stdout, "stdout"), daemon=True),
               threading.Thread(target=read, args=(proc.stderr, "stderr"), daemon=True)]
    for r in readers:
        r.start()
    deadline = time.monotonic() + timeout
    try:
        for r in readers:
            r.join(max(0.0, deadline - time.monotonic()))
        if any(r.is_alive() for r in readers):
            raise TimeoutError
        for name in ("stdout", "stderr"):
            if isinstance(got.get(name), _TooMuch):
                raise got[name]  # type: ignore[misc]
        code = proc.wait(max(0.0, deadline - time.monotonic()))
        return code, got["stdout"], got["stderr"]  # type: ignore[return-value]
    except subprocess.TimeoutExpired:
        raise TimeoutError from None
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()
        for r in readers:
            r.join(5)
        proc.stdout.close()
        proc.stderr.close()


async def run_token_command(argv: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of the token command, each stream read up to
    MAX_TOKEN_FILE_BYTES: past it, or past `timeout`, the command is ended (_TooMuch,
    TimeoutError), never left running nor read for ever (it printed without end, say a
    wrapper that runs `yes`, and the engine's memory grew until the machine ran out)."""
    return await asyncio.to_thread(_run_token_command_sync, argv, timeout)


def token_expiry(token: str) -> float | None:
    """The `exp` claim (epoch seconds) of a JWT, read without checking its signature
    (slurmctld checks it; the client only needs to know when to renew)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        exp = claims.get("exp") if isinstance(claims, dict) else None
        return float(exp) if isinstance(exp, (int, float)) else None
    except (IndexError, ValueError, TypeError):
        return None


def read_token(text: str, where: str) -> str:
    """The JWT in `text`: `SLURM_JWT=TOKEN` (what `scontrol token` prints) or bare."""
    for line in text.splitlines():
        value = line.strip().removeprefix("export ").removeprefix("SLURM_JWT=").strip()
        if _TOKEN.fullmatch(value):
            return value
    raise SiteError(f"{where} gave no token (expected SLURM_JWT=... or a bare JWT)")


class SlurmRestTransport:
    kind = "slurmrestd"

    def __init__(self, cfg: TransportConfig, site: str, *, clock=time.time) -> None:
        if not cfg.url:
            raise BadInput(f"{site}: a slurmrestd transport needs url")
        self.name = site
        self.cfg = cfg
        self.base = cfg.url.rstrip("/")
        self.user = cfg.user
        self.command_timeout_s = cfg.command_timeout_s or DEFAULT_COMMAND_TIMEOUT_S
        self._clock = clock
        self._token: str | None = None
        self._expires = 0.0
        self._token_lock = asyncio.Lock()
        self._client: httpx.AsyncClient | None = None
        self.requests = 0  # HTTP requests this process made (load figures)
        self.tokens_fetched = 0
        # told each token fetched (the site has it redacted wherever a reply quotes it)
        self.on_token: Callable[[str], None] | None = None

    def describe(self) -> dict[str, Any]:
        return {"site": self.name, "kind": self.kind, "url": self.base,
                "api_version": self.cfg.api_version, "user": self.user}

    def __repr__(self) -> str:
        return f"SlurmRestTransport({self.name!r}, url={self.base!r})"

    # -- the token ------------------------------------------------------------------------
    async def _fetch_token(self) -> str:
        cfg = self.cfg
        if cfg.token_command:
            argv = check_argv(cfg.token_command)
            try:
                code, out, err = await run_token_command(argv, timeout=30.0)
            except _TooMuch as e:
                raise SiteError(f"{self.name}: the token command {argv[0]} "
                                f"(transport.token_command) printed more than "
                                f"{MAX_TOKEN_FILE_BYTES} bytes on {e.stream}, more than a "
                                "token: ended, nothing read from it") from None
            except (OSError, asyncio.TimeoutError) as e:
                raise SiteError(f"{self.name}: the token command {argv[0]} could not run: "
                                f"{getattr(e, 'strerror', None) or type(e).__name__}") from None
            if code != 0:
                said = " ".join(err.decode(errors="replace").split())[-200:]
                raise SiteError(f"{self.name}: the token command {argv[0]} failed (exit "
                                f"{code}): {said}")
            return read_token(out.decode(errors="replace"), f"{self.name}: the token command")
        path = os.path.expanduser(cfg.token_file or "")

        def read() -> bytes:  # a FIFO would hold every request, /dev/zero never end
            with open_regular(path) as f:
                return read_at_most(f, MAX_TOKEN_FILE_BYTES + 1)
        try:
            raw = await asyncio.to_thread(read)
        except OSError as e:
            raise SiteError(f"{self.name}: cannot read the token file {path}: "
                            f"{e.strerror}") from None
        if len(raw) > MAX_TOKEN_FILE_BYTES:
            raise SiteError(f"{self.name}: the token file {path} holds more than "
                            f"{MAX_TOKEN_FILE_BYTES} bytes, more than a token: not read")
        # bytes that are not UTF-8 are no part of a token (they ended in a UnicodeDecodeError)
        return read_token(raw.decode("utf-8", errors="replace"),
                          f"{self.name}: the token file {path}")

    async def token(self, *, renew: bool = False) -> str:
        """The current token, fetched again when it is about to expire (or `renew`)."""
        async with self._token_lock:
            if renew or self._token is None or \
                    self._clock() >= self._expires - self.cfg.token_refresh_s:
                token = await self._fetch_token()
                if self.on_token is not None:
                    self.on_token(token)
                exp = token_expiry(token)
                self._token = token
                self._expires = exp if exp is not None else self._clock() + ASSUMED_LIFESPAN_S
                self.tokens_fetched += 1
            return self._token

    # -- requests -------------------------------------------------------------------------
    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.command_timeout_s, connect=self.cfg.connect_timeout_s),
            headers={"Accept": "application/json"})

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def url(self, path: str, api: RestApi = "slurm") -> str:
        """`api`: `slurm` (slurmctld's calls) or `slurmdb` (accounting, through slurmdbd)."""
        return f"{self.base}/{api}/{self.cfg.api_version}/{path.lstrip('/')}"

    async def request(self, method: str, path: str, *, body: Any = None,
                      timeout: float | None = None, api: RestApi = "slurm") -> tuple[int, str]:
        """(HTTP status, reply text) of one API call (`api`: `slurm` or `slurmdb`);
        SiteError when slurmrestd cannot be reached or refuses the token twice (the second
        time with a fresh one)."""
        renew, refused, dropped = False, 0, False
        # a submit is the one request that must not reach slurmrestd twice (a second job)
        once = method == "POST" and path.rstrip("/").endswith("job/submit")
        for _ in range(2 + REFUSED_RETRIES + 1):
            headers = {"X-SLURM-USER-TOKEN": await self.token(renew=renew)}
            if self.user:
                headers["X-SLURM-USER-NAME"] = self.user
            self.requests += 1
            try:
                r, text = await self._send(method, path, body, headers,
                                           timeout or self.command_timeout_s,
                                           fresh=once, api=api)
            except httpx.ConnectError as e:
                if refused < REFUSED_RETRIES:
                    # no connection, so nothing was sent: a moment later, once more (a
                    # slurmrestd restarting, or whose listen queue was full, refuses)
                    refused += 1
                    await asyncio.sleep(REFUSED_PAUSE_S * refused)
                    continue
                raise CommandNotSent(f"{self.name}: cannot connect to slurmrestd at "
                                     f"{self.base} ({_why(e)}; is slurmrestd running?)"
                                     ) from None
            except httpx.ConnectTimeout:
                raise CommandNotSent(f"{self.name}: cannot connect to slurmrestd at "
                                     f"{self.base} (no answer to the connection in "
                                     f"{self.cfg.connect_timeout_s:g}s)") from None
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as e:
                await self._after_drop(e, method, path, once=once, retried=dropped)
                dropped = True
                continue
            except httpx.TimeoutException:
                raise CommandTimeout(f"{self.name}: slurmrestd at {self.base} did not answer "
                                f"{method} {path} in time") from None
            except httpx.HTTPError as e:
                raise SiteError(f"{self.name}: {method} {path} at {self.base} failed: "
                                f"{_why(e)}") from None
            if not renew and _auth_refused(r, text):
                renew = True
                continue  # expired or revoked: one more try with a fresh token
            if r.status_code in (401, 403):  # refused at the door: nothing was done
                raise AuthError(f"{self.name}: slurmrestd refused the token for "
                                f"{self.user or 'this user'} (HTTP {r.status_code})",
                                door="slurmrestd")
            if r.status_code == 404 and "json" not in r.headers.get("content-type", "") \
                    and api == "slurm":  # (slurmdb's calls are optional: the caller's 404)
                raise SiteError(f"{self.name}: slurmrestd at {self.base} has no "
                                f"{self.cfg.api_version} {path} (HTTP 404; check api_version)")
            return r.status_code, text
        raise AssertionError("unreachable")

    async def _after_drop(self, e: httpx.TransportError, method: str, path: str, *,
                          once: bool, retried: bool) -> None:
        """A connection that dropped during `method path`: kept-alive connections the server
        closed are dropped, all of them, so the caller's next try opens a fresh one (refused
        at once if the server is gone); raises instead when that try was made already, or
        when a submit (`once`) went out whole."""
        # a request not written whole (WriteError): slurmrestd, reading to its length,
        # acted on none of it
        written = not isinstance(e, httpx.WriteError)
        if written and once:
            # a submit goes on a connection of its own, so the request was sent whole and
            # slurmrestd may have acted on it: its answer is lost, never sent again
            raise ConnectionLost(f"{self.name}: the connection to slurmrestd at "
                                 f"{self.base} dropped after {method} {path} was "
                                 f"sent ({_why(e)})") from None
        if retried:
            error = SiteError if written else CommandNotSent
            raise error(f"{self.name}: cannot reach slurmrestd at {self.base} "
                        f"({_why(e)}; is slurmrestd running?)") from None
        await self._drop_connections()

    async def _send(self, method: str, path: str, body: Any, headers: dict[str, str],
                    timeout: float, *, fresh: bool = False, api: RestApi = "slurm"
                    ) -> tuple[httpx.Response, str]:
        """One HTTP exchange; the reply body read up to `max_output_bytes` (decoded size):
        a larger one stops the read and fails with OutputTooLarge, never held whole.
        `fresh`: on a connection of its own, never one kept alive that the server may have
        closed meanwhile (a drop then means the request went out)."""
        if fresh:
            async with self._new_client() as client:
                return await self._exchange(client, method, path, body, headers, timeout,
                                            api)
        return await self._exchange(self._http(), method, path, body, headers, timeout, api)

    async def _exchange(self, client: httpx.AsyncClient, method: str, path: str, body: Any,
                        headers: dict[str, str], timeout: float, api: RestApi = "slurm"
                        ) -> tuple[httpx.Response, str]:
        cap = self.cfg.max_output_bytes
        too_big = OutputTooLarge(
            f"{self.name}: slurmrestd's reply to {method} {path} is larger than {cap} bytes "
            "(the transport's max_output_bytes): stopped reading it", cap=cap)
        async with client.stream(method, self.url(path, api), json=body, headers=headers,
                                 timeout=timeout) as r:
            length = r.headers.get("content-length", "").strip()
            if ascii_digits(length) and int(length) > cap:  # said at once: nothing read
                raise too_big
            buf = bytearray()
            async for chunk in r.aiter_bytes():
                buf += chunk
                if len(buf) > cap:
                    raise too_big
            return r, buf.decode(r.encoding or "utf-8", "replace")

    # -- what the REST API cannot do -------------------------------------------------------
    def _cannot(self, what: str) -> BadInput:
        return BadInput(f"{self.name}: {what} is not possible over slurmrestd (the REST API "
                        "runs no commands and reads no files); use an SSH site of the same "
                        "cluster for it")

    async def run(self, argv: list[str], **kw: Any):
        raise self._cannot(f"running {check_argv(argv)[0]}")

    run_fast = run

    async def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o644) -> None:
        raise self._cannot("writing a file")

    async def get_bytes(self, remote_path: str) -> bytes:
        raise self._cannot("reading a file")

    async def put_file(self, local_path: str, remote_path: str, mode: int | None = None) -> None:
        raise self._cannot("copying a file in")

    async def get_file(self, remote_path: str, local_path: str, *,
                       max_bytes: int | None = None, within: str | None = None) -> None:
        raise self._cannot("copying a file out")

    async def stat(self, path: str, *, follow_links: bool = True):
        raise self._cannot("looking at a file")

    async def list_files(self, root: str, *, max_depth: int = 3, limit: int = 10000,
                         special: bool = False):
        raise self._cannot("listing files")

    async def link_target(self, path: str):
        raise self._cannot("reading a link")

    async def real_path(self, path: str):
        raise self._cannot("resolving a path")

    def open_stream(self, argv: list[str], **kw: Any):
        raise self._cannot("following a file")

    async def _drop_connections(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def close(self) -> None:
        await self._drop_connections()


def _why(e: BaseException) -> str:
    """The socket-level reason under an httpx error (refused, unreachable, reset)."""
    seen: BaseException | None = e
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, OSError) and (seen.errno or seen.strerror):
            return (os.strerror(seen.errno) if seen.errno else seen.strerror).lower()
        if "refused" in str(seen).lower():
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    return " ".join((str(e) or type(e).__name__).split())[:200]


def _auth_refused(r: httpx.Response, text: str) -> bool:
    """A reply that means the token was not accepted: 401/403, or 22.05's HTTP 500 whose
    only error is the unspecified -1 that slurmctld's refusal of the credential becomes."""
    if r.status_code in (401, 403):
        return True
    if r.status_code != 500:
        return False
    try:
        errors = json.loads(text).get("errors") or []
    except (ValueError, AttributeError, RecursionError):
        return False
    return bool(errors) and all(isinstance(e, dict) and e.get("error_number") == -1
                                for e in errors)
