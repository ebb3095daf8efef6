"""Result files that are not regular files: a job left a FIFO, a device node or a socket in
its directory. A fetch left them out without a word (the site's listing held regular files
only); now each is named in the fetch's skipped lines (stderr of `diamond fetch`, the result
of the route, the tool and the plan), and every other file is fetched as before. A
slurmrestd site's file door read a log that is a FIFO over SFTP (the read waited for ever)
or a link to a device (a local door failed the whole `diamond logs`); now such a log is
refused and said, as on a site with a shell (tests/test_adversarial_inputs10.py). Real
files: a local site over a temporary directory, and SFTP to a private real sshd."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_fetch_safe import _job, _local_fed, cli_job

from diamond_jupyter.fetch_guard import not_regular
from diamond_jupyter.sites import NotARegularFile

GUARD_S = 60  # a hang guard: each read here takes milliseconds


def _fifo_line(rel: str, kind: str = "a FIFO") -> str:
    return (f"{rel}: {kind}, not a regular file (reading it could wait for ever or never "
            "end); not fetched")


@pytest.fixture
def results(tmp_path):
    """A job's directory: two results, a FIFO and a socket (a short path: sockets' names are
    bounded)."""
    wd = tmp_path / "wd"
    (wd / "sub").mkdir(parents=True)
    (wd / "result.txt").write_text("job result\n")
    (wd / "sub" / "data.csv").write_text("a,b\n")
    os.mkfifo(wd / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(wd / "sub" / "sock"))
    yield wd
    sock.close()


async def test_a_fetch_names_each_fifo_and_socket_and_copies_the_rest(tmp_path, results):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, results)
    dest = tmp_path / "dest"
    try:
        got = await asyncio.wait_for(fed.fetch(job, dest), GUARD_S)
        assert got.paths == [dest / "result.txt", dest / "sub" / "data.csv"]
        assert (dest / "sub" / "data.csv").read_text() == "a,b\n"
        assert got.skipped == [_fifo_line("pipe"), _fifo_line("sub/sock", "a socket")]
        assert not (dest / "pipe").exists() and not (dest / "sub" / "sock").exists()
        # named alone: said, not "the job has no result file 'pipe'"
        named = await asyncio.wait_for(fed.fetch(job, dest, files=["pipe"]), GUARD_S)
        assert named.paths == [] and named.skipped == [_fifo_line("pipe")]
        plan = await fed.plan_fetch(job, tmp_path / "other")
        assert _fifo_line("pipe") in plan["skipped"]
        assert [m["source"].rsplit("/", 1)[1] for m in plan["data_movements"]] == [
            "result.txt", "data.csv"]
        _, pairs = await fed.fetch_pairs(job, dest)  # what would be written: files only
        assert [r.rsplit("/", 1)[1] for r, _ in pairs] == ["result.txt", "data.csv"]
        assert [f.rsplit("/", 1)[1] for f in await fed.files(job)] == ["result.txt",
                                                                        "data.csv"]
    finally:
        await fed.close()


def test_devices_are_named_for_what_they_are():
    dest = Path("/d")
    chosen = [("/w/zero", dest / "zero"), ("/w/sda", dest / "sda"), ("/w/ok", dest / "ok"),
              ("/w/unlisted", dest / "unlisted")]
    modes = {"/w/zero": stat.S_IFCHR | 0o666, "/w/sda": stat.S_IFBLK | 0o660,
             "/w/ok": stat.S_IFREG | 0o644}
    kept, skipped = not_regular(dest, chosen, modes)
    assert kept == [("/w/ok", dest / "ok"), ("/w/unlisted", dest / "unlisted")]
    assert skipped == [_fifo_line("zero", "a character device"),
                       _fifo_line("sda", "a block device")]


def test_diamond_fetch_says_each_skipped_one_on_stderr(tmp_path, results):
    job, env = cli_job(tmp_path, results)
    dest = tmp_path / "dest"
    r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "fetch", job, str(dest)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(dest / "result.txt"), str(dest / "sub/data.csv")]
    assert f"diamond: skipped {_fifo_line('pipe')}" in r.stderr.splitlines()
    assert f"diamond: skipped {_fifo_line('sub/sock', 'a socket')}" in r.stderr.splitlines()
    r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "fetch", job,
                        str(tmp_path / "again"), "--json"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert json.loads(r.stdout)["skipped"] == [_fifo_line("pipe"),
                                               _fifo_line("sub/sock", "a socket")]


# -- over SFTP, and a slurmrestd site's file door ---------------------------------------------

def _ssh_door(sshd) -> dict:
    return {"kind": "ssh", "host": "127.0.0.1", "port": sshd.port, "user": sshd.user,
            "key_file": str(sshd.client_key), "known_hosts": str(sshd.base / "known_hosts"),
            "use_agent": False, "ssh_config": str(sshd.base / "empty_ssh_config"),
            "connect_timeout_s": 5}


async def test_an_sftp_listing_gives_the_fifos_only_when_asked(sshd, tmp_path):
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.transports import make_transport

    t = make_transport(TransportConfig(**_ssh_door(sshd)), "sftp")
    d = f".diamond-special-{os.getpid()}"
    try:
        await t.run(["mkdir", "-p", "--", f"{d}/sub"])
        await t.run(["mkfifo", "--", f"{d}/sub/pipe"])
        await t.put_bytes(b"x\n", f"~/{d}/out.txt", 0o600)
        await t.run(["ln", "-s", "/dev/zero", f"{d}/zero"])  # a link: listed, not followed
        plain = await t.list_files(f"~/{d}")
        assert [f.path.rsplit("/", 1)[1] for f in plain] == ["out.txt"]
        every = await t.list_files(f"~/{d}", special=True)
        assert sorted(f.path.rsplit("/", 1)[1] for f in every) == ["out.txt", "pipe", "zero"]
        assert stat.S_ISFIFO(next(f for f in every if f.path.endswith("pipe")).mode)
        assert stat.S_ISLNK(next(f for f in every if f.path.endswith("zero")).mode)
    finally:
        await t.run(["rm", "-rf", "--", d])
        await t.close()


@pytest.mark.parametrize("door", ["local", "ssh"])
@pytest.mark.parametrize("kind", ["fifo", "zero"])
async def test_the_rest_doors_log_that_is_a_fifo_or_a_device_is_refused(door, kind, sshd,
                                                                       tmp_path):
    """The local door over this machine's files; the SSH door over the sshd user's home
    (made there through a shell of that user's)."""
    from test_rest_files import rest_cfg

    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.site_kinds import make_site
    from diamond_jupyter.transports import make_transport

    setup = make_transport(TransportConfig(**_ssh_door(sshd)), "setup")
    if door == "local":
        work = str(tmp_path / "work")
        os.mkdir(work)
        run = None
    else:
        home = (await setup.run(["sh", "-c", 'printf %s "$HOME"'])).stdout
        work = f"{home}/.diamond-door-{os.getpid()}-{kind}"
        run = setup.run
    make = {"fifo": ["mkfifo", "--", f"{work}/stdout.log"],
            "zero": ["ln", "-s", "/dev/zero", f"{work}/stdout.log"]}[kind]
    err = ["sh", "-c", 'echo "$2" > "$1"', "sh", f"{work}/stderr.log", "the job's stderr"]
    for argv in (["mkdir", "-p", "--", work], make, err):
        if run is None:
            subprocess.run(argv, check=True)
        else:
            await run(argv)
    site = make_site(rest_cfg(work, {"kind": "local"} if door == "local"
                              else _ssh_door(sshd)))
    try:
        with pytest.raises(NotARegularFile) as e:
            await asyncio.wait_for(site.tail(f"{work}/stdout.log"), GUARD_S)
        assert str(e.value) == (f"beta-rest: {work}/stdout.log is not a regular file (a "
                                "FIFO, a device or a link to one): not read")
        assert await asyncio.wait_for(site.tail(f"{work}/stderr.log"), GUARD_S) == \
            "the job's stderr\n"
        assert await site.tail(f"{work}/none.log") is None
    finally:
        await site.close()
        if run is not None:
            await run(["rm", "-rf", "--", work])
        await setup.close()
