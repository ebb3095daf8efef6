"""Slurm's REST API: request bodies, recorded replies (Slurm 22.05.8 slurmrestd, v0.0.38) and
the transport's token handling and errors, without the test bed."""

from __future__ import annotations

import base64
import json
import socket
import sys
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.model import (
    ArraySpec,
    BadInput,
    Constraints,
    Environment,
    JobSpec,
    JobState,
    Resources,
    SiteError,
)
from diamond_jupyter.transports.slurmrestd import SlurmRestTransport, read_token, token_expiry

FIX = Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
rest = slurm_rest.RestCommands(clean_env=False)


def read(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def jwt(claims: dict) -> str:
    def b64(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    return f"{b64({'alg': 'HS256'})}.{b64(claims)}.c2ln"


def test_job_description_carries_every_option():
    spec = JobSpec(
        name="sim", working_directory="/home/u/run", queue="compute", account="phys",
        stdout="/home/u/o.log", stderr="/home/u/e.log", comment="diamond:abc",
        resources=Resources(nodes=2, tasks=8, cpus_per_task=2, memory_mb=4000,
                            walltime_s=3601, gpus_per_node=1),
        constraints=Constraints(features=["avx2"], architecture="x86_64", exclusive=True),
        environment=Environment(variables={"OMP_NUM_THREADS": "2"}),
        array=ArraySpec(expression="1-4%2"), mail_events=["end"], mail_user="u@x.org")
    job, warnings = slurm_rest.job_description(spec, hold=True)
    assert job == {
        "current_working_directory": "/home/u/run",
        "environment": {"PATH": "/usr/local/bin:/usr/bin:/bin", "OMP_NUM_THREADS": "2"},
        "name": "sim", "partition": "compute", "account": "phys", "comment": "diamond:abc",
        "standard_output": "/home/u/o.log", "standard_error": "/home/u/e.log",
        "mail_user": "u@x.org", "nodes": 2, "tasks": 8, "cpus_per_task": 2,
        "gpus_per_node": 1, "memory_per_node": 4000, "time_limit": 61,
        "constraints": "avx2&arch=x86_64", "exclusive": "exclusive", "array": "1-4%2",
        "mail_type": "END", "hold": True}
    assert warnings == []


def test_job_description_joined_output_and_limits():
    spec = JobSpec(working_directory="/w", stdout="/w/out", join_output=True,
                   environment=Environment(export_all=True))
    job, warnings = slurm_rest.job_description(spec)
    assert job["standard_error"] == job["standard_output"] == "/w/out"
    assert "hold" not in job and "time_limit" not in job
    assert any("whole environment" in w for w in warnings)
    with pytest.raises(BadInput, match="working directory"):
        slurm_rest.job_description(JobSpec(script="true\n"))


def test_submit_replies():
    assert slurm_rest.parse_submit(read("submit.json")) == ("900010", [])
    # a held job comes back with its id AND error 2042, which is no failure
    assert slurm_rest.parse_submit(read("submit_held.json"))[0] == "900012"
    with pytest.raises(SiteError, match=r"Invalid partition name specified \(2000\)"):
        slurm_rest.parse_submit(read("submit_badpart.json"))
    with pytest.raises(SiteError, match="not JSON"):
        slurm_rest.parse_submit(read("no_token.txt"))


def test_jobs_reply_is_squeue_json():
    jobs = {j.native_id: j for j in slurm_rest.parse_jobs(read("jobs.json"), rest)}
    assert jobs["900010"].state == JobState.COMPLETED and jobs["900010"].exit_code == 0
    assert jobs["900010"].comment == "diamond:eee555"  # where the idempotency token travels
    assert jobs["900011"].state == JobState.FAILED and jobs["900011"].exit_code == 3
    assert jobs["900012"].state == JobState.CANCELLED  # held, then DELETE job/900012
    assert jobs["900013"].state == JobState.RUNNING
    with pytest.raises(SiteError, match="Unspecified error"):
        slurm_rest.parse_jobs(read("bad_token.json"), rest)


def test_snapshot_from_replies():
    snap = rest.parse_snapshot("beta-rest", {
        "queue": read("jobs.json"), "nodes": read("nodes.json"),
        "partitions": read("partitions.json")})
    (node,) = snap.nodes
    assert (node.cpus, node.cpus_allocated, node.memory_mb, node.partitions) == \
        (4, 2, 8000, ["batch"])
    (part,) = snap.partitions
    assert part.default and part.max_time_s == 3600 and part.total_cpus == 4
    assert part.max_nodes is None  # -1: no limit
    assert {j.state for j in snap.jobs} <= {JobState.PENDING, JobState.RUNNING}


def test_errors_of_delete_replies():
    assert slurm_rest.errors_of(json.loads(read("delete.json"))) == []
    (msg,) = slurm_rest.errors_of(json.loads(read("delete_unknown.json")))
    assert "Invalid job id specified" in msg and "999999" in msg


def test_token_reading_and_expiry():
    tok = jwt({"exp": 1800000000, "sun": "u"})
    assert read_token(f"SLURM_JWT={tok}\n", "x") == tok
    assert read_token(f"  {tok}  \n", "x") == tok
    assert token_expiry(tok) == 1800000000.0
    assert token_expiry("not.a.jwt") is None
    with pytest.raises(SiteError, match="gave no token"):
        read_token("scontrol: error: Invalid user\n", "the token command")


def _cfg(tmp_path: Path, **kw) -> TransportConfig:
    return TransportConfig(kind="slurmrestd", url="http://127.0.0.1:9", user="u", **kw)


async def test_token_is_renewed_before_it_expires(tmp_path):
    now = [1000.0]
    script = tmp_path / "token"
    script.write_text("#!/bin/sh\ncat \"$0.out\"\n")
    script.chmod(0o700)
    (tmp_path / "token.out").write_text(f"SLURM_JWT={jwt({'exp': 1300})}\n")
    t = SlurmRestTransport(_cfg(tmp_path, token_command=[str(script)], token_refresh_s=60),
                           "r", clock=lambda: now[0])
    first = await t.token()
    assert await t.token() == first and t.tokens_fetched == 1
    (tmp_path / "token.out").write_text(f"SLURM_JWT={jwt({'exp': 2000})}\n")
    now[0] = 1241.0  # within 60 s of exp=1300: fetched again
    second = await t.token()
    assert second != first and t.tokens_fetched == 2 and token_expiry(second) == 2000
    # the token never shows in what the transport says about itself
    assert second not in json.dumps(t.describe()) and second not in repr(t)


async def test_token_command_failure_and_token_file(tmp_path):
    t = SlurmRestTransport(_cfg(tmp_path, token_command=[sys.executable, "-c",
                                "import sys; sys.stderr.write('no munge'); sys.exit(3)"]), "r")
    with pytest.raises(SiteError, match=r"failed \(exit 3\): no munge"):
        await t.token()
    f = tmp_path / "jwt"
    f.write_text(jwt({"exp": 4102444800}) + "\n")
    t2 = SlurmRestTransport(_cfg(tmp_path, token_file=str(f)), "r")
    assert await t2.token() == f.read_text().strip()
    t3 = SlurmRestTransport(_cfg(tmp_path, token_file=str(tmp_path / "missing")), "r")
    with pytest.raises(SiteError, match="cannot read the token file"):
        await t3.token()


async def test_unreachable_slurmrestd_is_a_site_error(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f = tmp_path / "jwt"
    f.write_text(jwt({"exp": 4102444800}))
    cfg = TransportConfig(kind="slurmrestd", url=f"http://127.0.0.1:{port}", user="u",
                          token_file=str(f), connect_timeout_s=2)
    t = SlurmRestTransport(cfg, "beta-rest")
    with pytest.raises(SiteError, match=r"beta-rest: cannot connect to slurmrestd .*"
                                        r"connection refused; is slurmrestd running"):
        await t.request("GET", "jobs")
    with pytest.raises(BadInput, match="not possible over slurmrestd"):
        await t.run(["tail", "x"])
    await t.close()


async def test_a_slurmrestd_that_refuses_a_moment_then_listens_gets_the_request_once(
        tmp_path, monkeypatch):
    """A refused connection sends nothing: slurmrestd restarting (or its listen queue full)
    failed the call, and a submit over the REST door with it. It is tried again after a
    moment, and the request reaches the server exactly once."""
    import asyncio

    from diamond_jupyter.transports import slurmrestd as rest

    with socket.socket() as s:  # a port nothing listens on yet
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    got: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        got.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                     b"content-length: 2\r\n\r\n{}")
        await writer.drain()

    servers = []
    real_sleep = asyncio.sleep

    async def listen_then_sleep(delay: float) -> None:  # slurmrestd is back after the pause
        if not servers:
            servers.append(await asyncio.start_server(serve, "127.0.0.1", port))
        await real_sleep(0)

    monkeypatch.setattr(rest.asyncio, "sleep", listen_then_sleep)
    f = tmp_path / "jwt"
    f.write_text(jwt({"exp": 4102444800}))
    cfg = TransportConfig(kind="slurmrestd", url=f"http://127.0.0.1:{port}", user="u",
                          token_file=str(f), connect_timeout_s=2)
    t = SlurmRestTransport(cfg, "beta-rest")
    code, text = await t.request("POST", "job/submit", body={"script": "x"})
    assert (code, text) == (200, "{}") and len(got) == 1 and got[0].startswith(b"POST ")
    await t.close()
    servers[0].close()


def test_site_config_for_rest():
    ok = dict(name="b", transport={"kind": "slurmrestd", "url": "http://10.0.0.2:6820",
                                   "token_file": "/t"}, workdir="/home/u/.diamond")
    assert SiteConfig(**ok).transport.api_version == "v0.0.38"
    with pytest.raises(ValueError, match="absolute workdir"):
        SiteConfig(**{**ok, "workdir": "~/.diamond"})
    with pytest.raises(ValueError, match="needs scheduler: slurm"):
        SiteConfig(**{**ok, "scheduler": "pbs"})
    with pytest.raises(ValueError, match="token_command or token_file"):
        SiteConfig(**{**ok, "transport": {"kind": "slurmrestd", "url": "http://h:1"}})
    with pytest.raises(ValueError):
        SiteConfig(**{**ok, "transport": {"kind": "slurmrestd", "url": "ftp://h",
                                          "token_file": "/t"}})


async def test_a_stopped_slurmrestd_with_several_kept_alive_connections_is_refused(tmp_path):
    """When slurmrestd stops, every connection the client keeps alive is reset. The next
    call must not try them one by one: it opens a fresh one, is refused, and says so."""
    import asyncio
    import struct

    conns: list[asyncio.StreamWriter] = []
    both = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(writer)
        while (await reader.readuntil(b"\r\n\r\n")):
            if len(conns) < 2:
                await both.wait()  # hold the first call until a second connection opens
            else:
                both.set()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"content-length: 2\r\n\r\n{}")
            await writer.drain()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    f = tmp_path / "jwt"
    f.write_text(jwt({"exp": 4102444800}))
    cfg = TransportConfig(kind="slurmrestd", url=f"http://127.0.0.1:{port}", user="u",
                          token_file=str(f), connect_timeout_s=2)
    t = SlurmRestTransport(cfg, "beta-rest")
    replies = await asyncio.gather(t.request("GET", "jobs"), t.request("GET", "nodes"))
    assert [code for code, _ in replies] == [200, 200] and len(conns) == 2
    server.close()  # slurmrestd stops: no more listening, and its connections reset
    await server.wait_closed()
    for w in conns:
        w.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                              struct.pack("ii", 1, 0))
        w.transport.abort()
    with pytest.raises(SiteError, match=r"beta-rest: cannot connect to slurmrestd .*"
                                        r"connection refused; is slurmrestd running"):
        await t.request("GET", "jobs")
    await t.close()
