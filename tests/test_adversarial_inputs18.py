"""The eighteenth sweep of hostile inputs and careless hands, through the faces: the command
line (a subprocess on `test_cli_newuser.NewUser`'s fake Slurm site), the engine's script
reader (a link planted in a shared directory), and workflow files.

The standard is the earlier sweeps': bad input is refused with one line naming what, where
and what would be accepted (exit 2 on the CLI), and loses nothing: no job reaches a
scheduler, no traceback, no hang. Tests marked `fault` failed before this sweep's fixes; the
others are guards (attacks that already failed safely)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import refused, sbatch_calls

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

user = sweep_helpers.new_user


# -- 1. the job script's file ------------------------------------------------------------------

def test_fault_a_script_path_that_is_a_directory_names_the_scripts_in_it(user):
    """`diamond submit run/` for `run/job.sh` said "cannot read run/: Is a directory"; now
    what to give, with the script files the directory holds."""
    run = user.root / "run"
    run.mkdir()
    for name in ("prep.sbatch", "job.sh", "notes.txt"):
        (run / name).write_text("#!/bin/bash\necho hi\n")
    line = user.refused("submit", "--site", "alpha", "run/")
    assert line == ("diamond: run/ is a directory, not a job script: give the script's file "
                    "(e.g. run/job.sh); script files in it: job.sh, prep.sbatch"), line
    empty = user.root / "empty"
    empty.mkdir()
    line = user.refused("submit", "--site", "alpha", "empty")
    assert line == ("diamond: empty is a directory, not a job script: give the script's "
                    "file (e.g. empty/job.sh)"), line
    assert sbatch_calls(user) == []


def _planted_link(tmp_path: Path) -> tuple[Path, Path]:
    """A sticky, world-writable directory (like /tmp) holding `job.sh`, a link another user
    (uid 65534) made, leading to a private file of this user's."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    secret = tmp_path / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    (shared / "job.sh").symlink_to(secret)
    os.lchown(shared / "job.sh", 65534, 65534)
    return shared, secret


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's link needs root")
def test_fault_a_script_is_not_read_through_another_users_planted_link(tmp_path):
    """`diamond submit /tmp/shared/job.sh` where another user had made `job.sh ->
    ~victim/.ssh/id_ed25519`: the key was read and sent to the site as the job's script (its
    lines echoed in the job's error log). Refused now, naming the link, its owner and where
    it leads, as a fetch refuses to write through one."""
    shared, secret = _planted_link(tmp_path)
    for given in (shared / "job.sh", shared / "job.sh" / "x"):
        with pytest.raises(BadInput) as e:
            Federation.read_script(given)
        where = "" if given.name == "job.sh" else f" (its part {shared / 'job.sh'})"
        assert str(e.value) == (
            f"{given}{where} is a symbolic link another user (uid 65534) made in a shared "
            f"directory, leading to {secret}: a job script is not read through it; give "
            "your own file")


def test_the_users_own_link_to_a_script_is_read(user):
    """(guard for the check) The user's own link, in their own or a shared directory, is
    their choice: read and submitted."""
    shared = user.root / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "mine.sh").symlink_to(user.script)
    assert user.run("submit", "--site", "alpha", str(shared / "mine.sh"),
                    code=0).stdout.strip() == "alpha:4242"


@pytest.mark.parametrize("name,data,said", [
    ("empty.sh", b"", "diamond: the job script is empty"),
    ("true.sh", Path("/bin/true").read_bytes(), "diamond: true.sh is a binary file (it "
     "contains NUL bytes at offset"),
    ("big.sh", b"#!/bin/bash\n" + b"# pad\n" * (10 * 1024 * 1024 // 6),
     "diamond: big.sh: more than 4194304 bytes, more than a job script holds"),
])
def test_a_script_that_is_no_job_script_is_refused(user, name, data, said):
    """(guards) 0 bytes, an ELF program, 10 MB: one line each, nothing submitted."""
    (user.root / name).write_bytes(data)
    assert user.refused("submit", "--site", "alpha", name).startswith(said)
    assert sbatch_calls(user) == []


def test_a_fifo_with_no_writer_is_refused_not_waited_on_forever(user):
    """(guard) A FIFO named as the script: refused after its silence, not a hang."""
    os.mkfifo(user.root / "pipe.sh")
    line = user.refused("submit", "--site", "alpha", "pipe.sh")
    assert line.startswith("diamond: pipe.sh: a pipe that nothing wrote to for "), line
    assert sbatch_calls(user) == []


def test_a_latin1_script_is_submitted_with_its_odd_bytes_replaced(user):
    """(guard) A script saved as Latin-1 (`caf\\xe9`): submitted, the byte not UTF-8 read as
    U+FFFD, nothing lost before it."""
    (user.root / "latin.sh").write_bytes(b"#!/bin/bash\necho caf\xe9 done\n")
    assert user.run("submit", "--site", "alpha", "latin.sh", code=0).stdout.strip() \
        == "alpha:4242"
    sent = Path(sbatch_calls(user)[0].split()[-1]).read_text()
    assert "echo caf\ufffd done" in sent, sent


# -- 2. the command line -----------------------------------------------------------------------

def test_fault_site_auto_with_a_site_says_auto_is_given_alone(user):
    """`--site auto,alpha` was "unknown site 'auto,alpha'" with nothing on why."""
    line = user.refused("submit", "--site", "auto,alpha", "job.sh")
    assert ("auto lets placement choose among every site and is given alone: give site "
            "auto, or name the one site (alpha); known: alpha, ghost") in line, line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("args,said", [
    # `cancel --all` was "the following arguments are required: job": the job was not the
    # slip, the option was
    (["cancel", "--all"], "diamond cancel: error: unknown option --all (accepted: --config, "
     "--json)"),
    (["status", "--every"], "diamond status: error: unknown option --every (accepted: "),
])
def test_fault_an_unknown_option_without_the_job_names_the_option(user, args, said):
    line = user.refused(*args)
    assert line.startswith(said), line


def test_fault_an_unknown_option_without_the_job_is_named_in_json_too(user):
    res = user.run("cancel", "--all", "--json", code=2)
    assert json.loads(res.stdout) == {"reason": "bad-input", "message": "diamond cancel: "
                                      "unknown option --all (accepted: --config, --json)"}


def test_fault_a_thousand_job_ids_are_shown_as_the_first_and_last_few(user):
    """`diamond status` takes one job; 1,000 ids were all echoed in one "unrecognized
    arguments" line of 9 KB. Now the first and last few, how many, and what it takes."""
    ids = [f"alpha:{n}" for n in range(1, 1001)]
    line = user.refused("status", *ids)
    assert line == ("diamond status: error: unrecognized arguments: alpha:2 alpha:3 alpha:4 "
                    "... alpha:999 alpha:1000 (999 more than diamond status takes: JOB)"), line
    two = user.refused("status", "alpha:1", "alpha:2")
    assert two.endswith("unrecognized arguments: alpha:2 (1 more than diamond status takes: "
                        "JOB)"), two
    none = user.refused("sites", "extra")
    assert none.endswith("unrecognized arguments: extra (1 more than diamond sites takes: "
                         "no argument)"), none


@pytest.mark.parametrize("job,said", [
    ("*", "job ID '*' is malformed: expected SITE:NUMBER"),
    ("alpha:*", "no job 'alpha:*' in the store (`diamond jobs` lists the known ones)"),
    ("alpha:-5", "no job 'alpha:-5' in the store"),
])
def test_a_job_id_with_a_glob_or_a_negative_number_is_refused(user, job, said):
    """(guards) Nothing matched as a pattern, nothing asked of the site."""
    line = user.refused("status", "--", job)
    assert said in line, line


def test_the_same_site_given_twice_is_one_site_and_two_sites_are_refused(user):
    """(guards) `--site alpha --site alpha` is alpha; `--site ghost --site alpha` names
    both and submits nothing."""
    line = user.refused("submit", "--site", "ghost", "--site", "alpha", "job.sh")
    assert line.endswith("--site is given twice ('ghost' and 'alpha'); give it once"), line
    assert sbatch_calls(user) == []
    assert user.run("submit", "--site", "alpha", "--site", "alpha", "job.sh",
                    code=0).stdout.strip() == "alpha:4242"


@pytest.mark.parametrize("chdir,said", [
    ("~other", "diamond: alpha: ~user paths are not supported: '~other'"),
    ("-rf", "line 2: `#SBATCH --chdir=-rf` sets the working directory to '-rf', which starts "
     "with '-'"),
])
def test_a_working_directory_of_another_home_or_an_option_is_refused(user, chdir, said):
    """(guards) `#SBATCH --chdir=~other` and `--chdir=-rf`: one line, nothing submitted."""
    user.write("c.sh", f"#!/bin/bash\n#SBATCH --chdir={chdir}\necho hi\n")
    assert said in user.refused("submit", "--site", "alpha", "c.sh")
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("directive,written", [
    ("--chdir=/tmp/$(id)", '#SBATCH --chdir="/tmp/$(id)"'),
    ("--chdir=/scratch/`id`", '#SBATCH --chdir="/scratch/`id`"'),  # relative: in the home
    ("--export=A=$(id)", '#SBATCH --export="A=$(id)"'),
    ("--export=A=1,B=`id`", '#SBATCH --export="A=1,B=`id`"'),
])
def test_command_substitution_in_a_directive_reaches_sbatch_quoted(user, directive, written):
    """(guards) `$(...)` and backquotes in a directive's value are written on the directive
    line, quoted, which sbatch reads as text; no shell line of the job holds them."""
    user.write("s.sh", f"#!/bin/bash\n#SBATCH {directive}\necho hi\n")
    assert user.run("submit", "--site", "alpha", "s.sh", code=0).stdout.strip() == "alpha:4242"
    sent = Path(sbatch_calls(user)[0].split()[-1]).read_text().splitlines()
    assert written in sent, sent
    assert [s for s in sent if "id)" in s or "`id`" in s] == [written]


def _sbatch_says(user, stderr: str) -> None:
    """The user's fake sbatch from now on fails, saying `stderr` (the call still noted)."""
    sbatch = user.fake / "sbatch"
    sbatch.unlink()
    sbatch.write_text(f"#!/bin/sh\necho \"sbatch $*\" >> {user.fake}/calls\n"
                      f"echo '{stderr}' >&2\nexit 1\n")
    sbatch.chmod(0o755)


@pytest.mark.parametrize("stderr", [
    "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
    "(connect failure)",
    "sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host sbatch: fatal: "
    "Could not establish a configuration source",
])
def test_fault_a_scheduler_that_does_not_answer_the_submit_is_a_site_failure(user, stderr):
    """sbatch that could not reach its controller was "alpha refused the job", exit 2, as if
    the script were at fault. Now a site failure (exit 1) saying the scheduler did not
    answer; the job is kept, FAILED with that reason, not lost."""
    _sbatch_says(user, stderr)
    res = user.run("submit", "--site", "alpha", "job.sh", "--json", code=1)
    said = f"alpha: the scheduler did not answer the submit ({stderr})"
    assert json.loads(res.stdout) == {"reason": "failed", "message": f"{said}; nothing was "
                                      "submitted: try again when the scheduler is up"}
    assert len(sbatch_calls(user)) == 1
    listed = user.run("jobs", "--json", code=0).stdout
    (job,) = json.loads(listed)
    assert job["state"] == "FAILED" and job["reason"] == said, job


def test_a_job_the_scheduler_refuses_is_still_bad_input(user):
    """(guard for the above) sbatch's own refusal of the job stays exit 2."""
    _sbatch_says(user, "sbatch: error: Batch job submission failed: Invalid partition name "
                       "specified")
    line = user.refused("submit", "--site", "alpha", "job.sh")
    assert line == "diamond: alpha refused the job: sbatch: error: Batch job submission " \
                   "failed: Invalid partition name specified", line


# -- 3. an agent's request of a megabyte ------------------------------------------------------

TOO_LONG = ("characters, more than the 100000 a request may hold (all of it goes to the LLM "
            "at each of the task's turns, and into its events); write the request short and "
            "name the files it concerns")


def test_fault_a_request_longer_than_a_request_holds_is_refused_on_the_command_line(user):
    """`diamond ask` with 100,001 characters (a pasted log) said only that no LLM is set up;
    with one, all of it went to the LLM at every turn. Now refused first, whatever is set."""
    line = user.refused("ask", "x" * 100_001)
    assert line == f"diamond: ask: the request is 100001 {TOO_LONG}", line[:300]


shell = sweep_helpers.magics_shell


def test_fault_a_megabyte_cell_for_ask_is_refused(shell, user, capsys):
    assert shell.run_cell_magic("diamond", "ask", "word " * 200_000) is None
    err = capsys.readouterr().err
    assert f"ask: the request is 999999 {TOO_LONG}" in err, err[:300]
    assert "Traceback" not in err


jp_server_config = sweep_helpers.one_local_site_server
rest = sweep_helpers.rest_caller


async def test_fault_a_megabyte_prompt_over_rest_is_a_400_naming_the_bound(rest):
    """POST tasks with a 1 MB prompt was 503 "no LLM configured"; with one it was stored in
    the task's events and sent to the LLM. Now 400 naming the bound; no task."""
    code, reply = await rest("POST", "tasks", json.dumps({"prompt": "x" * 1_000_000}).encode())
    assert (code, reply) == (400, {"reason": "bad-input",
                                   "message": f"prompt is 1000000 {TOO_LONG}"}), (code, reply)
    assert (await rest("GET", "tasks"))[1] in ([], {"tasks": []})


async def test_a_request_within_the_bound_is_not_refused_for_its_length(tmp_path):
    """(guard for the bound) 100,000 characters pass the check; the engine's own `ask`
    refuses one more."""
    from diamond_jupyter.model import MAX_REQUEST_CHARS, check_request

    check_request("x" * MAX_REQUEST_CHARS)
    with pytest.raises(BadInput):
        check_request("x" * (MAX_REQUEST_CHARS + 1))


# -- 4. workflow files -------------------------------------------------------------------------

HEAD = "name: w\nsteps:\n"


def _step(name: str, extra: str = "") -> str:
    return (f"  - name: {name}\n    site: alpha\n    script: \"#!/bin/bash\\necho hi\\n\"\n"
            f"    outputs: [out.txt]\n{extra}")


@pytest.mark.parametrize("given,said", [
    ("out.txt", "inputs is a list of mappings: write inputs: [{from: STEP, path: FILE}] (one "
     "mapping per file another step wrote), not 'out.txt' (line 12)"),
    ("'prep:out.txt'", "write inputs: [{from: prep, path: out.txt}] (one mapping per file "
     "another step wrote), not 'prep:out.txt'"),
    ("3", "write inputs: [{from: STEP, path: FILE}]"),
])
def test_fault_inputs_given_as_one_string_says_how_to_write_the_list(given, said):
    """`inputs: out.txt` was "Input should be a valid list", where `needs: prep` says how."""
    msg = refused(HEAD + _step("prep") + _step("run", f"    needs: [prep]\n    inputs: "
                                                      f"{given}\n"))
    assert msg.startswith("the workflow: steps['run'].inputs: ") and said in msg, msg


@pytest.mark.parametrize("where", ["needs: [pr\u0435p]", "needs: [prep]\n    inputs: "
                                   "[{from: pr\u0435p, path: out.txt}]"])
def test_fault_a_step_name_with_a_look_alike_letter_names_the_letter(where):
    """`needs: [prеp]` with a Cyrillic `е` was "unknown step 'prеp' (did you mean 'prep'?)",
    two names that read the same (test_workflow_unseen5); now the letter that differs is
    named, in `needs` and in an input's `from`."""
    msg = refused(HEAD + _step("prep") + _step("run", f"    {where}\n"))
    assert "unknown step 'pr\u0435p' (did you mean 'prep'? in it '\u0435' is U+0435 CYRILLIC " \
           "SMALL LETTER IE: not ASCII, as step names are; steps: prep, run)" in msg, msg


@pytest.mark.parametrize("name,said", [
    ("'..'", "'..' is not a valid name (letters, digits, _ . -, ASCII only"),
    ("a/b", "'a/b' is not a valid name"),
    ("pr\u0435p", "'\u0435' is not one of them"),
])
def test_a_step_name_that_is_a_path_or_not_ascii_is_refused(name, said):
    """(guards) A step's name becomes a directory name: no `..`, `/` or look-alikes."""
    assert said in refused(HEAD + _step(name))


@pytest.mark.parametrize("extra,said", [
    ("    needs: prep\n", "needs is a list: write needs: [prep], not 'prep'"),
    ("    needs: [prep]\n    inputs: [{from: prep, path: /etc/passwd}]\n",
     "path '/etc/passwd' must be relative to the step's working directory"),
    ("    needs: [prep]\n    inputs: [{from: prep, path: ../../x}]\n",
     "path '../../x' must name a file inside the step's working directory (no '..')"),
    ("    needs: [prep]\n    inputs: [{from: prep, path: out.txt, as: ../x}]\n",
     "steps['run'].inputs[0].as: path '../x' must name a file inside"),
])
def test_needs_as_a_string_and_inputs_outside_the_directory_are_refused(extra, said):
    """(guards)"""
    assert said in refused(HEAD + _step("prep") + _step("run", extra))


def test_a_sites_file_key_with_a_typo_names_the_key_meant(user):
    """(guard) `hots:` for `host:` names host, with the accepted keys and the line."""
    bad = user.write("typo.yaml", "sites:\n  - name: a\n    transport: {kind: ssh, hots: "
                                  "x.org}\n")
    line = user.refused("sites", "--offline", "--config", str(bad))
    assert "transport.hots: unknown key (did you mean host? accepted: kind, host," in line
    assert line.endswith("(line 3)"), line
