"""A slurmrestd site's file door: its logs, result files and job directories go through a
transport of their own (SFTP to the login node, or the local file system), while scheduling
stays on the REST API. Without one, every file operation says how to configure it. Real
files: a LocalTransport over a temporary directory, and SFTP to a private real sshd."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sshd_helper import transport_to

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.site_kinds import make_site
from diamond_jupyter.sites_rest import RestSite
from diamond_jupyter.transports import LocalTransport

REST = {"kind": "slurmrestd", "url": "http://127.0.0.1:9", "token_file": "/nonexistent"}


def rest_cfg(workdir: str, files: dict | None = None) -> SiteConfig:
    return SiteConfig(name="beta-rest", transport=REST, workdir=workdir,
                      **({"files": files} if files else {}))


def test_config_takes_a_file_door_only_where_it_means_something():
    cfg = rest_cfg("/home/u/.diamond-rest", {"kind": "ssh", "host": "login", "user": "u"})
    assert cfg.files is not None and cfg.files.kind == "ssh"
    with pytest.raises(ValueError, match="files .a file door. is for a slurmrestd site"):
        SiteConfig(name="a", transport={"kind": "ssh", "host": "h"},
                   files={"kind": "ssh", "host": "h"})
    with pytest.raises(ValueError, match="files.kind must be ssh or local, not slurmrestd"):
        rest_cfg("/w", dict(REST))
    with pytest.raises(ValueError):  # a typo in the door is refused, not ignored
        rest_cfg("/w", {"kind": "ssh", "hots": "login"})


@pytest.mark.parametrize("call", ["tail", "list_files", "stat", "fetch", "file_transport"])
async def test_without_a_file_door_each_file_operation_says_how_to_configure_one(call,
                                                                                   tmp_path):
    site = make_site(rest_cfg("/home/u/.diamond-rest"))
    assert isinstance(site, RestSite) and site.files is None
    with pytest.raises(BadInput) as e:
        if call == "file_transport":
            site.file_transport  # noqa: B018 - the property raises
        elif call == "fetch":
            await site.fetch("/home/u/out.txt", str(tmp_path / "out.txt"))
        else:
            await getattr(site, call)("/home/u/.diamond-rest/x.log")
    msg = str(e.value)
    assert msg.startswith("beta-rest: ") and "not possible over slurmrestd alone" in msg
    assert "files: {kind: ssh, host: LOGIN-NODE" in msg and "\n" not in msg
    assert site.job_dir("t1") == "/home/u/.diamond-rest"  # no door: no directory per job
    assert site.output_path("t1", "stdout") == "/home/u/.diamond-rest/dmd-t1.stdout.log"
    await site.close()


@pytest.fixture
async def local_door(tmp_path):
    """A REST site whose file door is this machine's file system (a server on the login
    node); the REST side is never called here."""
    work = tmp_path / "cluster" / "work"
    work.mkdir(parents=True, mode=0o700)
    site = make_site(rest_cfg(str(work), {"kind": "local"}))
    assert isinstance(site, RestSite) and isinstance(site.files, LocalTransport)
    yield site, work
    await site.close()


async def test_each_job_gets_its_own_directory_through_the_door(local_door):
    site, work = local_door
    token = "tok123"
    assert site.job_dir(token) == f"{work}/jobs/{token}"
    prepared = site.prepare(JobSpec(script="echo hi\n", name="j"), token)
    assert prepared.working_directory == f"{work}/jobs/{token}"
    assert prepared.stdout == f"{work}/jobs/{token}/stdout.log"
    assert prepared.stderr == f"{work}/jobs/{token}/stderr.log"
    rendered = await site.upload(prepared, token)
    assert rendered is not None and "echo hi" in rendered.script
    script = work / "jobs" / token / "job.sh"
    assert script.read_text() == rendered.script
    assert stat.S_IMODE(script.stat().st_mode) == 0o700
    assert site.file_transport is site.files
    assert site.describe()["files"]["kind"] == "local"


async def test_logs_results_and_fetch_through_the_door(local_door, tmp_path):
    site, work = local_door
    jd = work / "jobs" / "t9"
    (jd / "sub").mkdir(parents=True)
    (jd / "stdout.log").write_text("".join(f"line {i}\n" for i in range(1, 501)))
    (jd / "sub" / "result.dat").write_bytes(b"\x00\x01data")
    (jd / "job.sh").write_text("#!/bin/sh\n")
    os.symlink("/etc/passwd", jd / "link")  # a link is neither followed nor listed
    assert await site.tail(str(jd / "stdout.log"), 3) == "line 498\nline 499\nline 500\n"
    # bounded: only the file's last bytes are read (the first line kept may be cut)
    assert await site.tail(str(jd / "stdout.log"), 100, max_bytes=15) == "e 499\nline 500\n"
    assert await site.tail(str(jd / "missing.log")) is None
    listed = await site.list_files(str(jd))
    assert listed == sorted(listed) and set(listed) == {
        f"{jd}/job.sh", f"{jd}/stdout.log", f"{jd}/sub/result.dat"}
    await site.fetch(f"{jd}/sub/result.dat", str(tmp_path / "r.dat"))
    assert (tmp_path / "r.dat").read_bytes() == b"\x00\x01data"
    assert (await site.stat(str(jd / "sub"))).is_dir


async def test_read_end_over_real_sftp(sshd):
    """The SSH file door reads a log's end with SFTP requests alone (no command runs)."""
    t = transport_to(sshd, "beta-rest")
    try:
        name = f".diamond-read-end-{os.getpid()}.log"
        big = b"".join(b"%06d\n" % i for i in range(20000))  # 140 kB: several SFTP reads
        await t.put_bytes(big, f"~/{name}", 0o600)
        assert await t.read_end(f"~/{name}", 1 << 20) == big
        assert await t.read_end(f"~/{name}", 70000) == big[-70000:]
        assert await t.read_end(f"~/{name}", 0) == b""
        assert await t.read_end(f"~/{name}.missing", 100) is None
        assert t.describe()["shells_opened"] == 0  # nothing ran a command
        await t.run(["rm", "-f", "--", name])
    finally:
        await t.close()


async def test_the_ssh_file_door_checks_the_host_key(sshd, tmp_path):
    """An unknown host key is refused on the file door as on an SSH site (no trust on first
    use unless the entry says so)."""
    from diamond_jupyter.transports.ssh_auth import HostKeyError

    empty = tmp_path / "known_hosts"
    empty.write_text("")
    door = {"kind": "ssh", "host": "127.0.0.1", "port": sshd.port, "user": sshd.user,
            "key_file": str(sshd.client_key), "known_hosts": str(empty), "use_agent": False,
            "ssh_config": str(sshd.base / "empty_ssh_config"), "connect_timeout_s": 5,
            "reconnect_attempts": 1}
    site = make_site(rest_cfg("/tmp", door))
    try:
        with pytest.raises(HostKeyError):
            await site.tail("/etc/hostname")
    finally:
        await site.close()
    trusted = make_site(rest_cfg("/tmp", {**door, "known_hosts": str(sshd.base / "known_hosts")}))
    try:
        assert await trusted.tail("/etc/hostname") == Path("/etc/hostname").read_text()
    finally:
        await trusted.close()
