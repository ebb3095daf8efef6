"""Everyday command line, follow-ups: a job script piped in (`diamond submit -`, `place -`,
`translate -`, as `workflow run -`), a terminal on standard input refused at once; a site
written with its partition (`--site alpha:gpu`, `gpu@alpha`) told where the partition goes;
a key YAML reads as a number or a boolean in a workflow step or a sites file named with its
step or site. Each test failed before these fixes."""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from diamond_jupyter.cli.handover import HANDOVER_ENV
from diamond_jupyter.cli.main import build_parser
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


# -- 3. a key YAML reads as a number, a boolean or null -------------------------------------

STEP_FIELDS = ("name, script, script_file, site, needs, inputs, outputs, gang, retries, "
               "on_failure, dialect")


@pytest.mark.parametrize("key,kind", [("1", "a number"), ("true", "a boolean"),
                                      ("yes", "a boolean"), ("~", "null (no key)")])
def test_a_step_key_yaml_reads_as_no_text_names_the_step_the_key_and_its_line(tmp_path, key,
                                                                             kind):
    """Before: "steps['a'][1]: Keys should be strings", and `true:` named as 1 on the
    step's first line."""
    flow = tmp_path / "flow.yaml"
    flow.write_text(f"name: w\nsteps:\n  - name: a\n    site: alpha\n    script: x\n"
                    f"    {key}: foo\n")
    with pytest.raises(BadInput) as e:
        load_workflow(flow, sites=["alpha"])
    assert str(e.value) == (f"{flow}: steps['a']: key {key} is read by YAML as {kind}, not a "
                            f"name; a step's fields are named: {STEP_FIELDS} (line 6)")


def test_a_numeric_key_in_a_steps_input_and_at_the_top_names_where(tmp_path):
    with pytest.raises(BadInput) as e:
        load_workflow("name: w\nsteps:\n  - name: a\n    script: x\n    inputs:\n"
                      "      - {from: b, path: x, 5: y}\n  - {name: b, script: y}\n")
    assert str(e.value) == ("the workflow: steps['a'].inputs[0]: key 5 is read by YAML as a "
                            "number, not a name; an input's fields are named: from, path, as, "
                            "size (line 6)")
    with pytest.raises(BadInput) as e:
        load_workflow("name: w\n3: x\nsteps:\n  - {name: a, script: x}\n")
    assert str(e.value) == ("the workflow: the workflow: key 3 is read by YAML as a number, "
                            "not a name; a workflow's fields are named: name, steps, "
                            "queue_ahead, and x-* keys hold YAML anchors (line 2)")


def test_numeric_keys_inside_an_anchor_block_are_let_be():
    wf = load_workflow("name: w\nx-sizes: {1: small, 2: large}\nsteps:\n"
                       "  - {name: a, script: x}\n")
    assert [s.name for s in wf.steps] == ["a"]


def test_a_numeric_key_in_a_site_names_the_site_the_key_and_its_line(tmp_path):
    """Before: "site 'alpha' (sites[0]): 5: Keys should be strings"."""
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - name: alpha\n    transport: {kind: local}\n    5: y\n")
    with pytest.raises(BadInput) as e:
        load_config(cfg)
    said = str(e.value)
    assert said.startswith(f"sites file {cfg}: site 'alpha' (sites[0]): key 5 is read by "
                           "YAML as a number, not a name; accepted here: name, scheduler, ")
    assert said.endswith(" (line 4)") and "Keys should be strings" not in said


def test_a_boolean_key_under_a_transport_and_in_env_name_the_site_and_the_key(tmp_path):
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - name: alpha\n    transport: {kind: local, on: 1}\n")
    with pytest.raises(BadInput) as e:
        load_config(cfg)
    assert str(e.value).startswith(f"sites file {cfg}: site 'alpha' (sites[0]): transport: "
                                   "key on is read by YAML as a boolean, not a name; accepted "
                                   "here: kind, host, ")
    assert str(e.value).endswith(" (line 3)")
    cfg.write_text("sites:\n  - name: alpha\n    transport: {kind: local}\n"
                   "    env: {1: x}\n")
    with pytest.raises(BadInput) as e:
        load_config(cfg)
    assert str(e.value) == (f"sites file {cfg}: site 'alpha' (sites[0]): env: key 1 is read "
                            "by YAML as a number, not a name; quote it if it is meant as text "
                            "(line 4)")


def test_a_sites_metadata_and_anchor_blocks_may_hold_numeric_keys(tmp_path):
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("x-ids: {1: a}\nsites:\n  - name: alpha\n    transport: {kind: local}\n"
                   "    metadata: {gpus: {0: a100}}\n")
    assert load_config(cfg).sites[0].metadata == {"gpus": {0: "a100"}}


# -- 4. README's command lines and the parser agree -----------------------------------------

README = Path(__file__).resolve().parents[1] / "README.md"
# `diamond ...` at a line's start, after `$(`, `;` or `|`: up to a comment or a `)`
_RUN = re.compile(r"(?:^|\$\(|;\s*|\|\s*)diamond ([^#)]*)")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next((a.choices for a in parser._actions
                 if isinstance(a, argparse._SubParsersAction)), {})


def _readme_cli_block() -> list[str]:
    """README's command-line examples: the lines of its code blocks (fenced, or indented
    four spaces) that hold a `diamond ...` command, each with its comment lines under it."""
    block, fenced, taken = [], False, False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fenced, taken = not fenced, False
            continue
        if not (fenced or line.startswith("    ")):
            taken = False
            continue
        if _RUN.search(line.strip()):
            taken = True
        if taken:
            block.append(line)
    return block


def _commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser, list[str]]]:
    """Each README command: its subcommand path, that subcommand's parser, its words."""
    parser, found = build_parser(), []
    lines = _readme_cli_block()
    joined = "\n".join(lines).replace("\\\n", " ")
    for line in joined.splitlines():
        m = _RUN.search(line.strip())
        if m is None:
            continue
        words = shlex.split(m.group(1))
        path: tuple[str, ...] = ()
        at = parser
        while words and words[0] in _subparsers(at):
            path, at = (*path, words[0]), _subparsers(at)[words[0]]
            words = words[1:]
        found.append((path, at, words[:words.index("--")] if "--" in words else words))
    return found


def test_readme_runs_every_command_and_names_options_its_parser_has():
    commands = _commands()
    parser = build_parser()
    assert {p[0] for p, _, _ in commands if p} >= set(_subparsers(parser)) - {"status",
                                                                               "cancel",
                                                                               "login"}
    wrong = [(" ".join(path), word) for path, at, words in commands for word in words
             if word.startswith("-") and word != "-"
             and word.split("=", 1)[0] not in at._option_string_actions]
    assert wrong == []


def test_every_option_of_every_command_is_in_readmes_command_lines():
    """`diamond X --help` lists nothing README's usage leaves out (the shared --json and
    --config are said once below it)."""
    said = "\n".join(_readme_cli_block())
    parser = build_parser()
    todo, missing = [((), parser)], []
    while todo:
        path, at = todo.pop()
        todo += [((*path, n), p) for n, p in _subparsers(at).items()]
        for action in at._actions:
            if not path or action.dest in ("help", "json", "config"):
                continue
            if action.option_strings and not any(
                    re.search(re.escape(o) + r"(?![\w-])", said)
                    for o in action.option_strings):
                missing.append(f"diamond {' '.join(path)} {action.option_strings[0]}")
    assert sorted(missing) == []
