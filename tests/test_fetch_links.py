"""Symbolic links among a job's results. A fetch left them out without a word (listings held
regular files only). A job's output is untrusted: `out -> /home/user/.ssh` or
`-> /etc/passwd` must never be followed. Now no link is followed nor made again at the
destination, and each is named in the fetch's skipped lines (stderr of `diamond fetch`, the
route's and the tool's result, the plan) with where it leads on the site: inside the job's
directory, out of it (and to where), or nowhere (a missing target, a loop). Real links: a
local site over a temporary directory, and SFTP to a private real sshd."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from test_fetch_safe import _job, _local_fed, cli_job
from test_fetch_special_files import _ssh_door

from diamond_jupyter.fetch_guard import MAX_LINK_TEXT, link_line

GUARD_S = 60  # a hang guard: each read here takes milliseconds


def _inside(target: str) -> str:
    return (f"a symbolic link to {target!r}, inside the job's directory; links are not "
            "followed (fetch its target by its own name)")


def _outside(target: str, to: str) -> str:
    return (f"a symbolic link to {target!r}, leading out of the job's directory (to {to!r}); "
            "not followed, not fetched")


def _nowhere(target: str) -> str:
    return (f"a symbolic link to {target!r}, which leads nowhere on the site (a missing target, "
            "a loop or a directory the login may not look into); not fetched")


# name in the job's directory -> what the link holds (a job's hostile and everyday links)
LINKS = {
    "latest.dat": "run1/out.dat",  # inside, to a result file
    "run1/again": "../run1",  # inside, to a directory
    "keys": "{secret}",  # out: the user's own private directory
    "passwd": "/etc/passwd",
    "up/escape": "../../outside.txt",  # out, relative
    "gone": "missing.txt",  # nowhere
    "loop": "loop",
}


def _make_job_dir(root: Path) -> tuple[Path, Path]:
    """A job's directory with two results and the LINKS; and the user's secret outside."""
    wd, secret = root / "wd", root / "secret"
    (wd / "run1").mkdir(parents=True)
    (wd / "up").mkdir()
    (wd / "result.txt").write_text("job result\n")
    (wd / "run1" / "out.dat").write_text("1 2 3\n")
    secret.mkdir()
    (secret / "id_ed25519").write_text("PRIVATE KEY\n")
    (root / "outside.txt").write_text("not the job's\n")
    for name, target in LINKS.items():
        os.symlink(target.format(secret=secret), wd / name)
    return wd, secret


def _expected(wd: Path, secret: Path, real: Path) -> list[str]:
    """The skipped lines, in the listing's order (`real`: the job's directory resolved)."""
    return sorted([
        f"gone: {_nowhere('missing.txt')}",
        f"keys: {_outside(str(secret), str(real.parent / 'secret'))}",
        f"latest.dat: {_inside('run1/out.dat')}",
        f"loop: {_nowhere('loop')}",
        f"passwd: {_outside('/etc/passwd', '/etc/passwd')}",
        f"run1/again: {_inside('../run1')}",
        f"up/escape: {_outside('../../outside.txt', str(real.parent / 'outside.txt'))}",
    ])


async def test_no_link_is_followed_and_each_is_named_with_where_it_leads(tmp_path):
    wd, secret = _make_job_dir(tmp_path)
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    dest = tmp_path / "dest"
    try:
        got = await asyncio.wait_for(fed.fetch(job, dest), GUARD_S)
        assert got.paths == [dest / "result.txt", dest / "run1" / "out.dat"]
        assert sorted(got.skipped) == _expected(wd, secret, wd.resolve())
        written = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*"))
        assert written == ["result.txt", "run1", "run1/out.dat"]  # no link, no key copied
        assert not any(p.is_symlink() for p in dest.rglob("*"))
        # named alone: said, not "the job has no result file 'keys'"
        named = await fed.fetch(job, tmp_path / "named", files=["keys"])
        assert named.paths == [] and named.skipped == [
            f"keys: {_outside(str(secret), str(secret.resolve()))}"]
        plan = await fed.plan_fetch(job, tmp_path / "other")
        assert f"passwd: {_outside('/etc/passwd', '/etc/passwd')}" in plan["skipped"]
        assert [m["source"].rsplit("/", 1)[1] for m in plan["data_movements"]] == [
            "result.txt", "out.dat"]
        _, pairs = await fed.fetch_pairs(job, dest)  # what would be written: files only
        assert [r.rsplit("/", 1)[1] for r in (r for r, _ in pairs)] == ["result.txt",
                                                                        "out.dat"]
        assert [f.rsplit("/", 1)[1] for f in await fed.files(job)] == ["result.txt",
                                                                        "out.dat"]
    finally:
        await fed.close()


async def test_a_job_directory_reached_through_a_link_still_holds_its_inside_links(tmp_path):
    """The job's directory named through a link (/home -> /gpfs/home): its links are told
    inside or out against where it really is."""
    wd, secret = _make_job_dir(tmp_path / "real")
    via = tmp_path / "via"
    os.symlink(tmp_path / "real", via)
    fed = _local_fed(tmp_path)
    job = _job(fed.store, via / "wd")
    try:
        got = await fed.fetch(job, tmp_path / "dest")
        assert sorted(got.skipped) == _expected(wd, secret, wd.resolve())
    finally:
        await fed.close()


async def test_a_hidden_link_is_left_as_hidden_before_it_is_looked_at(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    os.symlink("/etc/shadow", wd / ".profile")
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        got = await fed.fetch(job, tmp_path / "dest")
        assert got.skipped == [".profile: a hidden name, not fetched unless named (--file)"]
        named = await fed.fetch(job, tmp_path / "dest", files=[".profile"])
        assert named.skipped == [f".profile: {_outside('/etc/shadow', '/etc/shadow')}"]
    finally:
        await fed.close()


def test_a_link_s_line_is_bounded_and_shows_control_characters():
    long = "a/" * 500
    line = link_line(long, None, "/w")
    assert repr(long[:MAX_LINK_TEXT]) + "..." in line and len(line) < 400
    assert "\\n" in link_line("x\nnext line", "/w/x\nnext line", "/w")
    assert "\n" not in link_line("x\nnext line", "/w/x\nnext line", "/w")
    # a sibling directory whose name starts like the job's is not inside it
    assert "leading out" in link_line("../wd2/f", "/s/wd2/f", "/s/wd")
    assert "inside" in link_line(".", "/s/wd", "/s/wd")
    assert link_line(None, None, None) == "a symbolic link, not followed; not fetched"


async def test_past_the_bound_links_are_named_without_asking_where_they_lead(tmp_path,
                                                                            monkeypatch):
    import diamond_jupyter.federation as federation

    monkeypatch.setattr(federation, "MAX_LINKS_RESOLVED", 2)
    wd = tmp_path / "wd"
    wd.mkdir()
    for i in range(4):
        os.symlink("/etc/passwd", wd / f"l{i}")
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        got = await fed.fetch(job, tmp_path / "dest")
        assert got.skipped == [f"l0: {_outside('/etc/passwd', '/etc/passwd')}",
                               f"l1: {_outside('/etc/passwd', '/etc/passwd')}",
                               "l2: a symbolic link, not followed; not fetched",
                               "l3: a symbolic link, not followed; not fetched"]
    finally:
        await fed.close()


def test_diamond_fetch_names_each_link_on_stderr(tmp_path):
    wd, secret = _make_job_dir(tmp_path)
    job, env = cli_job(tmp_path, wd)
    dest = tmp_path / "dest"
    r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "fetch", job, str(dest)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(dest / "result.txt"), str(dest / "run1/out.dat")]
    said = [line for line in r.stderr.splitlines() if line.startswith("diamond: skipped ")]
    assert sorted(said) == [f"diamond: skipped {x}"
                            for x in _expected(wd, secret, wd.resolve())]
    assert not (dest / "keys").exists() and not (dest / "passwd").exists()


# -- over SFTP --------------------------------------------------------------------------------

async def test_over_sftp_links_are_listed_named_and_never_followed(sshd, tmp_path):
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports import make_transport

    fed = _local_fed(tmp_path)
    t = make_transport(TransportConfig(**_ssh_door(sshd)), "here")
    fed.sites["here"] = Site(fed.config.sites[0], transport=t)
    fed.monitors["here"].site = fed.sites["here"]
    home = (await t.run(["sh", "-c", 'printf %s "$HOME"'])).stdout
    base = f"{home}/.diamond-links-{os.getpid()}"
    wd, secret = f"{base}/wd", f"{base}/secret"
    try:
        for argv in (["mkdir", "-p", "--", f"{wd}/run1", f"{wd}/up", secret],
                     ["sh", "-c", 'echo "job result" > "$1/result.txt"; echo "1 2 3" > '
                      '"$1/run1/out.dat"; echo KEY > "$2/id_ed25519"; echo no > '
                      '"$3/outside.txt"', "sh", wd, secret, base]):
            await t.run(argv, check=True)
        for name, target in LINKS.items():
            await t.run(["ln", "-s", "--", target.format(secret=secret), f"{wd}/{name}"],
                        check=True)
        listed = await t.list_files(wd, special=True)
        assert sorted(f.path[len(wd) + 1:] for f in listed) == sorted(
            [*LINKS, "result.txt", "run1/out.dat"])
        assert [f.path[len(wd) + 1:] for f in await t.list_files(wd)] == ["result.txt",
                                                                          "run1/out.dat"]
        assert await t.link_target(f"{wd}/passwd") == ("/etc/passwd", "/etc/passwd")
        assert await t.link_target(f"{wd}/loop") == ("loop", None)
        assert await t.real_path(f"{wd}/none") is None
        # a target in a directory the login may not look into leads nowhere it can see
        for argv in (["mkdir", "--", f"{base}/locked"], ["touch", "--", f"{base}/locked/f"],
                     ["chmod", "000", "--", f"{base}/locked"],
                     ["ln", "-s", "--", "locked/f", f"{base}/lk"]):
            await t.run(argv, check=True)
        assert await t.link_target(f"{base}/lk") == ("locked/f", None)
        await t.run(["chmod", "700", "--", f"{base}/locked"], check=True)

        job = _job(fed.store, Path(wd))
        dest = tmp_path / "dest"
        got = await asyncio.wait_for(fed.fetch(job, dest), GUARD_S)
        assert got.paths == [dest / "result.txt", dest / "run1" / "out.dat"]
        assert (dest / "run1" / "out.dat").read_text() == "1 2 3\n"
        assert sorted(got.skipped) == _expected(Path(wd), Path(secret), Path(wd))
        written = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*"))
        assert written == ["result.txt", "run1", "run1/out.dat"]
    finally:
        await t.run(["rm", "-rf", "--", base])
        await fed.close()
