"""Sweep 22 of scheduler outputs, the less-covered schedulers: outputs written here in
the forms each scheduler documents (PBS Pro 2022.1 `qstat -f -F json` and `pbsnodes -av -F
json` with resources_available/assigned, Torque `qstat -x`, LSF 10.1 `bjobs -o -json` and
`bhosts -json`, flux-core `flux jobs --json` and `flux resource list`, Grid Engine `qstat
-f -xml` with pending jobs, `qacct -j`), none captured and none met by sweeps 1-21: held,
suspended, exiting, transiting, moved and zombie jobs, arrays of 100000 tasks, jobs on
many hosts, non-ASCII names, jobs with every optional field missing. Each row of OUTPUTS
is one record and what a user would read from it; the focused tests after it are the
faults this sweep found (each failed before)."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import at, error_of, flux, lsf, pbs, sge, torque

from diamond_jupyter.model import JobStatus


def read(jobs: list[JobStatus]) -> list[tuple]:
    """(id, state, native state, reason, exit code, name, nodes, cpus, gpus, hosts,
    walltime, start, end) of each record."""
    return [
        (
            j.native_id,
            j.state.value,
            j.native_state,
            j.reason,
            j.exit_code,
            j.name,
            j.nodes,
            j.cpus,
            j.gpus,
            j.node_list,
            j.walltime_s,
            j.started_at,
            j.ended_at,
        )
        for j in jobs
    ]


PBS_QSTAT = {
    "timestamp": 1764579600,
    "pbs_version": "2022.1.1",
    "pbs_server": "pbs01",
    "Jobs": {
        "300.pbs01": {
            "Job_Name": "Früh ✓",
            "Job_Owner": "ana@login1",
            "job_state": "H",
            "queue": "workq",
            "Hold_Types": "u",
            "Resource_List": {
                "walltime": "04:00:00",
                "select": "1:ncpus=4:ngpus=1",
                "ngpus": 1,
                "ncpus": 4,
                "nodect": 1,
            },
            "qtime": "Sun Dec  6 08:00:00 2026",
        },
        "301[].pbs01": {
            "Job_Name": "sweep",
            "job_state": "B",
            "queue": "workq",
            "array": "True",
            "array_indices_submitted": "0-99999",
            "array_indices_remaining": "5000-99999",
            "array_state_count": "Queued:94999 Running:1 Exiting:0 Expired:5000 ",
            "Resource_List": {"walltime": "00:10:00", "ncpus": 1, "nodect": 1},
            "stime": "Sun Dec  6 08:00:00 2026",
        },
        "302.pbs01": {
            "Job_Name": "wide",
            "job_state": "R",
            "queue": "workq",
            "exec_host": "n001/0*128+n002/0*128+n003/0*128+n004/0*128",
            "exec_vnode": "+".join(f"(n00{i}:ncpus=128:ngpus=4)" for i in range(1, 5)),
            "Resource_List": {
                "walltime": "48:00:00",
                "ncpus": 512,
                "ngpus": 16,
                "nodect": 4,
                "select": "4:ncpus=128:ngpus=4",
            },
            "stime": "Sun Dec  6 07:00:00 2026",
        },
        "303.pbs01": {
            "Job_Name": "exiting",
            "job_state": "E",
            "queue": "workq",
            "Exit_status": 0,
            "stime": "Sun Dec  6 07:00:00 2026",
            "Resource_List": {"ncpus": 1},
        },
        "304.pbs01": {
            "Job_Name": "susp",
            "job_state": "S",
            "queue": "workq",
            "stime": "Sun Dec  6 07:00:00 2026",
            "Resource_List": {"ncpus": 1},
        },
        "305.pbs01": {"Job_Name": "bare", "job_state": "Q", "queue": "workq"},
        "306.pbs01": {
            "Job_Name": "killed",
            "job_state": "F",
            "queue": "workq",
            "Exit_status": 271,
            "stime": "Sun Dec  6 07:00:00 2026",
            "mtime": "Sun Dec  6 07:30:00 2026",
            "Resource_List": {"ncpus": 1},
        },
        "307.pbs01": {
            "job_state": "W",
            "queue": "workq",
            "Execution_Time": "Mon Dec  7 06:00:00 2026",
        },
        "308.pbs01": {"job_state": "T", "queue": "workq"},
        "309.pbs01": {"job_state": "U", "queue": "workq"},
        "310.pbs01": {"job_state": "Z", "queue": "workq"},
    },
}
PBS_NODES = {
    "timestamp": 1,
    "pbs_version": "2022.1.1",
    "pbs_server": "s",
    "nodes": {
        "g001": {
            "Mom": "g001.cl",
            "state": "job-busy",
            "resources_available": {
                "arch": "linux",
                "host": "g001",
                "mem": "515894mb",
                "ncpus": 128,
                "ngpus": 8,
                "gpu_model": "a100",
                "vnode": "g001",
            },
            "resources_assigned": {"mem": "262144kb", "ncpus": 128, "ngpus": 4},
            "jobs": ["302.pbs01/0"],
        },
        "g002": {
            "state": "down,offline",
            "resources_available": {"ncpus": 64, "mem": "256gb"},
            "resources_assigned": {},
            "comment": "hw fault",
        },
        "g003": {
            "state": "free",
            "resources_available": {"ncpus": 64, "mem": "256gb", "ngpus": 0},
        },
        "g004": {"state": "state-unknown,down", "resources_available": {"ncpus": 64}},
        "g005": {"state": "resv-exclusive", "resources_available": {"ncpus": 64}},
    },
}
TORQUE_XML = "".join([
    "<Data><Job><Job_Id>500.t01</Job_Id><Job_Name>naïve</Job_Name><job_state>H</job_state>",
    "<queue>batch</queue><Hold_Types>u</Hold_Types><Resource_List><walltime>01:00:00",
    "</walltime><nodes>2:ppn=8:gpus=2</nodes></Resource_List></Job>",
    "<Job><Job_Id>501[].t01</Job_Id><Job_Name>arr</Job_Name><job_state>Q</job_state>",
    "<queue>batch</queue><job_array_request>1-50000%10</job_array_request></Job>",
    "<Job><Job_Id>502.t01</Job_Id><job_state>S</job_state><queue>batch</queue>",
    "<start_time>1764999000</start_time><exec_host>n1/0-7+n2/0-7</exec_host></Job>",
    "<Job><Job_Id>503.t01</Job_Id><job_state>T</job_state><queue>batch</queue></Job>",
    "<Job><Job_Id>504.t01</Job_Id><job_state>C</job_state><exit_status>-11</exit_status>",
    "<queue>batch</queue></Job></Data>"])
BJOBS = {
    "COMMAND": "bjobs",
    "JOBS": 5,
    "RECORDS": [
        {"JOBID": "700", "STAT": "PSUSP", "JOB_NAME": "held"},
        {
            "JOBID": "701",
            "STAT": "SSUSP",
            "JOB_NAME": "ssusp",
            "START_TIME": "Dec  6 08:00",
            "EXEC_HOST": "64*h001:64*h002:64*h003",
        },
        {"JOBID": "702", "STAT": "ZOMBI", "JOB_NAME": "z"},
        {"JOBID": "703", "STAT": "UNKWN", "JOB_NAME": "u"},
        {"JOBID": "704", "STAT": "WAIT", "JOB_NAME": "w"},
        {"JOBID": "705", "STAT": "PROV", "JOB_NAME": "p"},
        {
            "JOBID": "706",
            "STAT": "EXIT",
            "EXIT_CODE": "130",
            "EXIT_REASON": "TERM_OWNER: job killed by owner",
            "JOB_NAME": "k",
        },
        {
            "JOBID": "707",
            "STAT": "RUN",
            "JOB_NAME": "big[99999]",
            "START_TIME": "Dec  6 08:00",
            "EXEC_HOST": "h9",
            "GPU_NUM": "4",
            "RUNTIMELIMIT": "60.0/h9",
        },
        {"JOBID": "708", "STAT": "XX", "JOB_NAME": "bad"},
    ],
}
BHOSTS = {
    "COMMAND": "bhosts",
    "HOSTS": 3,
    "RECORDS": [
        {"HOST_NAME": "gpu01", "STATUS": "ok", "MAX": "64", "NJOBS": "16", "RUN": "16"},
        {"HOST_NAME": "gpu02", "STATUS": "closed_Full", "MAX": "64", "NJOBS": "64", "RUN": "64"},
        {"HOST_NAME": "gpu03", "STATUS": "unavail", "MAX": "-", "NJOBS": "0", "RUN": "0"},
    ],
}
FLUX_JOBS = {
    "jobs": [
        {"id": 1, "state": "PRIORITY", "t_submit": 1764999000},
        {
            "id": 2,
            "state": "RUN",
            "nnodes": 128,
            "ntasks": 4096,
            "nodelist": "node[0001-0128]",
            "t_run": 1764999000,
            "expiration": 1765002600,
            "name": "ünï",
        },
        {
            "id": 3,
            "state": "INACTIVE",
            "result": "FAILED",
            "returncode": 1,
            "waitstatus": 256,
            "t_run": 1764999000,
            "t_inactive": 1765000000,
        },
        {
            "id": 4,
            "state": "INACTIVE",
            "result": "TIMEOUT",
            "t_run": 1764999000,
            "t_inactive": 1765000000,
        },
        {"id": 5, "state": "NEW"},
        {"id": 6, "state": "SCHED", "urgency": 0},
        {"id": 7, "state": "RUN", "ngpus": 8},
    ]
}


def _ge_job(number: int, name: str, code: str, fields: str, kind: str) -> str:
    return (f'<job_list state="{kind}"><JB_job_number>{number}</JB_job_number><JB_name>'
            f"{name}</JB_name><JB_owner>u</JB_owner><state>{code}</state>{fields}</job_list>")


def _ge_running(number: int, name: str, code: str, queue: str, slots: int) -> str:
    return _ge_job(number, name, code, "<JAT_start_time>2026-12-06T08:00:00</JAT_start_time>"
                   f"<queue_name>{queue}</queue_name><slots>{slots}</slots>", "running")


def _ge_waiting(number: int, name: str, code: str, extra: str = "") -> str:
    return _ge_job(number, name, code, "<JB_submission_time>2026-12-06T07:00:00"
                   f"</JB_submission_time><slots>1</slots>{extra}", "pending")


QSTAT_XML = (
    '<?xml version="1.0"?><job_info><queue_info>'
    + _ge_running(900, "Σ run", "r", "gpu.q@g01", 256) + _ge_running(901, "x", "S", "all.q@n3", 1)
    + "</queue_info><job_info>"
    + _ge_waiting(902, "a", "hqw") + _ge_waiting(903, "b", "qw", "<tasks>1-100000:1</tasks>")
    + _ge_waiting(904, "c", "Eqw") + "</job_info></job_info>"
)




def pbs_nodes() -> list[tuple]:
    """(name, state, cores, cores taken, memory, GPUs, features) of each PBS_NODES node."""
    return [(n.name, n.state, n.cpus, n.cpus_allocated, n.memory_mb, n.gpus, n.features)
            for n in pbs.parse_nodes(json.dumps(PBS_NODES))]


def lsf_hosts() -> list[tuple]:
    """(name, state, slots, slots taken) of each BHOSTS host."""
    return [(n.name, n.state, n.cpus, n.cpus_allocated)
            for n in lsf.parse_hosts(json.dumps(BHOSTS))]


OUTPUTS = [
    ("qstat -F json: a user hold (H), a non-ASCII name, a GPU in its select",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[0],
     ("300.pbs01", "PENDING", "H", "held (u)", None, "Früh ✓", 1, 4, 1, None, 14400, None, None)),
    ("qstat -F json: an array of 100000 subjobs begun (B) runs",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[1],
     ("301[].pbs01", "RUNNING", "B", None, None, "sweep", 1, 1, None, None, 600,
      at(2026, 12, 6, 8, 0), None)),
    ("qstat -F json: four hosts of 128 cores and 4 GPUs each",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[2],
     ("302.pbs01", "RUNNING", "R", None, None, "wide", 4, 512, 16,
      "n001/0*128+n002/0*128+n003/0*128+n004/0*128", 172800, at(2026, 12, 6, 7, 0), None)),
    ("qstat -F json: exiting (E) is still running",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[3],
     ("303.pbs01", "RUNNING", "E", None, None, "exiting", None, 1, None, None, None,
      at(2026, 12, 6, 7, 0), None)),
    ("qstat -F json: suspended (S) is still running",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[4],
     ("304.pbs01", "RUNNING", "S", None, None, "susp", None, 1, None, None, None,
      at(2026, 12, 6, 7, 0), None)),
    ("qstat -F json: a job with no optional field waits",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[5],
     ("305.pbs01", "PENDING", "Q", None, None, "bare", None, None, None, None, None, None, None)),
    ("qstat -F json: Exit_status 271 (256 + SIGTERM) is said as 143",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[6],
     ("306.pbs01", "FAILED", "F", "killed by signal 15", 143, "killed", None, 1, None, None, None,
      at(2026, 12, 6, 7, 0), None)),
    ("qstat -F json: waiting for its Execution_Time (W), which says why (sweep 26)",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[7],
     ("307.pbs01", "PENDING", "W", "waiting for its start time (qsub -a)", None, None, None,
      None, None, None, None, None, None)),
    ("qstat -F json: transiting (T) waits",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[8],
     ("308.pbs01", "PENDING", "T", None, None, None, None, None, None, None, None, None, None)),
    ("qstat -F json: U (cycle-harvesting, user busy) still runs",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[9],
     ("309.pbs01", "RUNNING", "U", None, None, None, None, None, None, None, None, None, None)),
    ("qstat -F json: Z (a subjob's zombie state) is not known",
     lambda: read(pbs.parse_status(json.dumps(PBS_QSTAT)))[10],
     ("310.pbs01", "UNKNOWN", "Z", None, None, None, None, None, None, None, None, None, None)),
    ("qstat -F json: a state no PBS prints is unknown, never a guess",
     lambda: read(pbs.parse_status(json.dumps({"Jobs": {"1.s": {"job_state": "?"}}}))),
     [("1.s", "UNKNOWN", "?", None, None, None, None, None, None, None, None, None, None)]),
    ("qstat -F json cut short is refused, nothing read wrong",
     lambda: error_of(lambda: pbs.parse_status(json.dumps(PBS_QSTAT)[:200])),
     "pbs: cannot parse qstat -F json: invalid JSON (Unterminated string starting at line 1)"),
    ("pbsnodes -F json: job-busy with GPUs and a gpu_model feature",
     lambda: pbs_nodes()[0],
     ("g001", "job-busy", 128, 128, 515894, 8, ["gpu_model=a100"])),
    ("pbsnodes -F json: down,offline takes no job",
     lambda: pbs_nodes()[1],
     ("g002", "down,offline", 64, 0, 262144, 0, [])),
    ("pbsnodes -F json: free with ngpus 0",
     lambda: pbs_nodes()[2],
     ("g003", "free", 64, 0, 262144, 0, [])),
    ("pbsnodes -F json: state-unknown,down with no memory said",
     lambda: pbs_nodes()[3],
     ("g004", "state-unknown,down", 64, 0, 0, 0, [])),
    ("pbsnodes -F json: resv-exclusive",
     lambda: pbs_nodes()[4],
     ("g005", "resv-exclusive", 64, 0, 0, 0, [])),
    ("Torque qstat -x: a user hold, nodes=2:ppn=8:gpus=2 is 2 nodes, 16 cores, 4 GPUs",
     lambda: read(torque.parse_status(TORQUE_XML))[0],
     ("500.t01", "PENDING", "H", "held (u)", None, "naïve", 2, 16, 4, None, 3600, None, None)),
    ("Torque qstat -x: an array of 50000 with a throttle waits",
     lambda: read(torque.parse_status(TORQUE_XML))[1],
     ("501[].t01", "PENDING", "Q", None, None, "arr", None, None, None, None, None, None, None)),
    ("Torque qstat -x: suspended runs on its hosts",
     lambda: read(torque.parse_status(TORQUE_XML))[2],
     ("502.t01", "RUNNING", "S", None, None, None, None, None, None, "n1/0-7+n2/0-7", None,
      at(2025, 12, 6, 5, 30), None)),
    ("Torque qstat -x: transiting waits",
     lambda: read(torque.parse_status(TORQUE_XML))[3],
     ("503.t01", "PENDING", "T", None, None, None, None, None, None, None, None, None, None)),
    ("Torque qstat -x: C with -11 (Torque's walltime kill) is a timeout",
     lambda: read(torque.parse_status(TORQUE_XML))[4],
     ("504.t01", "TIMEOUT", "C", "killed by PBS: walltime exceeded", -11, None, None, None, None,
      None, None, None, None)),
    ("bjobs -json: PSUSP is held",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[0],
     ("700", "PENDING", "PSUSP", "held (PSUSP)", None, "held", None, None, None, None, None, None,
      None)),
    ("bjobs -json: SSUSP runs on three hosts of 64",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[1],
     ("701", "RUNNING", "SSUSP", None, None, "ssusp", 3, None, None, "64*h001:64*h002:64*h003",
      None, at(2026, 12, 6, 8, 0), None)),
    ("bjobs -json: ZOMBI is not known",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[2],
     ("702", "UNKNOWN", "ZOMBI", None, None, "z", None, None, None, None, None, None, None)),
    ("bjobs -json: UNKWN is not known",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[3],
     ("703", "UNKNOWN", "UNKWN", None, None, "u", None, None, None, None, None, None, None)),
    ("bjobs -json: WAIT (a chunk job) waits",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[4],
     ("704", "PENDING", "WAIT", None, None, "w", None, None, None, None, None, None, None)),
    ("bjobs -json: PROV (provisioning) waits",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[5],
     ("705", "PENDING", "PROV", None, None, "p", None, None, None, None, None, None, None)),
    ("bjobs -json: killed by its owner (TERM_OWNER) is a cancel, 130 kept",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[6],
     ("706", "CANCELLED", "EXIT", "TERM_OWNER: job killed by owner", 130, "k", None, None, None,
      None, None, None, None)),
    ("bjobs -json: task 99999 of an array, its limit normalised to host h9",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[7],
     ("707[99999]", "RUNNING", "RUN", None, None, "big[99999]", 1, None, None, "h9", 3600,
      at(2026, 12, 6, 8, 0), None)),
    ("bjobs -json: an unknown STAT is not known, never a guess",
     lambda: read(lsf.parse_status(json.dumps(BJOBS)))[8],
     ("708", "UNKNOWN", "XX", None, None, "bad", None, None, None, None, None, None, None)),
    ("bhosts -json: ok with 16 of 64 slots used",
     lambda: lsf_hosts()[0],
     ("gpu01", "ok", 64, 16)),
    ("bhosts -json: closed_Full",
     lambda: lsf_hosts()[1],
     ("gpu02", "closed_full", 64, 64)),
    ("bhosts -json: unavail with MAX '-'",
     lambda: lsf_hosts()[2],
     ("gpu03", "unavail", 0, 0)),
    ("flux jobs --json: PRIORITY waits",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[0],
     ("1", "PENDING", "PRIORITY", None, None, None, None, None, None, None, None, None, None)),
    ("flux jobs --json: RUN on 128 nodes with a non-ASCII name, its limit from expiration",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[1],
     ("2", "RUNNING", "RUN", None, None, "ünï", 128, None, None, "node[0001-0128]", 3600,
      at(2025, 12, 6, 5, 30), None)),
    ("flux jobs --json: INACTIVE FAILED with its code",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[2],
     ("3", "FAILED", "INACTIVE:FAILED", None, 1, None, None, None, None, None, None,
      at(2025, 12, 6, 5, 30), at(2025, 12, 6, 5, 46, 40))),
    ("flux jobs --json: INACTIVE TIMEOUT",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[3],
     ("4", "TIMEOUT", "INACTIVE:TIMEOUT", None, None, None, None, None, None, None, None,
      at(2025, 12, 6, 5, 30), at(2025, 12, 6, 5, 46, 40))),
    ("flux jobs --json: NEW waits",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[4],
     ("5", "PENDING", "NEW", None, None, None, None, None, None, None, None, None, None)),
    ("flux jobs --json: SCHED with urgency 0 is held",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[5],
     ("6", "PENDING", "SCHED", "held (urgency 0)", None, None, None, None, None, None, None, None,
      None)),
    ("flux jobs --json: RUN with 8 GPUs",
     lambda: read(flux.parse_status(json.dumps(FLUX_JOBS)))[6],
     ("7", "RUNNING", "RUN", None, None, None, None, None, 8, None, None, None, None)),
    ("flux resource list: free, allocated and down GPU nodes",
     lambda: [(n.name, n.state, n.cpus, n.cpus_allocated, n.gpus) for n in flux.parse_resources(
         "free||2|128|8|gpu[01-02]\nallocated||1|64|4|gpu03\ndown||1|64|4|gpu04\n")],
     [("gpu01", "free", 64, 0, 4), ("gpu02", "free", 64, 0, 4), ("gpu03", "allocated", 64, 64, 4),
      ("gpu04", "down", 64, 0, 4)]),
    ("qstat -f -xml: 256 slots on a GPU host, a non-ASCII name",
     lambda: read(sge.parse_status(QSTAT_XML))[0],
     ("900", "RUNNING", "r", None, None, "Σ run", None, 256, None, "g01", None,
      at(2026, 12, 6, 8, 0), None)),
    ("qstat -f -xml: S (suspended by its queue) still runs",
     lambda: read(sge.parse_status(QSTAT_XML))[1],
     ("901", "RUNNING", "S", "suspended (S)", None, "x", None, 1, None, "n3", None,
      at(2026, 12, 6, 8, 0), None)),
    ("qstat -f -xml: hqw held",
     lambda: read(sge.parse_status(QSTAT_XML))[2],
     ("902", "PENDING", "hqw", "held (hqw)", None, "a", None, 1, None, None, None, None, None)),
    ("qstat -f -xml: qw of 100000 tasks",
     lambda: read(sge.parse_status(QSTAT_XML))[3],
     ("903.1-100000:1", "PENDING", "qw", None, None, "b", None, 1, None, None, None, None, None)),
    ("qstat -f -xml: Eqw in error",
     lambda: read(sge.parse_status(QSTAT_XML))[4],
     ("904", "PENDING", "Eqw",
      "error state (Eqw): `qstat -j` says why; it runs only after `qmod -cj`", None, "c", None, 1,
      None, None, None, None, None)),
]


# -- queues, hosts, records without an id, submit replies -----------------------------------

PBS_QUEUES = {"timestamp": 1, "pbs_version": "2022.1.1", "pbs_server": "pbs01", "Queue": {
    "gpu": {"queue_type": "Execution", "enabled": "True", "started": "True",
            "resources_max": {"walltime": "168:00:00", "ngpus": 64, "nodect": 16},
            "resources_min": {"ngpus": 1}, "resources_default": {"walltime": "01:00:00"},
            "max_run": "[u:PBS_GENERIC=4]",
            "state_count": "Transit:0 Queued:12 Held:1 Waiting:0 Running:4 Exiting:0 Begun:0 "},
    "debug": {"queue_type": "Execution", "enabled": "False", "started": "True",
              "resources_max": {"walltime": "00:30:00"}},
    "route": {"queue_type": "Route", "route_destinations": "gpu,debug", "enabled": "True",
              "started": "True"},
}}
LSHOSTS = {"COMMAND": "lshosts", "HOSTS": 2, "RECORDS": [
    {"HOST_NAME": "gpu01", "type": "X86_64", "model": "Intel_EM64T", "ncpus": "64",
     "maxmem": "503.2G", "ngpus": "4", "RESOURCES": "(mg gpu a100)"},
    {"HOST_NAME": "gpu02", "type": "LINUXPPC64LE", "ncpus": "-", "maxmem": "-", "ngpus": "-"},
]}
FLUX_QUEUES = (
    "    QUEUE EN ST TDEFAULT   TLIMIT     NNODES     NCORES      NGPUS\n"
    "     gpu*  ✔  ✔      30m       1d      1-128      0-inf        1-8\n"
    "      big  ✔  ✗      inf      inf      0-inf      0-inf      0-inf\n")


def said_and_read(parse, text: str) -> tuple[list[str], list[str]]:
    """(the ids or names `parse` read, what it said it left out) of `text`."""
    said: list[str] = []
    return [getattr(r, "native_id", None) or r.name for r in parse(text, said)], said


OUTPUTS += [
    ("qstat -Qf -F json: limits of time, GPUs and nodes, a default walltime",
     lambda: [(p.name, p.state, p.max_time_s, p.max_gpus, p.min_gpus, p.max_nodes,
               p.default_time_s) for p in pbs.parse_queues(json.dumps(PBS_QUEUES))][0],
     ("gpu", "UP", 604800, 64, 1, 16, 3600)),
    ("qstat -Qf -F json: a queue not enabled takes no job",
     lambda: [(p.name, p.state, p.max_time_s) for p in pbs.parse_queues(
         json.dumps(PBS_QUEUES))][1], ("debug", "DOWN", 1800)),
    ("qstat -Qf -F json: a routing queue names where it sends jobs",
     lambda: [(p.name, p.routes_to) for p in pbs.parse_queues(json.dumps(PBS_QUEUES))][2],
     ("route", ["gpu", "debug"])),
    ("bhosts -json with lshosts -json: memory, GPUs, architecture and resources",
     lambda: [(n.name, n.cpus, n.cpus_allocated, n.memory_mb, n.gpus, n.architecture,
               n.features) for n in lsf.parse_hosts(json.dumps(BHOSTS),
                                                     json.dumps(LSHOSTS))][0],
     ("gpu01", 64, 16, 515276, 4, "x86_64", ["mg", "gpu", "a100"])),
    ("lshosts -json: LINUXPPC64LE is ppc64le; '-' is no size",
     lambda: [(n.name, n.architecture, n.memory_mb, n.gpus) for n in lsf.parse_hosts(
         json.dumps(BHOSTS), json.dumps(LSHOSTS))][1], ("gpu02", "ppc64le", 0, 0)),
    ("flux queue list: ✔/✗ columns, a default, inf limits are none",
     lambda: [(p.name, p.default, p.max_time_s, p.max_nodes, p.state)
              for p in flux.parse_queues(FLUX_QUEUES)],
     [("gpu", True, 86400, 128, "UP"), ("big", False, None, None, "DOWN")]),
    ("Torque qstat -x: a Job without Job_Id is said, the next read",
     lambda: said_and_read(torque.parse_status, "<Data><Job><job_state>R</job_state></Job>"
                           "<Job><Job_Id>5.t</Job_Id><job_state>R</job_state></Job></Data>"),
     (["5.t"], ["pbs: cannot parse qstat -x (Torque XML): a Job without Job_Id "
                "(got 'job_state=R')"])),
    ("pbsnodes -F json: a node entry that is no object is said, the next read",
     lambda: said_and_read(pbs.parse_nodes, json.dumps({"nodes": {
         "a": "garbage", "b": {"state": "free", "resources_available": {"ncpus": 4}}}})),
     (["b"], ["pbs: cannot parse pbsnodes -F json node a: not an object of attributes "
              "(got 'garbage')"])),
    ("bjobs -json: a record without JOBID is said by its number, the next read",
     lambda: said_and_read(lsf.parse_status, json.dumps(
         {"RECORDS": [{"STAT": "RUN"}, {"JOBID": "3", "STAT": "RUN"}]})),
     (["3"], ["lsf: cannot parse bjobs -json record 1: no JOBID (got \"{'STAT': 'RUN'}\")"])),
    ("flux jobs --json: a job without an id is said by its number, the next read",
     lambda: said_and_read(flux.parse_status, json.dumps(
         {"jobs": [{"state": "RUN"}, {"id": 3, "state": "RUN"}]})),
     (["3"], ["flux: cannot parse flux jobs --json job 1: not a job with an id "
              "(got \"{'state': 'RUN'}\")"])),
    ("qstat -xml: a job without JB_job_number is said, none made up",
     lambda: said_and_read(sge.parse_status, '<?xml version="1.0"?><job_info><queue_info>'
                           '<job_list state="running"><state>r</state></job_list>'
                           "</queue_info><job_info/></job_info>"),
     ([], ["sge: cannot parse qstat -xml: a job without JB_job_number (got 'state=r')"])),
    ("bjobs -json: 'Job <9> is not found' is no job", lambda: lsf.parse_status(json.dumps(
        {"RECORDS": [{"JOBID": "9", "ERROR": "Job <9> is not found"}]})), []),
    ("qsub (PBS Pro) at a fully qualified server",
     lambda: pbs.parse_submit("4711.pbs01.example.org\n"), "4711.pbs01.example.org"),
    ("qsub -terse (Grid Engine) of a 100000-task array after its message",
     lambda: sge.parse_submit('Your job-array 12.1-100000:1 ("x") has been submitted\n'
                              "12.1-100000:1\n"), "12"),
    ("flux submit: an F58 id", lambda: flux.parse_submit("ƒ2Jc8CuU1\n"), "ƒ2Jc8CuU1"),
]


@pytest.mark.parametrize(("what", "run", "expected"), OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_output_read(what: str, run, expected) -> None:
    assert run() == expected, what


# -- faults this sweep found ------------------------------------------------------------------


def _qacct_record(number: str) -> str:
    return "\n".join([
        "=" * 62, "qname        all.q", "hostname     n1", f"jobnumber    {number}",
        "taskid       undefined", "qsub_time    Sun Dec  6 08:00:00 2026",
        "start_time   Sun Dec  6 08:01:00 2026", "end_time     Sun Dec  6 08:02:00 2026",
        "failed       0", "exit_status  0"])


EMPTY_QSTAT_XML = '<?xml version="1.0"?><job_info><queue_info/><job_info/></job_info>'
QACCT_ONE_BAD = "\n".join([_qacct_record("905"), _qacct_record("906x"), _qacct_record("907")])


def test_qacct_bad_jobnumber_is_said_and_the_others_read() -> None:
    """Before, qacct's part of `parse_status` got no list to say a record in, so one bad
    jobnumber failed the whole lookup: every job of it was left unread."""
    said: list[str] = []
    jobs = sge.parse_status(EMPTY_QSTAT_XML + "\n" + QACCT_ONE_BAD + "\n", said)
    assert [(j.native_id, j.state.value, j.ended_at) for j in jobs] == [
        ("905", "COMPLETED", at(2026, 12, 6, 8, 2)), ("907", "COMPLETED", at(2026, 12, 6, 8, 2))]
    assert len(said) == 1
    assert said[0].startswith("sge: cannot parse qacct -j: bad jobnumber '906x'")


def test_qacct_alone_with_only_bad_records_is_said_not_refused_as_no_xml() -> None:
    """qacct records without qstat's XML before them, every one unreadable: each said,
    no job read (so each stays unknown), not 'not XML'."""
    said: list[str] = []
    assert sge.parse_status(_qacct_record("9x") + "\n", said) == []
    assert [s.split(" (got ")[0] for s in said] == [
        "sge: cannot parse qacct -j: bad jobnumber '9x'"]


def test_qacct_bad_jobnumber_without_a_list_still_fails_naming_it() -> None:
    assert error_of(lambda: sge.parse_status(EMPTY_QSTAT_XML + "\n" + QACCT_ONE_BAD)) == (
        "sge: cannot parse qacct -j: bad jobnumber '906x'")


@pytest.mark.parametrize(("request_", "expected"), [
    ("<nodes>2:ppn=8:gpus=2</nodes>", (2, 16)),
    ("<nodes>n07:ppn=4+3</nodes>", (4, 7)),  # a named host and three of one processor
    ("<nodes>4</nodes>", (4, 4)),
    ("<procs>24</procs>", (None, 24)),
    ("<nodes>2:ppn=x</nodes>", (None, None)),  # not read as any count
    ("<nodect>3</nodect><ncpus>12</ncpus><nodes>2:ppn=8</nodes>", (3, 12)),  # as said
])
def test_torque_nodes_and_processors_read_from_the_request(request_: str, expected) -> None:
    """Before, a Torque job whose Resource_List has no nodect/ncpus (an older pbs_server,
    `-l procs=N`) was read as asking no node and no processor at all."""
    xml = ("<Data><Job><Job_Id>1.t</Job_Id><job_state>Q</job_state><Resource_List>"
           f"{request_}</Resource_List></Job></Data>")
    assert [(j.nodes, j.cpus) for j in torque.parse_status(xml)] == [expected]
