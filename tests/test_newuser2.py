"""A new user's first hour, second sweep: what such a user types wrong, through the real
command line (a subprocess, no test bed: `test_cli_newuser.NewUser`'s fake Slurm site `alpha`
and unreachable `ghost`) and the magics (an in-process engine). Each answer is one specific
line (what, where, what would be accepted) and loses nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sweep_helpers
from test_cli_newuser import NewUser, _interrupt, _started

from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


user = sweep_helpers.new_user


@pytest.fixture
def jp_server_config(user, data_dir):
    """The REST face: a Jupyter server with the extension on the new user's sites file."""
    from server_conftest import diamond_config

    return diamond_config(str(user.sites), str(user.store_path))


def _sent_script(user: NewUser) -> str:
    """The batch script the (fake) sbatch was given."""
    calls = (user.fake / "calls").read_text().splitlines()
    return Path(next(c for c in calls if c.startswith("sbatch")).split()[-1]).read_text()


# -- no sites file at all ------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["sites"], ["queue", "alpha"], ["describe", "alpha"], ["jobs"],
                                  ["status", "alpha:1"], ["submit", "job.sh"],
                                  ["place", "job.sh", "--explain"], ["cancel", "alpha:1"],
                                  ["logs", "alpha:1"], ["wait", "alpha:1"]])
def test_every_command_without_a_sites_file_says_where_it_looked_and_how_to_make_one(user, args):
    res = user.run(*args, "--json", config=None, code=2)
    line = res.stderr.strip().splitlines()[-1]
    assert line == (f"diamond: sites file {user.home}/.config/diamond/sites.yaml not found "
                    "(give --config FILE or set DIAMOND_CONFIG; `diamond testbed up` writes one)")
    assert json.loads(res.stdout) == {"reason": "bad-input", "message": line[len("diamond: "):]}


def test_translate_needs_no_sites_file(user):
    res = user.run("translate", "--to", "pbs", "job.sh", config=None, code=0)
    assert "#PBS" in res.stdout


# -- the sites file's path ------------------------------------------------------------------------

def test_a_quoted_tilde_in_diamond_config_is_the_home(user):
    """DIAMOND_CONFIG="~/sites.yaml" (quoted: the shell leaves ~ as it is) was "not found"."""
    (user.home / "mine.yaml").write_text(user.sites.read_text())
    res = user.run("sites", "--offline", "--json", config="~/mine.yaml", code=0)
    assert [s["name"] for s in json.loads(res.stdout)] == ["alpha", "ghost"]


def test_config_equals_tilde_is_the_home(user):
    """`--config=~/sites.yaml` reaches the program unexpanded (no shell expands ~ after =)."""
    (user.home / "mine.yaml").write_text(user.sites.read_text())
    res = user.run("sites", "--offline", "--config=~/mine.yaml", config=None, code=0)
    assert res.stdout.split()[0] == "alpha"


def test_diamond_config_naming_a_directory_says_to_give_the_file_in_it(user):
    res = user.run("sites", config=str(user.root), code=2)
    assert res.stderr.strip() == (f"diamond: sites file {user.root} is a directory (give the "
                                  f"YAML file in it, e.g. {user.root / 'sites.yaml'})")


def test_two_sites_on_the_same_host_are_both_kept(user):
    """Two schedulers behind one login host is a real setup: neither is lost."""
    user.sites = user.write("dup.yaml", "sites:\n  - name: a\n    transport: {host: h.example}\n"
                                        "  - name: b\n    scheduler: pbs\n"
                                        "    transport: {host: h.example}\n")
    rows = json.loads(user.run("sites", "--offline", "--json", code=0).stdout)
    assert [(r["name"], r["scheduler"], r["host"]) for r in rows] == [
        ("a", "slurm", "h.example"), ("b", "pbs", "h.example")]


# -- the store's path ----------------------------------------------------------------------------

def test_a_store_path_that_is_a_directory_says_to_give_a_file(user):
    """`store: DIR` ended every command with SQLite's traceback ("unable to open database
    file")."""
    (user.root / "sdir").mkdir()
    user.sites = user.write("s.yaml", f"sites:\n{user.alpha}store: {user.root / 'sdir'}\n")
    line = user.refused("jobs", "--json", code=2)  # the sites file's mistake, on its line
    assert line == (f"diamond: sites file {user.sites}: store: '{user.root / 'sdir'}' is a "
                    "directory; the store is one SQLite file: name the file in it (e.g. "
                    f"{user.root / 'sdir' / 'store.sqlite3'}) (line 5)")


def test_a_store_path_under_a_file_names_the_file(user):
    """It said only "[Errno 20] Not a directory: PATH", not which part or that it was the
    store."""
    user.write("afile", "x")
    store = user.root / "afile" / "sub" / "store.sqlite3"
    user.sites = user.write("s.yaml", f"sites:\n{user.alpha}store: {store}\n")
    line = user.refused("submit", "--site", "alpha", "job.sh", code=1)
    assert line == (f"diamond: store {store} cannot be made: {user.root / 'afile'} is a file, "
                    "not a directory")
    assert not (user.fake / "calls").exists()


def test_a_store_of_the_first_schema_is_migrated_and_a_copy_kept(user):
    import sqlite3

    from diamond_jupyter.store import db

    conn = sqlite3.connect(user.store_path)
    db.apply_migration(conn, db.MIGRATIONS[0])
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    assert json.loads(user.run("jobs", "--json", code=0).stdout) == []
    conn = sqlite3.connect(user.store_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    conn.close()
    assert user.store_path.with_name(user.store_path.name + ".v1.bak").is_file()
    assert user.run("submit", "--site", "alpha", "job.sh", code=0).stdout.strip() == \
        "alpha:4242"


# -- names and ids ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["submit", "--site", "alhpa", "job.sh"],
                                  ["queue", "alhpa"], ["jobs", "--site", "alhpa"]])
def test_a_transposed_site_name_suggests_the_site(user, args):
    line = user.refused(*args)
    assert "unknown site 'alhpa' (did you mean alpha? known: alpha, ghost)" in line
    assert not (user.fake / "calls").exists()


def test_status_of_a_job_of_another_store_says_it_is_not_in_this_one(user, tmp_path):
    (tmp_path / "other").mkdir()
    other = NewUser(tmp_path / "other")
    other.job("alpha:555")
    line = user.refused("status", "alpha:555")
    assert line == ("diamond: no job 'alpha:555' in the store (`diamond jobs` lists the "
                    "known ones)")


# -- options: a prefix of another option, the magic's names ------------------------------------

def test_time_with_wait_is_the_jobs_time_limit_not_the_waits_timeout(user):
    """`submit --time 90 --wait` was read as `--timeout 90` (a prefix of it): the command
    gave up waiting after 90 s and the job had no time limit."""
    res = user.run("submit", "--site", "alpha", "--time", "90", "--wait", "--timeout", "1",
                   "--poll", "1", "job.sh", "--json", code=1)
    assert "timed out after 1s waiting for alpha:4242" in res.stderr
    assert "#SBATCH --time=01:30:00" in _sent_script(user)


@pytest.mark.parametrize("text,limit", [("90", "01:30:00"), ("1:30:00", "01:30:00"),
                                        ("1-0", "1-00:00:00"), ("1:30", "00:01:30")])
def test_time_takes_each_sbatch_form(user, text, limit):
    user.run("submit", "--site", "alpha", "--time", text, "job.sh", code=0)
    assert f"#SBATCH --time={limit}\n" in _sent_script(user)


@pytest.mark.parametrize("text,form", [("90m", "01:30:00"), ("2h", "02:00:00"),
                                       ("1d", "1-00:00:00")])
def test_time_with_a_unit_names_the_form_to_give(user, text, form):
    res = user.run("submit", "--site", "alpha", "--time", text, "job.sh", "--json", code=2)
    line = res.stderr.strip().splitlines()[-1]
    assert json.loads(res.stdout)["reason"] == "bad-input"
    assert f"argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]] ({text} is " \
           f"--time {form}), not '{text}'" in line, line
    assert not (user.fake / "calls").exists()


@pytest.mark.parametrize("option,size", [("--memory", "4G"), ("--memory", "4GB"),
                                         ("--memory", "4gb"), ("--mem", "4G")])
def test_memory_in_each_spelling_reaches_the_site_as_4_gib(user, option, size):
    """`--mem` (sbatch's name) worked only as a prefix of --memory; now it is a name."""
    user.run("submit", "--site", "alpha", option, size, "job.sh", code=0)
    assert "#SBATCH --mem=4G\n" in _sent_script(user)


@pytest.mark.parametrize("given,meant", [("--tim", "--time or --timeout"),
                                         ("--partion", "--partition"),
                                         ("--gpu", "--gpu-type or --gpus")])
def test_an_unknown_option_is_named_with_the_one_meant(user, given, meant):
    res = user.run("submit", "--site", "alpha", given, "5", "job.sh", code=2)
    line = res.stderr.strip().splitlines()[-1]
    assert f"unknown option {given} (did you mean {meant}? accepted: --arch, " in line, line
    assert not (user.fake / "calls").exists()


def test_nodes_gpus_and_partition_reach_the_script(user):
    user.run("submit", "--site", "alpha", "--nodes", "2", "--gpus", "1", "--partition",
             "main", "--force", "job.sh", code=0)
    text = _sent_script(user)
    assert "#SBATCH --nodes=2" in text and "#SBATCH --partition=main" in text
    assert "gpu:1" in text or "--gpus-per-node=1" in text, text


# -- a script of another scheduler --------------------------------------------------------------

def test_a_pbs_script_sent_to_a_slurm_site_names_each_directive_it_loses(user):
    """The submit said nothing (only `translate` did): the sandbox and keep options were
    dropped without a word."""
    user.write("job.pbs", "#!/bin/bash\n#PBS -l select=1:ncpus=2\n#PBS -W sandbox=PRIVATE\n"
                          "#PBS -k oe\necho $PBS_O_WORKDIR\n")
    res = user.run("submit", "--site", "alpha", "job.pbs", code=0)
    assert res.stdout.strip() == "alpha:4242"
    lines = res.stderr.strip().splitlines()
    assert "diamond: dropped: #PBS -W sandbox=PRIVATE (-W sandbox=PRIVATE: no slurm " \
           "equivalent)" in lines
    assert "diamond: dropped: #PBS -k oe (-k oe: no slurm equivalent)" in lines


# -- a job, twice ---------------------------------------------------------------------------------

def test_after_ctrl_c_in_wait_the_job_is_still_followed(user):
    """Nothing is lost by stopping a wait: the job is still stored as it was, and a new
    wait follows it again (here until its timeout, the fake site never ending it)."""
    user.job("alpha:77", JobState.RUNNING)
    _interrupt(_started(user, "wait", "alpha:77", "--poll", "1"))
    assert json.loads(user.run("status", "alpha:77", "--json", code=0).stdout)["state"] == \
        "RUNNING"
    res = user.run("wait", "alpha:77", "--poll", "1", "--timeout", "1", code=1)
    assert res.stderr.strip() == "diamond: timed out after 1s waiting for alpha:77 (state " \
                                 "RUNNING)"
    assert "scancel" not in (user.fake / "calls").read_text()


def test_logs_of_a_job_whose_output_was_moved_with_o_name_that_path(user):
    """`#SBATCH -o out/%j.log`: logs look there (the job's id put in), and say so when the
    file is not there, not the default slurm-ID.out."""
    user.write("o.sh", "#!/bin/bash\n#SBATCH -o out/%j.log\necho hi\n")
    job_id = user.run("submit", "--site", "alpha", "o.sh", code=0).stdout.strip()
    Store(user.store_path).apply_state(job_id, JobState.COMPLETED)
    res = user.run("logs", job_id, code=1)
    assert res.stderr.strip() == "diamond: stdout log out/4242.log is missing on alpha"


# -- the magics ---------------------------------------------------------------------------------

shell = sweep_helpers.magics_shell


def test_an_empty_place_cell_is_refused_as_every_face_refuses_an_empty_script(shell, user,
                                                                               capsys):
    """(A cell with nothing at all is IPython's own error; one of blank lines reaches us.) The
    words are the engine's own, as for a submit cell, an empty file on the CLI, or REST."""
    shell.run_cell_magic("diamond", "place", "\n   \n")
    err = capsys.readouterr().err
    assert "diamond: the job script is empty" in err and "Traceback" not in err, err
    assert not (user.fake / "calls").exists()


def test_the_magics_time_with_a_unit_names_the_form(shell, user, capsys):
    shell.run_cell_magic("diamond", "submit --site alpha --time 90m", "echo hi\n")
    err = capsys.readouterr().err
    assert "--time '90m': expected minutes, HH:MM:SS or D-HH[:MM[:SS]] (90m is --time " \
           "01:30:00)" in err, err
    assert not (user.fake / "calls").exists()


def test_the_magics_mem_is_the_memory(shell, user, capsys):
    shell.run_cell_magic("diamond", "submit --site alpha --mem 4GB", "echo hi\n")
    assert "#SBATCH --mem=4G\n" in _sent_script(user), capsys.readouterr().err


# -- the REST routes ------------------------------------------------------------------------------

async def test_rest_submit_to_a_transposed_site_name_suggests_the_site(api, user):
    r = await api.call("POST", "jobs", {"script": "echo hi\n", "site": "alhpa"}, expect=400)
    assert r.body["reason"] == "bad-input"
    assert "unknown site 'alhpa' (did you mean alpha? known: alpha, ghost)" in \
        r.body["message"], r.body
    # nothing submitted (the server's discovery at start may run the site's other commands)
    assert sweep_helpers.sbatch_calls(user) == []


async def test_rest_a_bare_scheduler_id_suggests_the_full_job_id(api, user):
    user.job("alpha:4242")
    r = await api.call("GET", "jobs/4242", expect=404)  # no such job; the message helps
    assert "expected SITE:NUMBER" in r.body["message"]
    assert r.body["message"].endswith("did you mean alpha:4242?"), r.body


async def test_rest_a_blank_script_is_refused_naming_it(api, user):
    r = await api.call("POST", "jobs", {"script": "  \n\n", "site": "alpha"}, expect=400,
                       validate=False)
    assert r.body["reason"] == "bad-input" and "the job script is empty" in r.body["message"]
    assert not (user.fake / "calls").exists()


async def test_rest_a_pbs_script_at_a_slurm_site_has_its_dropped_directives_in_its_events(
        api, user):
    job = await api.post("jobs", {"script": "#!/bin/bash\n#PBS -k oe\necho hi\n",
                                  "site": "alpha"}, expect=201)
    events = await api.get("events", params={"job_id": job["id"], "kinds": "job.warnings"})
    rows = events if isinstance(events, list) else events.get("events", [])
    said = [w for e in rows for w in (e.get("data") or {}).get("warnings", [])]
    assert said == ["dropped: #PBS -k oe (-k oe: no slurm equivalent)"], events


def test_the_magic_names_each_directive_a_pbs_cell_loses_at_a_slurm_site(shell, user, capsys):
    """The card showed the job submitted; what the translation dropped was not said."""
    shell.run_cell_magic("diamond", "submit --site alpha", "#PBS -k oe\necho hi\n")
    err = capsys.readouterr().err
    assert "diamond: dropped: #PBS -k oe (-k oe: no slurm equivalent)" in err, err
    assert "#SBATCH" in _sent_script(user)
