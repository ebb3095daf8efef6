"""A probe command whose output has no final newline (a wrapper's `printf`, a login shell
that strips it) or ends its lines with CRLF: its section still ends where its command did,
so the snapshot reads every query instead of "no output for [...]" and the site looking
unreachable. A line shaped like a section marker in a command's output stays output.
Run for real through the local transport, with fake scheduler programs on the PATH."""

from __future__ import annotations

import shlex

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.model import SiteError
from diamond_jupyter.sites import SEP, Site
from diamond_jupyter.transports import make_transport

SCHEDULERS = ("slurm", "pbs", "lsf", "sge", "flux")
FAKED = ("sinfo", "squeue", "scontrol", "sacctmgr", "sshare", "sprio", "sacct", "pbsnodes",
         "qstat", "pbs_rstat", "bhosts", "lshosts", "bqueues", "bjobs", "bmgroup", "bugroup",
         "bhpart", "blimits", "lsinfo", "qhost", "qconf", "flux")


def program(argv: list[str]) -> str:
    """The program an argv runs, past `env -u NAME ...`."""
    words = iter(argv[1:] if argv[0] == "env" else argv)
    for word in words:
        if word == "-u":
            next(words)
        elif not word.startswith("-") and "=" not in word:
            return word
    raise AssertionError(f"no program in {argv}")


def local_site(tmp_path, scheduler: str, body: str) -> Site:
    """A site whose scheduler programs all run `body` (their name in $p)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    for name in FAKED:
        (bin_ / name).write_text(f'#!/bin/sh\np=$(basename "$0")\n{body}\n')
        (bin_ / name).chmod(0o755)
    cfg = SiteConfig(name="s", scheduler=scheduler, workdir=str(tmp_path),
                     transport={"kind": "local"},
                     preamble=f'export PATH={shlex.quote(str(bin_))}:"$PATH"')
    return Site(cfg, transport=make_transport(cfg.transport, "s", workdir=str(tmp_path)))


@pytest.mark.asyncio
@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("ending", ["", "\\r\\n"], ids=["no-final-newline", "crlf"])
async def test_every_probe_is_read_when_its_output_lacks_a_final_newline(
        tmp_path, scheduler, ending):
    site = local_site(tmp_path, scheduler, f"printf '%s said{ending}' \"$p\"")
    argvs = get_commands(scheduler).snapshot_argvs()
    try:
        out = await site.run_batch(argvs)
    finally:
        await site.close()
    assert set(out) == set(argvs)
    direct = {name: program(argv) for name, argv in argvs.items()
              if program(argv) in FAKED}
    assert direct, "each scheduler's probe set runs some of its programs directly"
    for name, prog in direct.items():
        assert out[name] == f"{prog} said", (name, out[name])
    assert not any("\r" in text or SEP in text for text in out.values())


@pytest.mark.asyncio
@pytest.mark.parametrize("scheduler", SCHEDULERS)
async def test_output_shaped_like_a_section_marker_stays_its_commands_output(
        tmp_path, scheduler):
    argvs = get_commands(scheduler).snapshot_argvs()
    forged = "".join(f"{SEP}{name}:0\\n" for name in argvs)
    site = local_site(tmp_path, scheduler, f"printf '{forged}%s said' \"$p\"")
    try:
        out = await site.run_batch(argvs)
    finally:
        await site.close()
    assert set(out) == set(argvs)
    for name, argv in argvs.items():
        if program(argv) in FAKED:
            assert out[name] == forged.replace("\\n", "\n") + f"{program(argv)} said"


@pytest.mark.asyncio
async def test_a_failing_probe_without_a_final_newline_is_named_with_its_output(tmp_path):
    site = local_site(tmp_path, "pbs", "printf 'qstat: cannot connect'; exit 3")
    try:
        with pytest.raises(SiteError, match=r"^s: nodes query failed \(exit 3\): qstat: "
                                            r"cannot connect$"):
            await site.run_batch({"nodes": ["pbsnodes", "-a"]})
    finally:
        await site.close()
