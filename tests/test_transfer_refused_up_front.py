"""A copy whose destination on this machine can take no copy is refused before anything is
recorded: exit 2 (bad input), one line naming the destination and why, no FAILED transfer in
the store. Before, the copy found it (a path under a file, a file where a directory was
needed) and the transfer was recorded FAILED, exit 1, as if a site had failed.

No test bed: the server's own disk and a site with a local transport."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_lease_fencing import _fed, _fed_sites

from diamond_jupyter.model import BadInput
from diamond_jupyter.store import Store

CLI = [sys.executable, "-m", "diamond_jupyter.cli"]


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    sites = _fed_sites(tmp_path)  # alpha, beta: local transports, their home tmp_path
    sites.chmod(0o600)
    env = {**os.environ, "DIAMOND_HANDOVER": "0", "HOME": str(tmp_path)}
    return subprocess.run([*CLI, "--config", str(sites), *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("notes\n")
    (tmp_path / "report.txt").write_text("the report\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "a.txt").write_text("a\n")
    return tmp_path


def _nothing_recorded(tmp_path: Path) -> None:
    assert Store(tmp_path / "store.sqlite3").list_transfers(limit=None) == []


@pytest.mark.parametrize("src,dst,said", [
    ("notes.txt", "{tmp}/report.txt/notes.txt",
     "dst: local:{tmp}/report.txt/notes.txt is under local:{tmp}/report.txt, which is a file, not "
     "a directory: a copy cannot be put there (give a path in a directory)"),
    ("notes.txt", "{tmp}/report.txt/deeper/still/notes.txt",
     "is under local:{tmp}/report.txt, which is a file"),
    ("notes.txt", "{tmp}/report.txt/",
     "dst: local:{tmp}/report.txt/ is a file, not a directory: a copy into a directory cannot be "
     "put in it"),
    ("-r tree", "{tmp}/report.txt",
     "dst: local:{tmp}/report.txt is a file, not a directory: a directory's copy cannot be put "
     "in it (give a directory path)"),
    ("notes.txt", "alpha:report.txt/x.txt",
     "dst: alpha:report.txt/x.txt is under alpha:{tmp}/report.txt, which is a file"),
    ("alpha:notes.txt", "beta:report.txt/x.txt",
     "dst: beta:report.txt/x.txt is under beta:{tmp}/report.txt, which is a file"),
])
def test_a_destination_no_copy_can_take_is_refused_before_it_is_recorded(files, src, dst,
                                                                         said):
    tmp = str(files)
    res = _cli(files, "transfer", *src.split(), dst.format(tmp=tmp))
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert said.format(tmp=tmp) in res.stderr and len(res.stderr.splitlines()) == 1
    assert (files / "report.txt").read_text() == "the report\n"  # as it was
    _nothing_recorded(files)


@pytest.mark.parametrize("src,dst,arrived", [
    ("notes.txt", "new/a/b.txt", "new/a/b.txt"),  # missing directories are made
    ("notes.txt", "report.txt", "report.txt"),  # a file named in full is replaced
    ("notes.txt", "tree/", "tree/notes.txt"),  # into a directory
    ("-r tree", "copies/", "copies/tree/a.txt"),
])
def test_destinations_a_copy_can_take_still_copy(files, src, dst, arrived):
    res = _cli(files, "transfer", *src.split(), dst)
    assert res.returncode == 0, res.stderr
    assert (files / arrived).exists()


async def test_the_facade_refuses_it_for_every_face(tmp_path, files):
    """REST, the magic and the agent's transfer call `Federation.transfer`: the same
    BadInput (a 400, an error line, a tool error), nothing recorded."""
    fed = _fed(_fed_sites(tmp_path))
    await fed.start(recover=False)
    try:
        with pytest.raises(BadInput, match="which is a file, not a directory"):
            await fed.transfer(str(files / "notes.txt"), str(files / "report.txt" / "n"))
        if os.path.exists("/dev/null"):
            with pytest.raises(BadInput, match="is a character device, not a file"):
                await fed.transfer(str(files / "notes.txt"), "/dev/null")
        _nothing_recorded(tmp_path)
    finally:
        await fed.close()


# -- a destination on an SSH site, asked over SFTP before the copy is recorded -----------------

def _ssh_sites(tmp_path: Path, sshd: Any, port: int | None = None) -> Path:
    p = tmp_path / "ssh-sites.yaml"
    door = {"kind": "ssh", "host": "127.0.0.1", "port": port or sshd.port, "user": sshd.user,
            "key_file": str(sshd.client_key), "known_hosts": str(sshd.base / "known_hosts"),
            "use_agent": False, "ssh_config": str(sshd.base / "empty_ssh_config"),
            "connect_timeout_s": 5, "reconnect_attempts": 1}
    p.write_text(json.dumps({"sites": [{"name": "far", "scheduler": "slurm",
                                        "transport": door}],
                             "transfers": {"attempts": 1},
                             "store": str(tmp_path / "store.sqlite3")}))
    return p


async def test_an_ssh_sites_destination_under_a_file_is_refused_before_it_is_recorded(
        tmp_path, files, sshd):
    """Over SFTP the copy found it and the transfer was recorded FAILED (exit 1); the site
    is asked first now: BadInput, nothing recorded. A destination it can take copies. (In
    the sshd user's home, made through a shell of that user's.)"""
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.transports import make_transport

    setup = make_transport(TransportConfig(**json.loads(
        _ssh_sites(tmp_path, sshd).read_text())["sites"][0]["transport"]), "setup")
    home = (await setup.run(["sh", "-c", 'printf %s "$HOME"'])).stdout
    work = f".diamond-up-front-{os.getpid()}"
    await setup.run(["sh", "-c", 'mkdir -p "$1" && echo "the report" > "$1/report.txt"',
                     "sh", work], check=True)
    fed = Federation(_ssh_sites(tmp_path, sshd))
    await fed.start(recover=False)
    try:
        with pytest.raises(BadInput, match=rf"^dst: far:{work}/report.txt/x.txt is under "
                                           rf"far:{home}/{work}/report.txt, which is a file"):
            await fed.transfer(str(files / "notes.txt"), f"far:{work}/report.txt/x.txt")
        with pytest.raises(BadInput, match="a copy into a directory cannot be put in it"):
            await fed.transfer(str(files / "notes.txt"), f"far:{work}/report.txt/")
        _nothing_recorded(tmp_path)
        ok = await fed.transfer(str(files / "notes.txt"), f"far:{work}/new/notes.txt")
        assert ok.state == "SUCCEEDED"
        got = await setup.run(["cat", "--", f"{work}/new/notes.txt", f"{work}/report.txt"])
        assert got.stdout == "notes\nthe report\n"
    finally:
        await fed.close()
        await setup.run(["rm", "-rf", "--", work])
        await setup.close()


async def test_an_ssh_site_that_does_not_answer_is_not_asked_first(tmp_path, files, sshd):
    """The check is a courtesy: a site that cannot be reached is recorded and tried as
    before (FAILED after its tries, saying why), not refused as bad input."""
    import socket

    from diamond_jupyter.federation import Federation

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fed = Federation(_ssh_sites(tmp_path, sshd, port))
    await fed.start(recover=False)
    try:
        rec = await fed.transfer(str(files / "notes.txt"), f"far:{files}/report.txt/x.txt")
        assert rec.state == "FAILED" and rec.error
    finally:
        await fed.close()
