"""Everyday command line, follow-ups: a job script piped in (`diamond submit -`, `place -`,
`translate -`, as `workflow run -`), a terminal on standard input refused at once; a site
written with its partition (`--site alpha:gpu`, `gpu@alpha`) told where the partition goes;
a key YAML reads as a number or a boolean in a workflow step or a sites file named with its
step or site. Each test failed before these fixes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from diamond_jupyter.cli.handover import HANDOVER_ENV
from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.workflow.model import load_workflow

SCRIPT = "#!/bin/bash\n#SBATCH -t 5\n#SBATCH --job-name=piped\necho from-a-pipe\n"


def _local_site(tmp_path: Path) -> tuple[Path, Path]:
    """A sites file of one local site, alpha, whose fake sbatch keeps the script it is given
    as `submitted.sh` (absent: nothing was submitted); (the sites file, that script)."""
    kept = tmp_path / "submitted.sh"
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(f"#!/bin/sh\nfor a; do last=$a; done\ncp \"$last\" {kept}\necho 501\n")
    sbatch.chmod(0o755)
    cfg = tmp_path / "sites.yaml"
    cfg.write_text(f"sites:\n  - {{name: alpha, transport: {{kind: local}}, "
                   f"workdir: '{tmp_path / 'alpha'}', commands: {{sbatch: '{sbatch}'}}}}\n"
                   f"store: '{tmp_path / 's.sqlite'}'\n")
    return cfg, kept


def _diamond(*args: str, stdin: str | int | None, cwd: Path) -> subprocess.CompletedProcess:
    """`diamond ARGS` in a process of its own; `stdin` text is piped in, an int is the file
    descriptor its standard input is."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("DIAMOND_")},
           HANDOVER_ENV: "0"}
    piped = isinstance(stdin, str)
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          input=stdin if piped else None,
                          stdin=None if piped else stdin, capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


# -- 1. a job script on standard input ------------------------------------------------------

def test_submit_dash_submits_the_script_piped_in(tmp_path):
    cfg, kept = _local_site(tmp_path)
    run = _diamond("--config", str(cfg), "submit", "--site", "alpha", "-", "--json",
                   stdin=SCRIPT, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    job = json.loads(run.stdout)
    assert (job["id"], job["name"], job["time_limit_s"]) == ("alpha:501", "piped", 300)
    assert "echo from-a-pipe\n" in kept.read_text()


def test_a_script_piped_in_without_a_job_name_is_named_stdin(tmp_path):
    cfg, kept = _local_site(tmp_path)
    run = _diamond("--config", str(cfg), "submit", "--site", "alpha", "-", "--json",
                   stdin="#!/bin/bash\n#SBATCH -t 5\necho x\n", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["name"] == "stdin"
    assert "#SBATCH --job-name=stdin\n" in kept.read_text()


def test_translate_dash_translates_the_script_piped_in(tmp_path):
    run = _diamond("translate", "--to", "pbs", "-", stdin=SCRIPT, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "#PBS -N piped\n" in run.stdout and "#PBS -l walltime=00:05:00\n" in run.stdout
    assert run.stdout.rstrip().endswith("echo from-a-pipe")


def test_place_dash_reads_the_script_piped_in(tmp_path):
    """Its needs come from the piped script: a GPU nothing in the sites file has."""
    cfg, _ = _local_site(tmp_path)
    run = _diamond("--config", str(cfg), "place", "-", "--json",
                   stdin="#!/bin/bash\n#SBATCH -t 5\n#SBATCH --gres=gpu:a100:1\necho x\n",
                   cwd=tmp_path)
    assert run.returncode in (1, 2), run.stderr
    assert json.loads(run.stdout)["choice"] is None
    assert "cannot read -" not in run.stderr


@pytest.mark.parametrize("command", [["submit", "--site", "alpha"], ["place"],
                                     ["translate", "--to", "pbs"]])
def test_dash_with_a_terminal_on_standard_input_says_to_pipe_the_script_in(tmp_path, command):
    """A real terminal (a pseudo-terminal) on standard input, nothing typed: exit 2 at once
    with what to do, not a read waiting for typing; nothing submitted."""
    cfg, kept = _local_site(tmp_path)
    terminal, its_side = pty.openpty()
    try:
        run = _diamond("--config", str(cfg), *command, "-", stdin=its_side, cwd=tmp_path)
    finally:
        os.close(its_side)
        os.close(terminal)
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == (
        f"diamond: - reads the job script from standard input, which is a terminal here: "
        f"pipe it in (./make_job.sh | diamond {command[0]} -, or diamond {command[0]} - < "
        f"job.sh), or name its file")
    assert not kept.exists()


def test_dash_with_nothing_piped_in_says_so(tmp_path):
    cfg, kept = _local_site(tmp_path)
    run = _diamond("--config", str(cfg), "submit", "--site", "alpha", "-",
                   stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == ("diamond: - reads the job script from standard input, and "
                                  "it held nothing: pipe the script in, or name its file")
    assert not kept.exists()


def test_binary_bytes_piped_in_are_named_as_standard_inputs(tmp_path):
    run = _diamond("translate", "--to", "pbs", "-", stdin="\0ELF", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip() == ("diamond: the script on standard input is a binary file (it "
                                  "contains NUL bytes at offset 0); a job script must be text")


def test_a_file_named_dash_is_still_read_as_a_file(tmp_path):
    (tmp_path / "-").write_text(SCRIPT)
    run = _diamond("translate", "--to", "pbs", "-", stdin="#!/bin/bash\necho other\n",
                   cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "echo from-a-pipe" in run.stdout and "other" not in run.stdout


# -- 2. a site written with its partition ---------------------------------------------------

@pytest.mark.parametrize("written", ["alpha:gpu", "alpha/gpu", "gpu@alpha"])
def test_submit_to_a_site_with_its_partition_says_the_partition_goes_in_partition(
        tmp_path, written):
    cfg, kept = _local_site(tmp_path)
    (tmp_path / "job.sh").write_text(SCRIPT)
    run = _diamond("--config", str(cfg), "submit", "--site", written, "job.sh",
                   stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == (
        f"diamond: --site '{written}' names site alpha and partition gpu: a partition goes "
        "in its own option, --site alpha --partition gpu")
    assert not kept.exists()


def test_a_site_with_a_partition_beside_another_partition_says_to_keep_one(tmp_path):
    cfg, kept = _local_site(tmp_path)
    (tmp_path / "job.sh").write_text(SCRIPT)
    run = _diamond("--config", str(cfg), "submit", "--site", "alpha:gpu", "--partition",
                   "main", "job.sh", stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().endswith("--site alpha --partition gpu (--partition main is "
                                       "given too: keep one)")
    assert not kept.exists()


def test_an_unknown_site_holding_a_colon_is_still_an_unknown_site(tmp_path):
    cfg, kept = _local_site(tmp_path)
    (tmp_path / "job.sh").write_text(SCRIPT)
    run = _diamond("--config", str(cfg), "submit", "--site", "zeta:gpu", "job.sh",
                   stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip() == "diamond: unknown site 'zeta:gpu' (known: alpha)"
    assert not kept.exists()
