"""Follow-ups of sweep 20 (test_adversarial_inputs20.py), without the test bed: a tab in a
job's name reached a Slurm, LSF or Flux queue as is though the note said "blanks become
'_'"; a refused spec field was named by the spec's word (`queue`) where the user wrote
`--partition`; errors raised inside the spec's validator lacked the "submit: spec." the
others carry; and the REST sweeps' site could reach the real /usr/bin/sbatch.

Tests marked `fault` failed on the code before these fixes; the others are guards."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, mcp_refusal, sbatch_calls, submitted_script

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.sites import Site
from diamond_jupyter.skills import skill_input

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES

# the root conftest's `no_real_scheduler` (its `conftest` is not the one a test imports)
BLOCKED_PROGRAMS = ("sbatch", "srun", "salloc", "scancel")
BLOCKED_SAYS = "a test without the test bed ran the machine's"


# ---- (1) a tab in a job's name: the renderer and the note agree, on every scheduler --------

def test_fault_a_tab_in_a_name_reaches_no_slurm_queue_and_is_said(user):
    """`--name 'run<TAB>2'` reached sbatch as is, where it shifts the columns of squeue's
    listing; now the queue gets `run_2` and stderr says so."""
    res = user.run("submit", "--site", "alpha", "--name", "run\t2", "job.sh", code=0)
    assert "diamond: job name 'run\\t2' is 'run_2' in alpha's queue (a name slurm accepts)" \
        in res.stderr.splitlines(), res.stderr
    assert "#SBATCH --job-name=run_2\n" in submitted_script(user)


_DIRECTIVE = {"slurm": r"#SBATCH --job-name=(.*)", "pbs": r"#PBS -N (.*)",
              "lsf": r"#BSUB -J (.*)", "flux": r"#flux: --job-name=(.*)", "sge": r"#\$ -N (.*)"}


@pytest.mark.parametrize("scheduler", list(_DIRECTIVE))
@pytest.mark.parametrize("name", ["run\t2", "a b\tc", "tab\t\tx"])
def test_fault_the_name_rendered_is_the_name_the_notes_end_with(scheduler, name):
    """Whatever the scheduler, the name its script carries is the last one the notes give,
    and it holds no tab."""
    site = Site(SiteConfig(name="s1", scheduler=scheduler, workdir="/w",
                           transport=TransportConfig(kind="local")))
    spec = site.prepare(JobSpec(name=name, command="true"), "c0ffee000001")
    script = site.script.render_script(spec).script
    [rendered] = [m.group(1) for line in script.splitlines()
                  if (m := re.fullmatch(_DIRECTIVE[scheduler], line))]
    notes = spec.metadata["name_notes"]
    last = re.search(r" (?:as|is) ('[^']*') ", notes[-1]).group(1)
    assert rendered.strip("'\"") == last.strip("'") and "\t" not in rendered, (notes, rendered)


@pytest.mark.parametrize("scheduler", ["slurm", "lsf", "flux"])
def test_fault_translate_says_a_tab_made_underscore(scheduler):
    """`diamond translate` of a spec whose name holds a tab says the change, as for
    brackets (LSF) or a leading digit (PBS)."""
    from diamond_jupyter.dialects import get_script_dialect

    out = get_script_dialect(scheduler).render_script(JobSpec(name="a\tb", command="true"))
    assert any(w.startswith("approximated: job name 'a\\tb' as 'a_b' (")
               and "a tab or other white space in a name shifts the columns" in w
               for w in out.warnings), out.warnings


@pytest.mark.parametrize("scheduler", ["slurm", "lsf", "flux"])
def test_a_plain_blank_is_still_the_engines_to_change(scheduler):
    """(guard) A translation keeps a blank where its scheduler takes one (the engine makes it
    '_' when it submits, with its own note)."""
    from diamond_jupyter.dialects import get_script_dialect

    dialect = get_script_dialect(scheduler)
    assert dialect.job_name("my run") == "my run"
    out = dialect.render_script(JobSpec(name="my run", command="true"))
    assert not [w for w in out.warnings if "job name" in w]


# ---- (2) an error names what the user wrote, on each face ---------------------------------

@pytest.mark.parametrize("option,value,said", [
    ("--partition", "gpu\u200b", "--partition holds U+200B ZERO WIDTH SPACE at position 3"),
    ("--partition", "a b", "--partition 'a b' has a blank inside a name"),
    ("--partition", "-x", "--partition '-x' starts with '-'"),
    ("--name", "\u202eabc", "--name holds U+202E RIGHT-TO-LEFT OVERRIDE at position 0"),
])
def test_fault_a_cli_option_refused_is_named_as_typed(user, option, value, said):
    """`--partition 'gpu<ZWSP>'` was refused as "queue holds ...": the spec's word, which the
    user never typed."""
    line = user.refused("submit", "--site", "alpha", f"{option}={value}", "job.sh")
    assert line.startswith(f"diamond: {said}"), line
    assert sbatch_calls(user) == []


def test_fault_place_names_the_option_as_typed(user):
    line = user.refused("place", "--partition", "gpu\u200b", "job.sh")
    assert line.startswith("diamond: --partition holds U+200B"), line


@pytest.mark.parametrize("line,said", [
    ("submit --site alpha --partition 'gpu\u200b'", "--partition holds U+200B"),
    ("submit --site alpha --partition 'a b'", "--partition 'a b' has a blank inside a name"),
])
def test_fault_a_magic_option_refused_is_named_as_typed(shell, user, capsys, line, said):
    assert_magic_refused(shell, user, capsys, line, "#!/bin/bash\necho hi\n", said)


def test_fault_a_directive_refused_is_named_by_its_line(user):
    """`#SBATCH -p debug<ZWSP>` was refused as "queue holds ... at position 5", a field and a
    position the script does not have."""
    user.write("zw.sh", "#!/bin/bash\n#SBATCH -n 1\n#SBATCH -p debug\u200b\necho hi\n")
    line = user.refused("submit", "--site", "alpha", "zw.sh")
    assert line.startswith("diamond: line 3 (#SBATCH -p) holds U+200B ZERO WIDTH SPACE at "
                           "position 16, "), line
    assert sbatch_calls(user) == []


def test_a_directive_named_with_its_hidden_character_written_out():
    """The line is named as it shows, the hidden character written out, so the refusal
    itself hides nothing."""
    from diamond_jupyter.federation import Federation

    with pytest.raises(BadInput) as told:
        Federation.spec_from_text("#!/bin/bash\n#SBATCH -J\u200b x\necho hi\n")
    assert str(told.value).startswith("line 2 (#SBATCH -J\\u200b) holds U+200B ZERO WIDTH "
                                      "SPACE at position 10, "), told.value
    assert "\u200b" not in str(told.value)


def test_a_comment_line_is_no_directive(user):
    """(guard) A comment (not a directive) is the user's own text: not refused."""
    user.write("c.sh", "#!/bin/bash\n#SBATCH -n 1\n# note\u200b\necho hi\n")
    assert user.run("submit", "--site", "alpha", "c.sh", code=0).stdout == "alpha:4242\n"


# ---- (3) errors of a spec's own checks in the form the others have ------------------------

@pytest.mark.parametrize("spec,said", [
    ({"resources": {"queue": "debug"}},
     "submit: spec.resources.queue: a setting of one of a job's components"),
    ({"name": "a\u202eb"}, "submit: spec.name holds U+202E RIGHT-TO-LEFT OVERRIDE"),
    ({"queue": "a b"}, "submit: spec.queue 'a b' has a blank inside a name"),
    ({"resources": {"partition": "x"}}, "submit: spec.resources.partition: not a field"),
])
def test_fault_a_spec_validators_error_has_the_skills_prefix(spec, said):
    """pydantic's errors said "submit: spec.X: ...", the spec's own checks "X ..." alone."""
    with pytest.raises(BadInput) as told:
        skill_input("submit", {"spec": {"script": "echo hi\n", **spec}})
    assert str(told.value).startswith(said), told.value


async def test_fault_mcp_says_a_spec_validators_error_in_the_same_form(user):
    said = await mcp_refusal(user, "submit", {"spec": {"script": "echo hi\n",
                                                       "resources": {"account": "p1"}},
                                              "site": "alpha"})
    assert "submit: spec.resources.account: a setting of one of a job's components" in said, \
        said
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("spec,said", [
    ({"resources": {"queue": "debug"}}, "spec.resources.queue: a setting of one of"),
    ({"name": "nightly\u202e"}, "spec.name holds U+202E RIGHT-TO-LEFT OVERRIDE"),
    ({"resources": {"partition": "debug"}}, "spec.resources.partition: not a field"),
])
async def test_fault_rest_says_a_spec_validators_error_with_the_body_field(rest, spec, said):
    """POST jobs: the body's field (`spec.name`), as pydantic's errors name theirs."""
    body = json.dumps({"spec": {"script": "echo hi\n", **spec}, "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and reply["message"].startswith(said), (code, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


# ---- (4) no test without the test bed reaches the machine's scheduler ---------------------

@pytest.mark.parametrize("program", BLOCKED_PROGRAMS)
def test_a_test_without_the_test_bed_finds_each_queue_changing_program_refusing(program):
    """(guard) Whatever a site's `commands` forget, sbatch on this test's PATH is the
    refusing one, not /usr/bin/sbatch: it says so and exits 97."""
    found = shutil.which(program)
    assert found is not None and not found.startswith(("/usr/", "/bin/", "/opt/")), found
    res = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 97 and BLOCKED_SAYS in res.stderr, res


async def test_a_local_site_without_a_fake_is_refused_not_submitted(tmp_path):
    """(guard) A local site with no `commands` (the REST sweeps' site before this fix):
    its submit fails saying the test reached the machine's sbatch, and none ran."""
    from diamond_jupyter.federation import Federation

    sites = tmp_path / "sites.yaml"
    sites.write_text(f"sites:\n  - name: bare\n    transport: {{kind: local}}\n"
                     f"    workdir: {tmp_path / 'work'}\n"
                     f"store: {tmp_path / 'store.sqlite3'}\n")
    fed = Federation(str(sites))
    try:
        with pytest.raises(Exception) as told:
            await fed.submit(JobSpec(script="#!/bin/bash\necho hi\n"), "bare")
    finally:
        await fed.close()
    assert BLOCKED_SAYS in str(told.value), told.value


async def test_the_rest_sweeps_site_submits_to_its_fake(rest, tmp_path):
    """(guard) POST jobs on sweep_helpers' server site reaches its fake Slurm (job 4242,
    the call recorded), never the machine's."""
    body = json.dumps({"script": "#!/bin/bash\necho hi\n", "site": "here"}).encode()
    code, reply = await rest("POST", "jobs", body)
    assert code in (200, 201) and reply["id"] == "here:4242", (code, reply)
    calls = (tmp_path / "here-slurm" / "calls").read_text().splitlines()
    assert any(c.startswith("sbatch ") for c in calls), calls
