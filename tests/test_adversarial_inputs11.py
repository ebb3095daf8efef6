"""The eleventh sweep of hostile inputs and careless hands: what the ten before left.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py to
tests/test_adversarial_inputs10.py): bad input is refused with one line naming what, where
and what would be accepted, and loses nothing; what comes from a site, a job or a service is
data, never a command, a record, a line of its own or a path outside its place. Tests of
attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.model import BadInput, SiteError

CLI = [sys.executable, "-m", "diamond_jupyter.cli"]


def _sites(tmp_path: Path) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n    transport: {kind: local}\n"
                 f"store: {tmp_path / 'store.sqlite3'}\n")
    p.chmod(0o600)
    return p


def _cli(tmp_path: Path, *args: str, stdin: Any = subprocess.DEVNULL,
         timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "DIAMOND_HANDOVER": "0", "HOME": str(tmp_path)}
    return subprocess.run([*CLI, "--config", str(_sites(tmp_path)), *args], stdin=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


# -- 1. a job script file that never ends, or that nobody writes -------------------------------

@pytest.mark.parametrize("command", [["translate", "--to", "pbs"], ["place"], ["submit"]])
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_script_file_that_never_ends_is_refused_after_a_bounded_read(tmp_path, command,
                                                                        device):
    """`diamond submit /dev/zero` (a slip of the tab key) read the device for ever, its
    memory growing until the machine ran out; so did `place`, `translate` and the magics'
    FILE. The read stops past 4 MiB (Slurm's own default bound on a script): exit 2, one
    line naming the file and the bound."""
    res = _cli(tmp_path, *command, device)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and device in lines[0] and "more than 4194304 bytes" in lines[0]


async def test_a_script_fifo_nobody_writes_is_an_empty_script_not_a_wait(tmp_path):
    """A FIFO as the script (a colleague's `job.sh` that is a pipe) held the command, or the
    notebook's kernel, until someone wrote into it. It is opened without waiting: nobody
    writing, it is an empty script (refused as such); a pipe being written is read whole."""
    from diamond_jupyter.federation import Federation

    fifo = tmp_path / "job.sh"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="the job script is empty"):
        text = await asyncio.wait_for(asyncio.to_thread(Federation.read_script, fifo), 10)
        Federation.parse(text)
    r, w = os.pipe()
    os.write(w, b"#!/bin/sh\n#SBATCH -t 5\necho hi\n")
    os.close(w)
    assert Federation.read_script(f"/dev/fd/{r}") == "#!/bin/sh\n#SBATCH -t 5\necho hi\n"
    os.close(r)


def test_a_script_read_from_stdin_or_a_plain_file_still_reads(tmp_path):
    """(guard for the bound) `diamond translate --to pbs /dev/stdin < job.sh` and a plain
    file read as before."""
    job = tmp_path / "job.sh"
    job.write_text("#!/bin/bash\n#SBATCH -t 5\necho hi\n")
    with job.open() as f:
        res = _cli(tmp_path, "translate", "--to", "pbs", "/dev/stdin", stdin=f)
    assert res.returncode == 0 and "#PBS -l walltime=00:05:00" in res.stdout
    assert _cli(tmp_path, "translate", "--to", "pbs", str(job)).returncode == 0


# -- 2. a file name that sha256sum escapes -------------------------------------------------------

class _ShellSite:
    """A site's transport for SftpSide.sha256: runs the command here, as the site would."""

    name = "alpha"

    async def run(self, argv: list[str], check: bool = True, timeout: float = 0) -> Any:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        return res


@pytest.mark.parametrize("name", ["a\\b.dat", "line\nbreak.dat", "plain.dat", "-dash.dat"])
async def test_a_file_whose_name_sha256sum_escapes_is_hashed_right(tmp_path, name):
    """GNU sha256sum writes `\\SUM  NAME` for a file whose name holds a backslash or a
    newline. The engine took the first word, `\\SUM`, as the site's sum: every copy of such
    a file to or from an SSH site failed as a "checksum mismatch" and removed what had
    arrived. The sum is read after the escape now, and a leading '-' is a name."""
    from diamond_jupyter.transfer.sftp import SftpSide

    f = tmp_path / name
    f.write_bytes(b"payload\n" * 100)
    side = SftpSide.__new__(SftpSide)
    side.transport, side.label = _ShellSite(), "alpha"
    assert await side.sha256(str(f)) == hashlib.sha256(f.read_bytes()).hexdigest()


@pytest.mark.parametrize("answer", ["", "sha256sum: command not found\n",
                                    "abc  file\n", "\x1b[2J" + "0" * 64 + "  f\n"])
def test_a_sha256sum_answer_without_a_sum_is_a_site_error_not_a_mismatch(answer):
    """A site whose `sha256sum` answers something else (an alias, a wrapper's banner) is a
    site error naming the answer visibly, not a checksum mismatch that removes the data."""
    from diamond_jupyter.transfer.sftp import sha256_of_line

    with pytest.raises(SiteError, match="sha256sum answered no sha256 sum") as e:
        sha256_of_line(answer, "alpha:/x\ny")
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value)
