"""Sweep 20 of hostile and everyday inputs, through the faces, without the test bed: option
values left empty by a shell variable that is not set, characters that do not show as
themselves (a zero-width space pasted from a web page, a right-to-left override, a one-byte
CSI) in a job's name, partition or environment, a JobSpec written with a scheduler's words
(`partition`, `walltime`, `env`) or with a component's settings in the job's own resources,
and shell syntax in every field, which must reach the scheduler quoted.

The standard is the earlier sweeps': a hostile or confused input is answered with an error
naming what was wrong, where, and what would be accepted, never a traceback, and nothing is
lost or sent. Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, mcp_refusal, sbatch_calls, submitted_script

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.skills import skill_input

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES

EMPTY = ("(an empty or blank value: a shell variable that is not set?); give the value, or "
         "leave the option out for the default")
UNSHOWN = ("which is not shown as itself (it drives a terminal, reorders or hides text), so "
           "the value would not be what anyone reading it sees; only characters that show as "
           "themselves and tabs are accepted (retype the value rather than paste it)")


# ---- (1) an option's value left empty (`--partition "$PART"`, PART not set) ---------------

@pytest.mark.parametrize("option,what", [
    ("--partition", "a partition or queue name"),
    ("--memory", "a size such as 4G"),
    ("--mem", "a size such as 4G"),
    ("--arch", "an architecture"),
    ("--gpu-type", "a GPU model"),
    ("--container", "an image"),
    ("--software", "NAME or NAME/VERSION"),
    ("--name", "a name"),
    ("--dialect", "a dialect"),
])
def test_fault_an_option_given_an_empty_value_is_refused_naming_it(user, option, what):
    """`--partition ''` sent the job to the default partition, `--memory ''` asked the
    default memory, `--name ''` named it after the file: each unsaid. Now refused, naming the
    option and what it takes; nothing reaches sbatch."""
    line = user.refused("submit", "--site", "alpha", f"{option}=", "job.sh")
    assert line.endswith(f": expected {what}, not '' {EMPTY}"), line
    assert f"argument {option}" in line, line
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("value", [" ", "\t", "  \t "])
def test_fault_a_partition_of_blanks_alone_is_refused(user, value):
    """`--partition ' '` reached sbatch as `--partition=" "`."""
    line = user.refused("submit", "--site", "alpha", "--partition", value, "job.sh")
    assert f"expected a partition or queue name, not {value!r} {EMPTY}" in line, line
    assert sbatch_calls(user) == []


def test_fault_place_with_an_empty_option_is_refused_alike(user):
    line = user.refused("place", "--memory", "", "job.sh")
    assert line.endswith(f"argument --memory/--mem: expected a size such as 4G, not '' {EMPTY}")


@pytest.mark.parametrize("line", ["submit --site alpha --partition ''",
                                  "submit --site alpha --name ''",
                                  "submit --site alpha --memory ' '"])
def test_fault_a_magic_option_given_an_empty_value_is_refused(shell, user, capsys, line):
    assert_magic_refused(shell, user, capsys, line, "#!/bin/bash\necho hi\n", EMPTY)


def test_an_option_with_a_value_is_still_submitted_with_it(user):
    """(guard) The same options given values: in the script sbatch is given."""
    user.run("submit", "--site", "alpha", "--partition", "debug", "--name", "run 1",
             "--mem", "2G", "job.sh", code=0)
    script = submitted_script(user)
    assert '#SBATCH --partition=debug\n' in script and "--job-name=run_1" in script
    assert "#SBATCH --mem=2048M\n" in script or "#SBATCH --mem=2G\n" in script, script


# ---- (2) characters that do not show as themselves, in a field a scheduler shows ----------

@pytest.mark.parametrize("option,value,char", [
    ("--partition", "gpu\u200b", "U+200B ZERO WIDTH SPACE at position 3"),
    ("--name", "\u202egpj.exe", "U+202E RIGHT-TO-LEFT OVERRIDE at position 0"),
    ("--name", "job\x9b2J", "U+009B CONTROL at position 3"),
    ("--name", "a\u2066b", "U+2066 LEFT-TO-RIGHT ISOLATE at position 1"),
    ("--partition", "\ufeffdebug", "U+FEFF ZERO WIDTH NO-BREAK SPACE at position 0"),
])
def test_fault_an_unshown_character_in_a_name_or_partition_is_refused(user, option, value,
                                                                      char):
    """A zero-width space pasted with a partition name reached sbatch (which says only
    "invalid partition"); a right-to-left override or a one-byte CSI in a job's name reached
    the queue every user lists. Now refused naming the field, the character and where."""
    line = user.refused("submit", "--site", "alpha", option, value, "job.sh")
    assert line == f"diamond: {option} holds {char}, {UNSHOWN}", line
    assert sbatch_calls(user) == []


def test_fault_an_unshown_character_in_a_magic_job_name_is_refused(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit --site alpha --name '\u202eabc'",
                         "#!/bin/bash\necho hi\n",
                         f"--name holds U+202E RIGHT-TO-LEFT OVERRIDE at position 0, "
                         f"{UNSHOWN}")


def test_fault_an_unshown_character_in_a_script_directive_is_refused(user):
    """`#SBATCH -J` with a zero-width space in the script itself (copied from a page)."""
    user.write("zw.sh", "#!/bin/bash\n#SBATCH -J nightly\u200b\n#SBATCH -p debug\necho hi\n")
    line = user.refused("submit", "--site", "alpha", "zw.sh")
    assert line == (f"diamond: line 2 (#SBATCH -J) holds U+200B ZERO WIDTH SPACE at position "
                    f"18, {UNSHOWN}")
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("spec,said", [
    ({"name": "a\u202eb"}, "name holds U+202E RIGHT-TO-LEFT OVERRIDE at position 1"),
    ({"environment": {"variables": {"MODE": "fast\u200b"}}},
     "environment.variables['MODE'] holds U+200B ZERO WIDTH SPACE at position 4"),
    ({"working_directory": "/scratch/run\u00ad1"},
     "working_directory holds U+00AD SOFT HYPHEN at position 12"),
    ({"account": "proj\x9b"}, "account holds U+009B CONTROL at position 4"),
])
def test_fault_an_unshown_character_in_a_tool_calls_spec_is_refused(spec, said):
    """The agent's and the MCP server's submit read a spec's fields as the command line
    does."""
    with pytest.raises(BadInput) as told:
        skill_input("submit", {"spec": {"script": "echo hi\n", **spec}})
    assert said in str(told.value), told.value


@pytest.mark.parametrize("name", ["résumé", "模拟-1", "naïve run", "Ωmega"])
def test_a_name_of_letters_that_show_is_still_submitted(user, name):
    """(guard) Accented, CJK and Greek letters and a blank show as themselves: the job is
    submitted, its name quoted (a tab: test_adversarial_inputs20_followups)."""
    assert user.run("submit", "--site", "alpha", "--name", name, "job.sh",
                    code=0).stdout == "alpha:4242\n"
    kept = name.replace(" ", "_")
    assert f'#SBATCH --job-name="{kept}"\n' in submitted_script(user) or \
        f"#SBATCH --job-name={kept}\n" in submitted_script(user)


# ---- (3) a JobSpec written with a scheduler's words, or a component's settings ------------

@pytest.mark.parametrize("spec,said", [
    ({"resources": {"partition": "debug"}},
     "spec.resources.partition: not a field of Resources (did you mean queue, beside "
     "resources?); the fields there are nodes, tasks, "),
    ({"walltime": 3600}, "spec.walltime: not a field of JobSpec (did you mean "
                         "resources.walltime_s?); the fields there are name, script, "),
    ({"partition": "debug"}, "spec.partition: not a field of JobSpec (did you mean queue?)"),
    ({"env": {"A": "1"}}, "spec.env: not a field of JobSpec (did you mean environment?)"),
    ({"modules": ["gcc"]},
     "spec.modules: not a field of JobSpec (did you mean environment.modules?)"),
    ({"environment": {"vars": {"A": "1"}}},
     "spec.environment.vars: not a field of Environment (did you mean variables?); the "
     "fields there are modules, container_image, variables, export_all, passed"),
    ({"components": [{"nodes": 1}, {"ndoes": 2}]},
     "spec.components.1.ndoes: not a field of Resources (did you mean nodes?)"),
    ({"resources": {"time": 60}},
     "spec.resources.time: not a field of Resources (did you mean walltime_s?)"),
])
def test_fault_a_spec_key_no_field_reads_names_the_field_meant(spec, said):
    """`"partition"` in a spec's resources said only "Extra inputs are not permitted"."""
    with pytest.raises(BadInput) as told:
        skill_input("submit", {"spec": {"script": "echo hi\n", **spec}})
    assert str(told.value).startswith(f"submit: {said}"), told.value
    assert "\n" not in str(told.value)


@pytest.mark.parametrize("field,value,instead", [
    ("queue", "debug", "give the job's as queue (beside resources, not in it)"),
    ("account", "proj1", "give the job's as account (beside resources, not in it)"),
    ("qos", "high", "give the job's as qos (beside resources, not in it)"),
    ("reservation", "maint", "give the job's as reservation (beside resources, not in it)"),
    ("features", ["a100"], "give the job's as constraints.features (beside resources, not "
                           "in it)"),
    ("exclusive", True, "give the job's as constraints.exclusive (beside resources, not in "
                        "it)"),
    ("gres", "nvme:1", "write it as a directive in the script (e.g. #SBATCH --gres=nvme:1)"),
])
def test_fault_a_components_setting_in_the_jobs_own_resources_is_refused(field, value,
                                                                          instead):
    """`resources.queue` (or account, qos, features ...) in a job's own resources: no
    dialect reads it there, and the job ran without it, unsaid."""
    with pytest.raises(BadInput) as told:
        skill_input("submit", {"spec": {"script": "echo hi\n",
                                        "resources": {field: value}}})
    assert str(told.value) == (
        f"submit: spec.resources.{field}: a setting of one of a job's components (entries of "
        "components), which no scheduler reads in the job's own resources, so the job would "
        f"run without it; {instead}")


def test_the_settings_ignored_in_a_jobs_own_resources_are_rendered_by_no_dialect():
    """(guard) Why they are refused: built without the check, no dialect renders them."""
    spec = JobSpec(script="echo hi\n")
    spec.resources.queue, spec.resources.account = "debug", "proj1"
    for dialect in ("slurm", "pbs", "lsf", "flux"):
        script = get_script_dialect(dialect).render_script(spec).script
        assert "debug" not in script and "proj1" not in script, (dialect, script)


def test_a_components_own_partition_is_still_taken():
    """(guard) In a component (an entry of components), its own partition is what it is."""
    inp = skill_input("submit", {"spec": {
        "script": "echo hi\n", "queue": "cpu",
        "components": [{"nodes": 1}, {"nodes": 2, "queue": "gpu"}]}})
    assert inp.spec.components[1].queue == "gpu" and inp.spec.queue == "cpu"


async def test_fault_a_spec_in_a_scheduler_s_words_over_mcp_names_the_field(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": "echo hi\n",
                                                       "resources": {"partition": "gpu"}},
                                              "site": "alpha"})
    assert "spec.resources.partition: not a field of Resources (did you mean queue, beside " \
           "resources?)" in said, said
    assert sbatch_calls(user) == []


async def test_fault_a_components_setting_over_mcp_is_refused(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": "echo hi\n",
                                                       "resources": {"account": "proj1"}},
                                              "site": "alpha"})
    assert "resources.account: a setting of one of a job's components" in said, said
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("spec,said", [
    ({"resources": {"partition": "debug"}},
     "spec.resources.partition: not a field of Resources (did you mean queue, beside "
     "resources?)"),
    ({"env": {"A": "1"}}, "spec.env: not a field of JobSpec (did you mean environment?)"),
    ({"resources": {"queue": "debug"}},
     "resources.queue: a setting of one of a job's components"),
    ({"name": "nightly\u202e"}, "name holds U+202E RIGHT-TO-LEFT OVERRIDE at position 7"),
    ({"queue": "gpu\u200b"}, "queue holds U+200B ZERO WIDTH SPACE at position 3"),
])
async def test_fault_a_rest_spec_in_a_schedulers_words_or_unshown_is_a_400(rest, spec, said):
    """POST jobs with such a spec: 400 naming the field, no job."""
    import json

    body = json.dumps({"spec": {"script": "echo hi\n", **spec}, "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert said in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


# ---- (4) shell syntax in every field reaches the scheduler quoted -------------------------

@pytest.mark.parametrize("option,value,directive", [
    ("--name", "a;rm -rf ~", '#SBATCH --job-name="a;rm_-rf_~"\n'),
    ("--name", "`id`", '#SBATCH --job-name="`id`"\n'),
    ("--container", "$(id)", "'$(id)' /bin/bash -s"),
])
def test_shell_syntax_in_an_option_reaches_sbatch_as_its_text(user, option, value,
                                                              directive):
    """(guard) The value is a word of its directive or command, never run."""
    user.run("submit", "--site", "alpha", option, value, "job.sh", code=0)
    assert directive in submitted_script(user)
    assert not (user.root / "ran").exists()


@pytest.mark.parametrize("value", ["x;id", "$(id)"])
def test_shell_syntax_in_a_partition_option_is_refused_never_run(user, value):
    """(guard) No scheduler's partition holds shell syntax: the option is refused (exit 2,
    naming it) before anything is sent (it reached sbatch quoted, which refused it)."""
    res = user.run("submit", "--site", "alpha", "--partition", value, "job.sh", code=2)
    assert f"--partition {value!r} holds" in res.stderr
    assert not (user.root / "ran").exists()


def test_shell_syntax_in_every_spec_field_is_rendered_as_text():
    """(guard) A name, partition, directory and variable holding $(), backquotes, quotes,
    a backslash and a semicolon: each dialect writes them quoted."""
    spec = JobSpec.model_validate({
        "name": 'a"b$(id)`x`', "script": "echo hi\n", "queue": "p;q",
        "working_directory": "/tmp/a b/$(id)",
        "environment": {"variables": {"A": "$(id) 'q' \"d\" `x`;\\"}}})
    slurm = get_script_dialect("slurm").render_script(spec).script
    assert '#SBATCH --job-name="a\\"b$(id)`x`"\n' in slurm
    assert '#SBATCH --chdir="/tmp/a b/$(id)"\n' in slurm
    assert "#SBATCH --export=\"ALL,A=$(id) 'q' \\\"d\\\" `x`;\\\\\"\n" in slurm
    pbs = get_script_dialect("pbs").render_script(spec).script
    assert "cd '/tmp/a b/$(id)'\n" in pbs and '#PBS -q "p;q"\n' in pbs


def test_a_comma_in_a_variables_value_sets_no_other_variable():
    """(guard) `A=x,LD_PRELOAD=...`: sbatch's --export (and PBS -v) split at commas, so such
    a value is exported in the script, one variable, never a directive's list."""
    spec = JobSpec.model_validate({"script": "echo hi\n", "environment": {"variables": {
        "A": "x,LD_PRELOAD=/tmp/evil.so"}}})
    for dialect in ("slurm", "pbs", "lsf", "sge"):
        script = get_script_dialect(dialect).render_script(spec).script
        directives = [line for line in script.splitlines() if line.startswith("#")]
        assert not any("LD_PRELOAD" in d for d in directives), (dialect, directives)
        assert "export A=x,LD_PRELOAD=/tmp/evil.so\n" in script, (dialect, script)


# ---- (5) wrong JSON types in a REST submit -------------------------------------------------

@pytest.mark.parametrize("body,said", [
    ({"script": ["echo hi"], "site": "here"}, "script: Input should be a valid string"),
    ({"spec": "echo hi", "site": "here"}, "spec: Input should be a valid dictionary or "
                                          "instance of JobSpec"),
    ({"script": "echo hi", "site": 7}, "site: Input should be a valid string"),
    ({"script": "echo hi", "hedge": "two"}, "hedge: Input should be a valid integer"),
    ({"spec": {"script": "echo hi", "environment": {"variables": {"A": 1}}}},
     "spec.environment.variables.A: Input should be a valid string"),
])
async def test_a_rest_submit_with_a_wrong_json_type_is_a_400_naming_the_field(rest, body,
                                                                              said):
    """(guard) A list for the script, a string for the spec, a number for the site: 400
    naming the field and the type it takes, no job."""
    import json

    code, reply = await rest("POST", "jobs", json.dumps(body).encode())
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert reply["message"].startswith(said), reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []
