"""LocalTransport: the same contract with asyncio subprocesses on this machine."""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
import time
from pathlib import Path

import pytest

from diamond_jupyter.config import TransportConfig
from diamond_jupyter.model import BadInput, SiteError
from diamond_jupyter.transports import (
    CommandFailed,
    CommandTimeout,
    LocalTransport,
    Transport,
    make_transport,
)
from diamond_jupyter.transports.base import LineSplitter, render_command
from diamond_jupyter.transports.local import clean_environ

NASTY = [
    "$(rm -rf x)", "`id`", "a b", "it's", 'say "hi"', "new\nline", "ünïcødé ✓", "*", "", "-n",
    "\\", "$HOME", "a'b\"c$d",
]


@pytest.fixture
def local(tmp_path) -> LocalTransport:
    t = make_transport(TransportConfig(kind="local"), "here", workdir=str(tmp_path))
    assert isinstance(t, LocalTransport) and isinstance(t, Transport)
    return t


async def wait_for(pred, what: str, deadline_s: float = 120.0):
    """Poll a state until it holds; the bound only stops a hung test."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if pred():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.asyncio
async def test_arguments_stdin_env_and_status(local, tmp_path):
    r = await local.run(["printf", "%s\\0", *NASTY])
    assert r.stdout.split("\0")[:-1] == NASTY and r.ok
    assert (await local.run(["pwd"])).stdout.strip() == str(tmp_path)
    assert (await local.run(["cat"], stdin=b"x\0y" * 50000)).stdout == "x\0y" * 50000
    r = await local.run(["sh", "-c", 'printf %s "$FOO"'], env={"FOO": "a b $HOME"})
    assert r.stdout == "a b $HOME"
    r = await local.run(["sh", "-c", "echo bad >&2; exit 3"])
    assert (r.exit_status, r.stderr) == (3, "bad\n")
    with pytest.raises(CommandFailed, match="exited with status 3: bad"):
        await local.run(["sh", "-c", "echo bad >&2; exit 3"], check=True)
    assert (await local.run(["no-such-command-xyz"])).exit_status == 127
    with pytest.raises(BadInput):
        await local.run(["true"], env={"BAD NAME": "x"})
    with pytest.raises(BadInput):
        await local.run("echo hi")  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_inherited_slurm_job_variables_are_cleared(local, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "1234")
    monkeypatch.setenv("SLURM_CONF", "/etc/slurm/other.conf")
    monkeypatch.setenv("SQUEUE_FORMAT", "%i")
    monkeypatch.setenv("SACCT_FORMAT", "jobid")
    r = await local.run(["env"], env={"SLURM_TIME_FORMAT": "standard"})
    names = {ln.split("=", 1)[0] for ln in r.stdout.splitlines()}
    assert "SLURM_JOB_ID" not in names and "SQUEUE_FORMAT" not in names
    assert "SACCT_FORMAT" not in names
    assert "SLURM_CONF=/etc/slurm/other.conf" in r.stdout  # configuration is kept
    assert "SLURM_TIME_FORMAT=standard" in r.stdout  # explicit env wins
    assert clean_environ({"SLURM_NODELIST": "x", "PATH": "/bin"}) == {"PATH": "/bin"}


@pytest.mark.asyncio
async def test_preamble_runs_before_verbatim_argv(local):
    r = await local.run(["sh", "-c", 'echo "$MOD:$1"', "sh", "$(x) y"],
                        preamble="MOD=loaded; export MOD  # site config")
    assert r.stdout == "loaded:$(x) y\n"


@pytest.mark.asyncio
async def test_timeout_kills_the_process_group(local, tmp_path):
    marker, pidfile = tmp_path / "survived", tmp_path / "sleep.pid"
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout, match="timed out after 0.3 s"):
        await local.run(["sh", "-c", f"sleep 300 & echo $! > {pidfile}; wait; touch {marker}"],
                        preamble=":", timeout=0.3)
    assert time.monotonic() - t0 < 200  # the timeout ended it, not the 300 s sleep
    sleeper = int(pidfile.read_text())
    await wait_for(lambda: not _alive(sleeper), "the whole process group to be killed")
    assert not marker.exists()


@pytest.mark.asyncio
async def test_files_round_trip_atomically_with_mode(local, tmp_path):
    data = secrets.token_bytes(100_000)
    await local.put_bytes(data, "sub/dir/secret.bin", mode=0o600)
    p = tmp_path / "sub/dir/secret.bin"
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert await local.get_bytes("sub/dir/secret.bin") == data
    await local.put_bytes(b"v2", str(p), mode=0o600)
    assert sorted(os.listdir(p.parent)) == ["secret.bin"]  # no temp file left
    st = await local.stat("sub/dir/secret.bin")
    assert st is not None and st.size == 2 and not st.is_dir
    assert (await local.stat("sub")).is_dir and await local.stat("nope") is None
    out = tmp_path / "out.bin"
    await local.get_file("sub/dir/secret.bin", str(out))
    assert out.read_bytes() == b"v2" and stat.S_IMODE(out.stat().st_mode) == 0o600
    src = tmp_path / "run.sh"
    src.write_text("#!/bin/sh\necho ran\n")
    src.chmod(0o755)
    await local.put_file(str(src), "bin/run.sh")
    assert (await local.run(["./bin/run.sh"])).stdout == "ran\n"
    with pytest.raises(SiteError, match="cannot read nope"):
        await local.get_bytes("nope")


def _alive(pid: int) -> bool:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.asyncio
async def test_open_stream_follows_a_file_and_stops_on_close(local, tmp_path):
    f = tmp_path / "events.log"
    f.write_text("first\n")
    stream = local.open_stream(["sh", "-c", 'echo $$ > pid; exec tail -n +1 -F "$1"', "sh",
                                str(f)])
    assert await asyncio.wait_for(stream.__anext__(), 120) == "first"
    for i in range(3):
        with f.open("a") as fh:
            fh.write(f"event {i} ✓\n")
        assert await asyncio.wait_for(stream.__anext__(), 120) == f"event {i} ✓"
    pid = int((tmp_path / "pid").read_text())
    assert _alive(pid)
    await stream.aclose()
    await wait_for(lambda: not _alive(pid), "tail to be killed")

    task = asyncio.ensure_future(_consume(local.open_stream(["tail", "-F", str(f)]), []))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [ln async for ln in local.open_stream(["printf", "a\\nb"])] == ["a", "b"]


async def _consume(stream, out: list[str]) -> None:
    async for line in stream:
        out.append(line)


def test_render_command_quotes_everything():
    line = render_command(["echo", "$(x)", "a b"], {"K": "v w"}, preamble="module load slurm")
    assert line.splitlines()[1] == "module load slurm"
    assert line.endswith("exec env -u SQUEUE_FORMAT -u SQUEUE_FORMAT2 -u SQUEUE_SORT "
                         "-u SINFO_FORMAT -u SINFO_SORT -u SACCT_FORMAT -u SLURM_TIME_FORMAT "
                         "'K=v w' echo '$(x)' 'a b'")
    with pytest.raises(BadInput):
        render_command([])


def test_line_splitter_keeps_characters_split_across_chunks():
    s = LineSplitter()
    data = "événement ✓\nfin".encode()
    out = [ln for i in range(len(data)) for ln in s.feed(data[i : i + 1])]
    assert out + s.end() == ["événement ✓", "fin"]
