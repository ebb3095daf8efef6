"""Property-based tests of the four dialects: scripts in, specs out, scripts back, and the
schedulers' command outputs. Whatever the input, a parser or renderer returns a result or
raises a DiamondError with a message (BadInput for user input, SiteError for a site's
output); a rendered script never holds a shell line the spec did not ask for."""

from __future__ import annotations

import os
import re
import shlex
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hostile_corpus import ALL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.scripts_common import BODY_FILE, BODY_OPEN, runs_shell_lines
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import BadInput, DiamondError, JobSpec, SiteError

DIALECTS = ["slurm", "pbs", "lsf", "flux", "sge"]
# bounded: the whole file runs in seconds on two busy cores (DIAMOND_FUZZ_EXAMPLES for more)
FUZZ = settings(max_examples=int(os.environ.get("DIAMOND_FUZZ_EXAMPLES", "60")),
                deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

SENTINELS = {"slurm": "#SBATCH", "pbs": "#PBS", "lsf": "#BSUB", "flux": "#flux:", "sge": "#$"}
OPTIONS = {
    "slurm": ["-J", "-p", "-A", "-N", "-n", "-c", "-t", "-o", "-e", "-D", "--mem", "--gres",
              "--gpus-per-node", "--array", "--dependency", "--export", "--constraint",
              "--mail-type", "--cpu-bind", "--exclusive", "--hold", "--wrap", "--bogus"],
    "pbs": ["-N", "-q", "-A", "-l", "-o", "-e", "-j", "-d", "-J", "-t", "-W", "-v", "-V",
            "-m", "-M", "-h", "-X"],
    "lsf": ["-J", "-q", "-P", "-n", "-W", "-o", "-e", "-cwd", "-R", "-gpu", "-M", "-env",
            "-w", "-x", "-B", "-u", "-H", "-Z"],
    "flux": ["-N", "-n", "-c", "-g", "-t", "-q", "--job-name", "--output", "--error", "--cwd",
             "--setattr", "--setopt", "--requires", "--dependency", "--env", "--exclusive",
             "--bogus"],
    "sge": ["-N", "-pe", "-l", "-q", "-o", "-e", "-j", "-t", "-tc", "-hold_jid", "-cwd", "-wd",
            "-V", "-v", "-M", "-m", "-A", "-S", "-h", "-ar", "-notify", "-bogus"],
}

# numbers no integer holds (float infinity, nan): an SGE queue's h_rt mangled into
# '24:00:   INFINITY' once crashed a parser with OverflowError
EXTREME = ["INFINITY", "inf", "-inf", "nan", "1e999", "9" * 400, "9" * 400 + "G"]
hostile = st.one_of(st.sampled_from(ALL), st.sampled_from(EXTREME), st.text(max_size=40),
                    st.text(alphabet="-=:,@%[]{}()<>$'\"\\ \t#0123456789abcGMKT:/~.*;|&",
                            max_size=30))


@st.composite
def scripts(draw, dialect: str) -> str:
    """A batch script of this dialect: real options with hostile or plausible values, a
    body, sometimes other dialects' directives and odd line endings."""
    lines = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["#!/bin/bash", "#!/bin/sh -l", "#!/usr/bin/env bash",
                                           "#!" + draw(hostile)])))
    for _ in range(draw(st.integers(0, 8))):
        d = draw(st.sampled_from([dialect] * 3 + DIALECTS))
        opt = draw(st.sampled_from(OPTIONS[d]))
        value = draw(st.one_of(hostile, st.sampled_from(
            ["1", "4", "10:00", "1-00:00:00", "4G", "gpu:2", "debug", "select=2:ncpus=4",
             "span[hosts=1]", "afterok:12", "ALL,A=1", "30m", "1-10%2", "oe", "abe"])))
        sep = draw(st.sampled_from([" ", "=", " ", ""]))
        lines.append(f"{SENTINELS[d]} {opt}{sep}{value}")
    lines.append(draw(st.sampled_from(["echo hi", "srun ./a.out", draw(hostile), ""])))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return eol.join(lines) + eol


def _no_crash(fn, *args):
    try:
        return fn(*args)
    except DiamondError as e:
        assert str(e).strip(), f"{type(e).__name__} without a message"
        return None


@pytest.mark.parametrize("dialect", DIALECTS)
def test_parse_then_render_anywhere_never_crashes(dialect):
    @FUZZ
    @given(scripts(dialect), st.sampled_from(DIALECTS))
    def run(text: str, target: str) -> None:
        spec = _no_crash(get_script_dialect(dialect).parse_script, text)
        if spec is None:
            return
        rendered = _no_crash(get_script_dialect(target).render_script, spec)
        if rendered is not None:  # and what we wrote, we can read back
            _no_crash(get_script_dialect(target).parse_script, rendered.script)

    run()


@FUZZ
@given(st.text(max_size=300), st.sampled_from(DIALECTS))
def test_arbitrary_text_never_crashes_a_parser(text, dialect):
    _no_crash(get_script_dialect(dialect).parse_script, text)


# -- rendering a hostile spec: no shell line the spec did not ask for --------------------------

spec_values = st.fixed_dictionaries({}, optional={
    "name": hostile, "queue": hostile, "account": hostile, "qos": hostile,
    "reservation": hostile, "working_directory": hostile, "stdout": hostile,
    "stderr": hostile, "mail_user": hostile, "shell": hostile,
    "resources": st.fixed_dictionaries({}, optional={
        "gpu_type": hostile, "cpu_bind": hostile, "gpu_bind": hostile,
        "distribution": hostile, "nodes": st.integers(0, 10**6)}),
    "environment": st.fixed_dictionaries({}, optional={
        "modules": st.lists(hostile, max_size=3),
        "variables": st.dictionaries(st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True),
                                     hostile, max_size=3)}),
    "constraints": st.fixed_dictionaries({}, optional={
        "features": st.lists(hostile, max_size=3)}),
    "metadata": st.fixed_dictionaries({}, optional={"pbs_flavor": st.sampled_from(
        ["pro", "torque"])}),
    # unknown directives are rendered back: a JSON spec may carry any "raw" line
    "unknown": st.lists(st.fixed_dictionaries({
        "dialect": st.sampled_from(DIALECTS), "option": hostile,
        "value": st.one_of(st.none(), hostile),
        "raw": st.one_of(hostile, st.sampled_from(["touch PWNED", "#SBATCH --x", "#PBS -z",
                                                   "#BSUB -z", "#flux: --x", "  #SBATCH -q",
                                                   "#$ -x"]))}),
        max_size=3),
})

BODY = "echo __BODY__\n"


def _shell_lines_are_the_asked_ones(text: str, spec: JobSpec) -> None:
    head = text[:text.index("echo __BODY__")]
    wrapped = not runs_shell_lines(spec.shell) and text.startswith("#!/bin/bash\n")
    if wrapped:  # an interpreter that reads no shell lines (`/0`, python): bash runs the
        # asked lines, then the body from a quoted here-document with that interpreter
        run = " ".join(shlex.quote(w) for w in spec.shell.split())
        assert text.endswith(f'\nexec {run} "/dev/fd/$diamond_fd"\n')
    else:
        assert text.startswith(f"#!{spec.shell}")
    for line in head.splitlines()[1:]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # directives and comments: the shell never runs them
        if wrapped and (re.fullmatch(r"""cat >&"\$diamond_fd" <<'DIAMOND_STEP_BODY"""
                                     r"(_\d+)?' \|\| exit 1", line)
                        or line in (f"diamond_body=$(mktemp {BODY_FILE}.XXXXXX) || exit 1",
                                    BODY_OPEN)):
            continue  # the body's own new file opened and removed, then the here-document
        words = shlex.split(line)
        if words[:2] == ["module", "load"]:
            assert words[2:] in ([m] for m in spec.environment.modules)
        elif words[0] == "export" and words[1].startswith("SLURM_CPU_BIND="):
            assert words == ["export", f"SLURM_CPU_BIND={spec.resources.cpu_bind}"]
        elif words[0] == "export":  # a variable whose value holds a comma (not listable)
            name, _, value = words[1].partition("=")
            assert len(words) == 2 and spec.environment.variables[name] == value
        elif words[0] == "cd":
            assert words == ["cd", spec.working_directory]
        else:
            raise AssertionError(f"unexpected shell line {line!r} in\n{text}")


@FUZZ
@given(spec_values, st.sampled_from(DIALECTS))
def test_a_hostile_spec_renders_only_the_shell_lines_it_asked_for(values, dialect):
    try:
        spec = JobSpec.model_validate({"script": BODY, **values})
    except BadInput as e:
        assert str(e).split(" ")[0].split("[")[0].split(".")[0] in {*values, "shell"}
        return
    except ValueError:  # pydantic's own type errors (a REST body gets them as 400)
        return
    rendered = _no_crash(get_script_dialect(dialect).render_script, spec)
    if rendered is not None:
        _shell_lines_are_the_asked_ones(rendered.script, spec)


# -- the schedulers' command outputs ------------------------------------------------------------

FIX = Path(__file__).parent.parent / "fixtures" / "outputs"
UTC = timezone.utc
COMMANDS = {
    "slurm": SlurmCommands(jobcomp=True, tz=UTC),
    "pbs": PbsCommands(tz=UTC),
    "lsf": LsfCommands(tz=UTC, now=lambda: datetime(2026, 11, 29, 12, 0, tzinfo=UTC)),
    "flux": FluxCommands(),
    "sge": SgeCommands(tz=UTC),
}
SNAPSHOT_FILES = {
    "slurm": {"partitions": "scontrol_partition.txt", "nodes": "scontrol_node.txt",
              "queue": "squeue_queue.txt"},
    "pbs": {"nodes": "pbsnodes_json.json", "queues": "qstat_Qf_json.json",
            "server": "qstat_Bf_json.json", "queue": "qstat_f_json.json"},
    "lsf": {"hosts": "bhosts_json.json", "lshosts": "lshosts_json.json",
            "queues": "bqueues_json.json", "queue": "bjobs_json.json"},
    "flux": {"resources": "flux_resource_list.txt", "queues": "flux_queue_list.txt",
             "queue": "flux_jobs_json.json"},
    "sge": {"hosts": "qhost_xml.xml", "queues": "qconf_sq_all.txt", "pes": "qconf_spl.txt",
            "queue": "qstat_f_xml.xml"},
}


@st.composite
def mutated(draw, text: str) -> str:
    """A real output with a few cuts, insertions and replacements."""
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 200)))
        what = draw(st.sampled_from(["cut", "insert", "replace", "truncate"]))
        piece = draw(hostile)
        if what == "cut":
            text = text[:i] + text[j:]
        elif what == "insert":
            text = text[:i] + piece + text[i:]
        elif what == "replace":
            text = text[:i] + piece + text[j:]
        else:
            text = text[:i]
    return text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_mangled_scheduler_outputs_never_crash_a_parser(dialect):
    cmd = COMMANDS[dialect]
    files = sorted(p for p in (FIX / dialect).iterdir())
    parsers = [cmd.parse_submit, cmd.parse_status, cmd.parse_accounting]

    @FUZZ
    @given(st.data())
    def run(data) -> None:
        src = data.draw(st.sampled_from(files))
        text = data.draw(mutated(src.read_text(encoding="utf-8")))
        _no_crash(data.draw(st.sampled_from(parsers)), text)
        outputs = {k: (FIX / dialect / f).read_text(encoding="utf-8")
                   for k, f in SNAPSHOT_FILES[dialect].items()}
        key = data.draw(st.sampled_from(sorted(outputs)))
        outputs[key] = data.draw(mutated(outputs[key]))
        _no_crash(cmd.parse_snapshot, "fuzz", outputs)

    run()


@pytest.mark.parametrize("mangled", [
    '{"Queue": {"workq": 1}}',
    '{"Queue": {"workq": {"resources_max": 7, "resources_available": []}}}',
])
def test_a_pbs_queue_entry_that_is_not_an_object_does_not_crash(mangled):
    """Found by the fuzzing above in a stress run: a queue's attributes mangled into a number
    raised AttributeError from `qstat -Q -F json` parsing."""
    parts = PbsCommands().parse_queues(mangled, '{"Server": {"s": 3}}')
    assert all(p.name == "workq" for p in parts)


def test_pbs_nodes_and_jobs_with_mangled_attributes_do_not_crash():
    pbs = PbsCommands()
    mangled = '{"nodes": {"n1": 5, "n2": {"resources_available": 1}}}'
    with pytest.raises(SiteError, match="node n1: not an object"):  # no list to say it in
        pbs.parse_nodes(mangled)
    skipped: list[str] = []  # a site's view: n1 left out and said, n2 read
    assert [n.name for n in pbs.parse_nodes(mangled, skipped)] == ["n2"]
    assert len(skipped) == 1 and "n1" in skipped[0]
    [job] = pbs.parse_status('{"Jobs": {"1.s": {"job_state": "Q", "Resource_List": 3, '
                             '"resources_used": [], "estimated": "x"}}}')
    assert job.native_id.startswith("1")


@pytest.mark.parametrize("target", DIALECTS)
def test_an_absurd_time_limit_is_refused_by_name_not_an_overflow(target):
    """Found by the fuzzing in a stress run: `--time=` with 400 digits raised OverflowError
    in the LSF renderer's float arithmetic."""
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --time=" + "9" * 400 + "\necho hi\n")
    with pytest.raises(BadInput, match=r"walltime_s .* too long: at most \d+ minutes"):
        get_script_dialect(target).render_script(spec)


def test_torque_xml_with_undecodable_bytes_is_a_clear_error():
    """Found by the fuzzing: a byte that is not UTF-8 (kept as a lone surrogate when the
    output is decoded) raised UnicodeEncodeError from the XML parser."""
    with pytest.raises(DiamondError, match="qstat -x"):
        PbsCommands().parse_status("<\udcffData><Job><Job_Id>1.s</Job_Id></Job></Data>")
