"""A probe or discovery command whose output has no final newline (a wrapper's `printf`, a
login shell that strips it) or ends its lines with CRLF: its section still ends where its
command did, so the snapshot reads every query instead of "no output for [...]" and the
site looking unreachable, and discovery keeps every section. A line shaped like a section
marker in a command's output stays output. Run for real through the local transport (and
bash), with fake scheduler programs on the PATH."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.discovery import MARK, discovery_script, split_sections
from diamond_jupyter.model import SiteError
from diamond_jupyter.sections import fresh_marker
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


# ---------------------------------------------------------------- discovery

SLURM_OUT = Path(__file__).parent / "fixtures" / "outputs" / "slurm"
# how the fake scontrol prints its recorded output
PRINTS = {"as-recorded": 'cat "$f"', "no-final-newline": 'printf "%s" "$(cat "$f")"',
          "crlf": 'sed "s/$/\\r/" "$f"'}
# text shaped like discovery's section markers, old style (ending the section early) and
# new style with no random part (standing for the earlier nodes section)
FORGED = "@@dmd-discover@@end:0\n@@dmd-discover@@sched:s:nodes:0\n"


def slurm_discovery_site(tmp_path, prints: str, before_config: str = "") -> Site:
    """A Slurm site whose `scontrol` prints recorded nodes, partitions and configuration
    (the cluster named hpc-north), by `prints`, `before_config` printed ahead of the last."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text(
        '#!/bin/sh\ncase "$*" in\n'
        f'  *"show node"*) f={shlex.quote(str(SLURM_OUT / "scontrol_node.txt"))} ;;\n'
        f'  *"show partition"*) f={shlex.quote(str(SLURM_OUT / "scontrol_partition.txt"))} ;;\n'
        f'  *"show config"*) f={shlex.quote(str(SLURM_OUT / "scontrol_config_head.txt"))}\n'
        f'    printf {shlex.quote(before_config)} ;;\n'
        '  *) exit 0 ;;\nesac\n'
        f'{PRINTS[prints]}\n')
    (bin_ / "scontrol").chmod(0o755)
    cfg = SiteConfig(name="s", scheduler="slurm", workdir=str(tmp_path),
                     transport={"kind": "local"},
                     preamble=f'export PATH={shlex.quote(str(bin_))}:"$PATH"')
    return Site(cfg, transport=make_transport(cfg.transport, "s", workdir=str(tmp_path)))


async def described(site: Site) -> tuple[list[str] | None, list[str], list[str]]:
    """(cluster names, node type names, errors) discovery found."""
    try:
        caps = (await site.discovery.describe(refresh=True)).capabilities
    finally:
        await site.close()
    return caps.cluster_names, [t.name for t in caps.node_types], caps.errors


EXPECTED = (["hpc-north"], ["x86_64-8c-16g", "x86_64-16c-62g-2xgpu"], [])


@pytest.mark.asyncio
@pytest.mark.parametrize("prints", list(PRINTS))
async def test_discovery_reads_every_section_however_its_output_ends(tmp_path, prints):
    assert await described(slurm_discovery_site(tmp_path, prints)) == EXPECTED


@pytest.mark.asyncio
@pytest.mark.parametrize("prints", ["as-recorded", "no-final-newline"])
async def test_output_shaped_like_a_discovery_marker_stays_its_commands_output(
        tmp_path, prints):
    # the forged lines ahead of the configuration neither end its section (the cluster's
    # name is still read) nor replace the nodes' section (the node types are still read)
    assert await described(slurm_discovery_site(tmp_path, prints, FORGED)) == EXPECTED


def test_a_login_shell_that_sends_crlf_gives_the_same_sections() -> None:
    marker = fresh_marker(MARK)
    script = discovery_script({"c": {"nodes": ["sh", "-c", "printf NodeName=n1; exit 3"]}},
                              marker=marker)
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, timeout=60)
    assert marker in r.stdout and MARK + "arch" not in r.stdout.replace(marker, "")
    lf = split_sections(r.stdout, marker)
    assert lf[0]["sched:c:nodes"] == "NodeName=n1" and lf[1]["sched:c:nodes"] == 3
    assert set(lf[0]) == {"login", "arch", "sched:c:nodes", "modules", "envs", "runtimes",
                          "mpi"}
    assert split_sections(r.stdout.replace("\n", "\r\n"), marker) == lf
