"""Follow-ups of the eighth sweep: an ssh_config (the default ~/.ssh/config, or a file an
`Include` names) that is a FIFO, a device or a directory; workflow inputs where one lands
inside another's destination; other tools' step fields (Snakemake's `benchmark:` and
`wrapper:`, Nextflow's `maxForks` and `cache`) saying what to write instead."""

from __future__ import annotations

import os
import threading

import pytest

from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import load_ssh_config, resolve_host


@pytest.fixture
def home(tmp_path, monkeypatch):
    """HOME in tmp_path, with ~/.ssh/config.d, and the password database's home (where ssh
    finds its default ~/.ssh/config) taken to be the same directory: the machine's own
    ~/.ssh is never written to."""
    from diamond_jupyter.transports import ssh_auth

    h = tmp_path / "home"
    (h / ".ssh" / "config.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    real = ssh_auth.ssh_home
    monkeypatch.setattr(ssh_auth, "ssh_home", lambda user=None: real(user) if user else str(h))
    return h


def _load_within(seconds: float, path: str | None) -> BaseException | None:
    """load_ssh_config(path) run in a thread: what it raised, or None; a read that waits
    for ever fails the test instead of holding it."""
    raised: list[BaseException | None] = []

    def run() -> None:
        try:
            load_ssh_config(path)
            raised.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            raised.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert raised, "load_ssh_config waited on the file"
    return raised[0]


def test_fault_a_default_ssh_config_that_is_a_fifo_is_refused_not_waited_on(home):
    """A FIFO nobody writes at ~/.ssh/config: the read waited for ever (every connection
    of the CLI, the kernel and the server with it)."""
    cfg = home / ".ssh" / "config"
    os.mkfifo(cfg)
    e = _load_within(20, None)
    assert isinstance(e, BadInput)
    assert str(e) == (f"ssh_config {cfg} is not a file but a FIFO, which may never end (a "
                      "read would wait for ever): not read; make it a regular file, or set "
                      "transport.ssh_config to one")


def test_fault_an_included_fifo_or_device_is_refused_naming_it(home):
    """A file an Include names that is a FIFO (waited on) or /dev/zero (never ends) was
    skipped unsaid, and its hosts dialled as host names; now refused, naming it."""
    ssh = home / ".ssh"
    (ssh / "config").write_text("Include config.d/*\nHost hpc\n  HostName login\n")
    os.mkfifo(ssh / "config.d" / "10-pipe")
    e = _load_within(20, None)
    assert isinstance(e, BadInput) and str(e).startswith(
        f"ssh_config {ssh}/config.d/10-pipe is not a file but a FIFO, which may never end")
    (ssh / "config.d" / "10-pipe").unlink()
    (ssh / "config.d" / "20-zero").symlink_to("/dev/zero")
    e = _load_within(20, None)
    assert isinstance(e, BadInput) and str(e).startswith(
        f"ssh_config {ssh}/config.d/20-zero is not a file but a character device")


def test_fault_a_default_ssh_config_that_is_a_directory_is_one_line(home):
    (home / ".ssh" / "config").mkdir()
    with pytest.raises(BadInput) as e:
        load_ssh_config(None)
    assert str(e.value) == (f"ssh_config {home}/.ssh/config is a directory, not a file: give "
                            "the config file (e.g. ~/.ssh/config), or set "
                            "transport.ssh_config to one")


def test_an_ssh_config_larger_than_the_bound_is_refused_not_read_whole(home, monkeypatch):
    """ssh_config was read whole however large (a multi-gigabyte file named by mistake
    filled memory); it is read through the same bounded reader as a job script now."""
    from diamond_jupyter.transports import ssh_auth

    monkeypatch.setattr(ssh_auth, "MAX_SSH_CONFIG_BYTES", 64)
    cfg = home / ".ssh" / "config"
    cfg.write_text("Host hpc\n  HostName login.example.org\n" * 4)
    with pytest.raises(BadInput) as e:
        load_ssh_config(None)
    assert str(e.value).startswith(f"ssh_config {cfg}: more than 64 bytes")
    cfg.write_text("Host hpc\n  HostName login.example.org\n")
    assert load_ssh_config(None).lookup("hpc")["hostname"] == "login.example.org"


def test_included_directories_and_broken_links_are_skipped_and_files_read(home):
    """(guard) `Include config.d/*` matching a directory or a dangling link skips them, as
    ssh does, and still reads the regular files beside them."""
    ssh = home / ".ssh"
    (ssh / "config.d" / "00-dir").mkdir()
    (ssh / "config.d" / "05-gone").symlink_to(ssh / "nowhere")
    (ssh / "config.d" / "10-hpc").write_text("Host hpc\n  HostName login.example.org\n")
    (ssh / "config").write_text("Include config.d/*\n")
    assert resolve_host(load_ssh_config(None), "hpc").hostname == "login.example.org"


# -- workflow inputs that land inside one another -----------------------------------------------

WF = """\
name: w
steps:
  - {name: a, script: ./a}
  - {name: b, script: ./b}
  - name: c
    needs: [a, b]
    script: ./c
    inputs:
      - %s
      - %s
"""


def _refused(first: str, second: str) -> str:
    from diamond_jupyter.workflow.model import load_workflow

    with pytest.raises(BadInput) as e:
        load_workflow(WF % (first, second), sites=["alpha"])
    return str(e.value)


@pytest.mark.parametrize("first,second,inner,outer", [
    ("{from: a, path: results/, as: y/}", "{from: b, path: z.txt, as: y/z}", "y/z", "y/"),
    ("{from: a, path: results/, as: y/}", "{from: b, path: more/, as: y/z/}", "y/z", "y/"),
    ("{from: b, path: z.txt, as: y/z}", "{from: a, path: results/, as: y/}", "y/z", "y/"),
    ("{from: a, path: results/}", "{from: b, path: z.txt, as: results/sub/z}",
     "results/sub/z", "results/"),
])
def test_fault_an_input_inside_a_directory_input_is_refused_naming_both(first, second, inner,
                                                                        outer):
    """A directory input and another input landing inside it (either order): both were
    copied, and which one the step found there depended on the copy order."""
    a_first = first.startswith("{from: a")
    one = "inputs[0], a's results/" if a_first else "inputs[0], b's z.txt"
    two = ("inputs[1], " + ("b's z.txt" if "z.txt" in second else "b's more/") if a_first
           else "inputs[1], a's results/")
    assert _refused(first, second) == (
        f"step 'c': input {inner!r} would land inside the directory input {outer!r} ({one}, "
        f"and {two}), and which copy wins there is undefined; give one an `as:` outside the "
        "other (line 10)")


def test_fault_two_inputs_at_one_destination_name_both_inputs():
    assert _refused("{from: a, path: out.bin, as: data/in.bin}",
                    "{from: b, path: sub/x.bin, as: ./data/in.bin}") == (
        "step 'c': two inputs arrive as 'data/in.bin' (inputs[0], a's out.bin, and inputs[1], "
        "b's sub/x.bin); name one with `as:` (line 10)")


def test_inputs_beside_each_other_are_still_accepted():
    """(guard) a directory input and a file whose name only begins like it; two files into
    one directory (`as: y/` keeps each file's name)."""
    from diamond_jupyter.workflow.model import load_workflow

    wf = load_workflow(WF % ("{from: a, path: results/, as: y/}",
                             "{from: b, path: z.txt, as: yz}"), sites=["alpha"])
    assert [i.dest for i in wf.step("c").inputs] == ["y/", "yz"]
    wf = load_workflow(WF % ("{from: a, path: p/o.txt, as: y/}",
                             "{from: b, path: q/p.txt, as: y/}"), sites=["alpha"])
    assert [i.dest for i in wf.step("c").inputs] == ["y/o.txt", "y/p.txt"]


def test_fault_diamond_workflow_run_exits_2_on_inputs_inside_one_another(tmp_path, capsys):
    import json

    from diamond_jupyter.cli import main

    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - name: alpha\n    transport: {kind: ssh, host: 192.0.2.1}\n"
                   f"store: {tmp_path / 's.sqlite'}\n")
    f = tmp_path / "w.yaml"
    f.write_text(WF % ("{from: a, path: results/, as: y/}", "{from: b, path: z, as: y/z}"))
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    assert err == (f"diamond: {f}: step 'c': input 'y/z' would land inside the directory "
                   "input 'y/' (inputs[0], a's results/, and inputs[1], b's z), and which copy "
                   "wins there is undefined; give one an `as:` outside the other (line 10)\n")
    assert json.loads(out)["reason"] == "bad-input"


# -- other tools' step fields: what to write instead ---------------------------------------------

@pytest.mark.parametrize("field,says", [
    ("benchmark: benchmarks/{sample}.tsv",
     "Snakemake's benchmark file is not written: each step's run time and memory are in the "
     "scheduler's accounting (sacct -j JOB, qstat -x -f JOB, bhist -l JOB); for them in a "
     "file, time the command in the step's script (/usr/bin/time -v COMMAND 2> FILE) and "
     "list FILE under outputs"),
    ("wrapper: v3.3.3/bio/bwa/mem",
     "Snakemake wrappers are not fetched: write the commands the wrapper runs in the step's "
     "script (script: | or script_file: PATH)"),
    ("maxForks: 4",
     "a step is one job, so it never runs in several copies; to cap a job array's tasks "
     "running at once, write it in the step's script (#SBATCH --array=1-100%10, #BSUB -J "
     "\"name[1-100]%10\", #$ -tc 10)"),
    ("cache: lenient",
     "nothing is cached between runs: every `diamond workflow run` submits every step; to "
     "skip a step whose results are already there, test for them at the top of its script "
     "([ -e RESULT ] && exit 0)"),
])
def test_fault_snakemake_and_nextflow_step_fields_say_what_to_write(field, says):
    """Before: "unknown field (accepted: ...)", as if the key were a typo."""
    from diamond_jupyter.workflow.model import load_workflow

    key = field.split(":")[0]
    with pytest.raises(BadInput) as e:
        load_workflow(f"name: w\nsteps:\n  - name: a\n    script: ./a\n    {field}\n",
                      sites=["alpha"])
    assert str(e.value) == f"the workflow: steps['a'].{key}: not supported: {says} (line 5)"
