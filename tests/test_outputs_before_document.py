"""A warning line before a JSON or XML answer (a locale warning, a site wrapper's note,
`slurm_load_jobs: ... deprecated`): the document is read where it starts and each line
before it is said with its line number, as is a message after it; more JSON after the
document, or a document cut off, is still refused naming the line; a job's own text (a
name holding `{` or `<?xml`) is never taken as where the document starts."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import SiteError

LOCALE = ("perl: warning: Setting locale failed.\n"
          "perl: warning: Please check that your locale settings:\n")


def squeue(*names: str, indent: int | None = 2) -> str:
    return json.dumps({"errors": [], "jobs": [
        {"job_id": 7000 + n, "name": name, "user_name": "u", "partition": "p",
         "job_state": "RUNNING", "time_limit": 60, "submit_time": 1764579600,
         "start_time": 1764579700, "end_time": 0, "node_count": 1, "cpus": 1,
         "nodes": "c1"} for n, name in enumerate(names, 1)]}, indent=indent)


TRICKY_NAMES = ('{"jobs": []}', "<?xml version='1.0'?><Data/>", "[warn] {")


@pytest.mark.parametrize("indent", [None, 2])
def test_squeue_json_after_warnings_reads_every_job_and_says_each_line(indent):
    said: list[str] = []
    text = LOCALE + "slurm_load_jobs: this option is deprecated\n" + squeue(
        *TRICKY_NAMES, indent=indent)
    jobs = SlurmCommands().parse_status_json(text, said)
    assert [j.name for j in jobs] == list(TRICKY_NAMES)
    assert [s.split(": a message")[0] for s in said] == [
        f"slurm: cannot parse squeue --json line {n}" for n in (1, 2, 3)]
    assert "(got 'slurm_load_jobs: this option is deprecated')" in said[2]


def test_a_message_line_opening_with_a_bracket_is_no_document():
    said: list[str] = []
    jobs = SlurmCommands().parse_status_json("[warn] wrapper note\n" + squeue("a"), said)
    assert [j.native_id for j in jobs] == ["7001"] and "line 1" in said[0]


def test_without_a_list_to_say_it_in_the_line_is_refused_by_number():
    with pytest.raises(SiteError, match=r"squeue --json line 2: a message before the JSON"):
        SlurmCommands().parse_status_json("\nsqueue: warning: x\n" + squeue("a"))


def test_a_message_after_the_document_is_said_and_more_json_is_refused_naming_its_line():
    said: list[str] = []
    text = "squeue: warning: x\n" + squeue("a") + "\ntrailing note\n"
    last = text.count("\n")
    assert [j.native_id for j in SlurmCommands().parse_status_json(text, said)] == ["7001"]
    assert said[-1] == (f"slurm: cannot parse squeue --json line {last}: a message after the "
                        "JSON, not read (got 'trailing note')")
    # a line that goes on with JSON is no message: the answer is refused
    text = "squeue: warning: x\n" + squeue("a") + '\n"jobs": []}\n'
    with pytest.raises(SiteError, match=rf"invalid JSON \(Extra data at line {last}\)"):
        SlurmCommands().parse_status_json(text, [])


def test_a_document_cut_off_is_refused_and_a_json_name_inside_is_not_read_instead():
    """The squeue answer cut short after a job whose name (a raw newline in it) holds a
    whole JSON document on a line of its own: the cut is said at its line of the whole
    output, the name's document is never read as the answer."""
    whole = squeue("a", "x", indent=2).replace('"x"', '"x\n{\\"jobs\\": []}"')
    cut = "squeue: warning: x\n" + whole[: whole.index('"x\n') + 30]
    with pytest.raises(SiteError) as err:
        SlurmCommands().parse_status_json(cut, [])
    assert f"at line {cut.count(chr(10)) + 1})" in str(err.value)


def test_bjobs_and_bhosts_json_after_a_warning_in_a_snapshot():
    bjobs = json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [
        {"JOBID": "71", "STAT": "RUN", "USER": "alice", "QUEUE": "normal",
         "JOB_NAME": "<?xml {", "SUBMIT_TIME": "Dec  5 23:59"}]})
    bhosts = json.dumps({"COMMAND": "bhosts", "HOSTS": 1, "RECORDS": [
        {"HOST_NAME": "hostA", "STATUS": "ok", "MAX": "4", "NJOBS": "1", "RUN": "1"}]})
    snap = LsfCommands().parse_snapshot("wren", {
        "hosts": "Warning: LSF_ENVDIR is not set\n" + bhosts,
        "queue": LOCALE + bjobs, "lshosts": "", "queues": ""})
    assert [j.name for j in snap.jobs] == ["<?xml {"]
    assert [n.name for n in snap.nodes] == ["hostA"]
    assert [w.split(": a message")[0] for w in snap.warnings] == [
        "wren: lsf: cannot parse bhosts -json line 1", "wren: lsf: cannot parse bjobs -json line 1",
        "wren: lsf: cannot parse bjobs -json line 2"]


def test_flux_jobs_json_after_a_warning():
    said: list[str] = []
    text = "flux-jobs: warning: broker slow\n" + json.dumps({"jobs": [
        {"id": 11, "userid": 1, "state": "RUN", "name": "{x", "nnodes": 1}]})
    jobs = FluxCommands().parse_status(text, said)
    assert [j.name for j in jobs] == ["{x"] and "flux jobs --json line 1" in said[0]


def test_pbsnodes_json_after_a_warning():
    said: list[str] = []
    text = LOCALE + json.dumps({"pbs_version": "2024.1.0", "nodes": {"n1": {
        "state": "free", "resources_available": {"ncpus": 8, "mem": "1gb"}}}}, indent=4)
    nodes = PbsCommands().parse_nodes(text, said)
    assert [n.name for n in nodes] == ["n1"]
    assert ["line 1" in said[0], "line 2" in said[1], len(said)] == [True, True, 2]


SGE_QSTAT = """<?xml version='1.0'?>
<job_info>
  <queue_info>
    <job_list state="running">
      <JB_job_number>501</JB_job_number>
      <JB_name>&lt;?xml { job</JB_name>
      <JB_owner>alice</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-01T10:00:00</JAT_start_time>
      <queue_name>all.q@node-001</queue_name>
      <slots>1</slots>
    </job_list>
  </queue_info>
  <job_info>
  </job_info>
</job_info>
"""


def test_grid_engine_qstat_xml_after_a_warning():
    said: list[str] = []
    jobs = SgeCommands().parse_status("error: commlib error: got select error\n" + SGE_QSTAT,
                                      said)
    assert [j.name for j in jobs] == ["<?xml { job"]
    assert said[0].startswith("sge: cannot parse qstat -xml line 1: a message before the XML")


def test_grid_engine_qstat_xml_cut_off_after_a_warning_is_refused():
    with pytest.raises(SiteError, match="qstat -xml: no closing </job_info>"):
        SgeCommands().parse_status("warning: x\n" + SGE_QSTAT[:300], [])


def test_torque_qstat_x_after_a_warning_and_cut_off():
    doc = ("<Data><Job><Job_Id>1.srv</Job_Id><Job_Name>&lt;?xml</Job_Name>"
           "<job_state>R</job_state></Job></Data>")
    said: list[str] = []
    jobs = PbsCommands(flavor="torque").parse_status(LOCALE + doc + "\n", said)
    assert [(j.native_id, j.name) for j in jobs] == [("1.srv", "<?xml")] and len(said) == 2
    with pytest.raises(SiteError, match="qstat -x"):
        PbsCommands(flavor="torque").parse_status(LOCALE + doc[:40], [])
