"""flux's template fields in an output file name (`--output=out.{{id.words}}.log`) taken to
another scheduler, and spelled out for the file `diamond logs` reads (pure; no site).

Every `{{id.FORM}}` is the job id in one of flux's spellings (flux-job-id(1)): to a
scheduler with a job-id token in its file names it becomes that token, said; to one without
(PBS, Torque) it is said and kept as written. Other fields (`{{taskid}}`, `{{size}}`,
`{{node.name}}` ...) have no equivalent elsewhere: said, not passed on unsaid."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.flux_ids import flux_id_value
from diamond_jupyter.dialects.scripts_common import output_file_name
from diamond_jupyter.dialects.translate import translate


def _flux(output: str) -> str:
    return f"#!/bin/bash\n#flux: -N 1\n#flux: --output={output}\n./a\n"


@pytest.mark.parametrize("form", ["words", "emoji", "kvs", "f58plain", "dec", "hex"])
@pytest.mark.parametrize("target,token", [("slurm", "%j"), ("lsf", "%J"), ("sge", "$JOB_ID")])
def test_an_id_form_becomes_the_job_id_where_there_is_one_said(form, target, token):
    script, warnings, _ = translate(_flux(f"out.{{{{id.{form}}}}}.log"), target, "flux")
    assert f"out.{token}.log" in script and "{{" not in script, script
    assert (f"approximated: {{{{id.{form}}}}} in output path 'out.{{{{id.{form}}}}}.log' "
            f"(flux's job id in its {form} form) as {target}'s own job id") in warnings


@pytest.mark.parametrize("form", ["words", "dec"])
def test_an_id_form_to_pbs_is_said_by_its_own_name_and_kept_as_written(form):
    """PBS's -o takes no job-id token: `{{id.words}}` was rewritten `%j` and said as "%j in
    output path 'out.%j.log'", a token the script never had."""
    script, warnings, _ = translate(_flux(f"out.{{{{id.{form}}}}}.log"), "pbs", "flux")
    assert f"#PBS -o out.{{{{id.{form}}}}}.log\n" in script, script
    said = [w for w in warnings if "output path" in w]
    assert said == [f"approximated: {{{{id.{form}}}}} in output path "
                    f"'out.{{{{id.{form}}}}}.log' (flux's job id in its {form} form) has no "
                    "pbs equivalent; kept literally"], warnings


@pytest.mark.parametrize("field", ["{{taskid}}", "{{size}}", "{{nnodes}}", "{{node.name}}",
                                   "{{task.rank}}"])
@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "sge"])
def test_another_template_field_is_said_not_passed_on_unsaid(field, target):
    """`{{taskid}}` reached the other scheduler's file name as those characters, unsaid."""
    script, warnings, _ = translate(_flux(f"out.{field}.log"), target, "flux")
    assert f"out.{field}.log" in script, script
    assert (f"approximated: {field} in output path 'out.{field}.log' (a flux template "
            f"field) has no {target} equivalent; kept literally") in warnings, warnings


@pytest.mark.parametrize("target,want", [("slurm", "out.%x.%j.log"), ("lsf", "out.%x.%J.log"),
                                         ("sge", "out.$JOB_NAME.$JOB_ID.log")])
def test_the_id_and_the_name_still_map_unsaid(target, want):
    """(guard) `{{id}}`, `{{id.f58}}` (its default form), `{{jobid}}` and `{{name}}` have
    their equivalents: mapped, nothing said of them."""
    for output in ("out.{{name}}.{{id}}.log", "out.{{name}}.{{id.f58}}.log",
                   "out.{{name}}.{{jobid}}.log"):
        script, warnings, _ = translate(_flux(output), target, "flux")
        if target != "lsf":  # (LSF has no job-name token: said as before)
            assert want in script, script
        assert not [w for w in warnings if "{{" in w], warnings


def test_flux_keeps_its_own_fields():
    script, warnings, _ = translate(_flux("out.{{id.words}}.{{taskid}}.log"), "flux", "flux")
    assert "--output=out.{{id.words}}.{{taskid}}.log" in script
    assert not [w for w in warnings if "output path" in w], warnings


def test_the_kvs_and_plain_f58_forms_name_the_file_diamond_logs_reads():
    """`{{id.kvs}}` and `{{id.f58plain}}` were left as written when the engine looked for
    the file; they are the id's dotted hex under `job.` and its F58 with an ASCII `f`."""
    jid = "ƒBq2XsHaw7Z"
    value = flux_id_value(jid)
    assert value is not None
    kvs, why = output_file_name("o.{{id.kvs}}", "flux", job_id=jid, name=None)
    assert why is None and kvs.startswith("o.job.") and \
        int(kvs.removeprefix("o.job.").replace(".", ""), 16) == value
    assert output_file_name("o.{{id.f58plain}}", "flux", job_id=jid, name=None) == \
        ("o.fBq2XsHaw7Z", None)
    assert output_file_name("o.{{id.f58plain}}", "flux", job_id=str(value), name=None) == \
        ("o.fBq2XsHaw7Z", None)
    # the words and emoji forms need flux's own lists: said, the path unchanged
    assert output_file_name("o.{{id.emoji}}", "flux", job_id=jid, name=None) == (
        "o.{{id.emoji}}", "the job id in flux's emoji form")
