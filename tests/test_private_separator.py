"""The squeue separator, made afresh per query, was on the query's command line: any user of
the login node could read it (`ps`, /proc/PID/cmdline) while squeue waited for the
controller, and write it into a job's name in time to forge a queue record. Now the format
with the separator travels in SQUEUE_FORMAT (same as `-o`; a process's environment is its
owner's to read), whose value the site sends on the command's stdin, read by a fixed shell
text. Checked on the dialect (pure), and on the local and the paramiko SSH transports with
a stand-in squeue that writes down, while it runs, the command line of itself and of every
process above it (what `ps` would show), and prints records with the separator it was given.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from test_transport_ssh import cfg as ssh_cfg

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.base import PrivateArgv, private_shell, private_values
from diamond_jupyter.model import JobState
from diamond_jupyter.sites import Site
from diamond_jupyter.transports import make_transport

SEP_MARK = "#dj-"  # every separator starts so (`slurm_commands._SEP`)


def _slurm_queries() -> dict[str, list[str]]:
    slurm, wrappers = get_commands("slurm"), get_commands("pbs", flavor="slurm")
    return {"queue": slurm.snapshot_argvs()["queue"],
            "status": slurm.status_argv(["7", "8_1"]),
            "find": slurm.find_by_name_argv("run.dmd-abc", "me"),
            "find, a name with a comma": slurm.find_by_name_argv("a,b.dmd-abc"),
            "pbs wrappers' queue": wrappers.snapshot_argvs()["queue"],
            "pbs wrappers' find": wrappers.find_by_name_argv("run.dmd-abc")}


@pytest.mark.parametrize("what", list(_slurm_queries()))
def test_no_squeue_query_holds_its_separator_on_the_command_line(what):
    argv = _slurm_queries()[what]
    assert not any(SEP_MARK in a for a in argv), argv
    fmt = private_values(argv)["SQUEUE_FORMAT"]
    assert fmt.startswith("%i#dj-") and fmt.count(fmt[2:21]) == 16  # after every field
    # squeue takes SQUEUE_FORMAT only where no format option is given, and must get it
    assert "-o" not in argv and "--format" not in " ".join(argv)
    assert "SQUEUE_FORMAT" not in argv  # not unset by the `env -u` prefix


def test_private_shell_keeps_values_off_the_command_line():
    argv, stdin = private_shell(PrivateArgv(["squeue", "-h"], {"SQUEUE_FORMAT": "%i#s#"}))
    assert stdin == b"%i#s#\n"
    assert not any("#s#" in a for a in argv) and argv[-2:] == ["squeue", "-h"]
    assert private_shell(["squeue", "-h"]) == (["squeue", "-h"], None)  # plain: unchanged


@pytest.mark.parametrize("name,value", [("BAD NAME", "x"), ("lower", "x"), ("X", "a\nb"),
                                        ("X", "a\0b"), ("X;rm", "x")])
def test_a_private_variable_is_a_fixed_name_and_one_line(name, value):
    with pytest.raises(ValueError):
        PrivateArgv(["squeue"], {name: value})


# -- end to end: what other users of the login node can read while squeue runs ----------------

FIELDS = ["7", "RUNNING", "2026-12-04T10:00:05", "N/A", "2026-12-04T10:00:00", "1:00:00", "1",
          "2", "me", "batch", "N/A", "c1", "None", "(null)", "0:05", "mine"]


def _stand_in_squeue(log: Path) -> str:
    """A squeue that logs its own and its ancestors' command lines (up to this test's
    process) and the format it got, then prints one record (job 7) in that format's
    separator."""
    fields = " ".join(f"'{f}'" for f in FIELDS)
    return f"""#!/bin/sh
p=$$
i=0
while [ "$i" -lt 12 ] && [ "$p" -gt 1 ] && [ "$p" -ne {os.getpid()} ]; do
  tr '\\0' ' ' < /proc/$p/cmdline; echo
  p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2)
  i=$((i+1))
done >> {log}/cmdlines
printf '%s\\n' "$SQUEUE_FORMAT" >> {log}/formats
sep=${{SQUEUE_FORMAT#%i}}
sep=${{sep%%%T*}}
for f in {fields}; do printf '%s%s' "$f" "$sep"; done
echo
"""


SCONTROL = """#!/bin/sh
case "$*" in
  *partition*) echo 'PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP' ;;
  *node*) echo 'NodeName=c1 CPUTot=8 CPUAlloc=2 RealMemory=16000 State=MIXED Partitions=batch' ;;
esac
"""


@pytest.fixture
def bin_dir():
    """Stand-in commands in a directory every user can read (the sshd's user runs them),
    and a log directory it can write."""
    d = Path(tempfile.mkdtemp(prefix="dj-private-"))
    log = d / "log"
    log.mkdir()
    for p, text in (("squeue", _stand_in_squeue(log)), ("scontrol", SCONTROL),
                    ("sacct", "#!/bin/sh\nexit 0\n")):
        (d / p).write_text(text)
        (d / p).chmod(0o755)
    d.chmod(0o755)
    log.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


async def _check(site: Site, log: Path) -> None:
    snap = await site.snapshot(max_age_s=0)  # the batch: the queue beside other queries
    assert snap.reachable and [j.native_id for j in snap.jobs] == ["7"], snap.error
    (st,) = await site.statuses(["7"])  # one command alone
    assert st.state == JobState.RUNNING and st.name == "mine"
    formats = (log / "formats").read_text().split()
    assert len(formats) == 2 and all(f.startswith("%i#dj-") for f in formats)
    assert formats[0] != formats[1]  # fresh per query
    lines = (log / "cmdlines").read_text()
    assert "squeue" in lines and "-h" in lines  # the log is of the runs above
    for f in formats:
        assert f[2:22] not in lines  # the separator on no command line, at any level
    assert SEP_MARK not in lines


def _commands(d: Path) -> dict[str, str]:
    return {p: str(d / p) for p in ("squeue", "scontrol", "sacct")}


async def test_local_transport_sends_the_separator_off_the_command_line(bin_dir, tmp_path):
    cfg = SiteConfig(name="alpha", workdir=str(tmp_path), transport={"kind": "local"},
                     commands=_commands(bin_dir))
    site = Site(cfg, transport=make_transport(cfg.transport, "alpha", workdir=str(tmp_path)))
    try:
        await _check(site, bin_dir / "log")
    finally:
        await site.close()


@pytest.mark.parametrize("use_shell", [True, False])
async def test_ssh_transport_sends_the_separator_off_the_command_line(sshd, bin_dir,
                                                                     use_shell):
    """Over paramiko: the long-lived remote shell (values in its here-document) and a plain
    exec channel (values on the channel's stdin)."""
    transport = ssh_cfg(sshd).model_dump()
    site = Site(SiteConfig(name="alpha", workdir="~/.diamond", transport=transport,
                           commands=_commands(bin_dir)))
    site.transport.use_shell = use_shell  # type: ignore[attr-defined]
    try:
        await _check(site, bin_dir / "log")
        assert site.transport.shells_opened == (1 if use_shell else 0)  # type: ignore
    finally:
        await site.close()

