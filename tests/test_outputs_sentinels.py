"""Numbers schedulers print for "not set" or "no limit" in place of a value: Slurm's NO_VAL
(4294967294), INFINITE (4294967295), NO_VAL16 (65534), NO_VAL64 and INFINITE64 and the data
parser's {"set": false} / {"infinite": true}; Torque's ULONG_MAX (18446744073709551615),
PBS's and LSF's INT_MAX (2147483647, LSF's "unlimited"); Grid Engine's 4294967295; Flux's
infinite and far-off times. Each is read as no limit (a limit) or not known (a size or a
count), never as the huge number it is: every model read here is checked to hold no
memory past 1 EiB, no time past a century and no count past 2**31. Each test failed
before: the numbers read as themselves (a node of 16 EiB, a walltime of 584 billion
years, a queue of 4 billion nodes)."""

from __future__ import annotations

import json

import pytest
from outputs_helpers import flux, lsf, pbs, sge, slurm, torque, wrapped
from pydantic import BaseModel

from diamond_jupyter.dialects import lsf_commands as lsf_cmds
from diamond_jupyter.dialects import slurm_rest as rest
from diamond_jupyter.dialects.sge_commands import amount, parse_throttles

NO_VAL16, NO_VAL, INFINITE = 2**16 - 2, 2**32 - 2, 2**32 - 1
INT_MAX, NO_VAL64, ULONG_MAX = 2**31 - 1, 2**64 - 2, 2**64 - 1
MARKS_32 = [NO_VAL, INFINITE, INT_MAX]
MARKS_64 = [NO_VAL64, ULONG_MAX, 2**63 - 1]
EIB_MB, CENTURY_S, MOST_COUNT = 2**40, 100 * 366 * 86400, 2**31


def sane(model: BaseModel) -> BaseModel:
    """`model` unchanged, once checked to hold no absurd number in any field: memory (a
    field named *mem*/_mb) past 1 EiB, a time (*_s) past a century, a count past 2**31."""
    for name, value in model:
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        most = EIB_MB if "mem" in name or name.endswith("_mb") else \
            CENTURY_S if name.endswith("_s") else MOST_COUNT
        assert abs(value) <= most, f"{type(model).__name__}.{name} = {value}"
    return model


# -- Slurm ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mark", MARKS_64)
def test_scontrol_node_memory_mark_is_no_memory(mark: int) -> None:
    [node] = slurm.parse_nodes(f"NodeName=c1 CPUTot=64 RealMemory={mark} AllocMem={mark} "
                               "State=IDLE Partitions=p")
    assert (sane(node).cpus, node.memory_mb, node.memory_allocated) == (64, 0, 0)


def test_scontrol_node_16_bit_marks_are_not_known() -> None:
    """Slurm's node CPUs, sockets, cores and threads are 16-bit: NO_VAL16 says not set."""
    [node] = slurm.parse_nodes(
        f"NodeName=c1 CPUTot={NO_VAL16} CPUAlloc={NO_VAL16} Sockets={NO_VAL16} "
        f"CoresPerSocket={NO_VAL16} ThreadsPerCore={NO_VAL16} RealMemory=1000 "
        f"TmpDisk={NO_VAL} State=IDLE Partitions=p")
    assert (sane(node).cpus, node.cpus_allocated, node.sockets, node.cores_per_socket,
            node.threads_per_core, node.tmp_disk_mb) == (0, 0, None, None, None, None)


@pytest.mark.parametrize("mark", MARKS_32)
def test_scontrol_partition_marks_are_no_limit(mark: int) -> None:
    [part] = slurm.parse_partitions(
        f"PartitionName=p MaxTime={mark} DefaultTime={mark} MaxNodes={mark} "
        f"MaxCPUsPerNode={mark} MaxMemPerNode={mark} DefMemPerCPU={mark} State=UP "
        f"TotalCPUs={mark} TotalNodes=2 PriorityTier={NO_VAL16}")
    assert (sane(part).max_time_s, part.default_time_s, part.max_nodes,
            part.max_cpus_per_node, part.max_mem_per_node_mb, part.def_mem_per_cpu_mb,
            part.total_cpus, part.priority_tier) == (None,) * 6 + (0, None)


@pytest.mark.parametrize("count", [NO_VAL, INFINITE, wrapped(NO_VAL), wrapped(INT_MAX)])
def test_squeue_json_count_marks_are_not_known(count: object) -> None:
    [job] = slurm.parse_status_json(json.dumps({"jobs": [
        {"job_id": 5, "job_state": ["PENDING"], "node_count": count, "cpus": count,
         "tasks": count, "time_limit": count}]}))
    assert (sane(job).nodes, job.cpus, job.walltime_s) == (None, None, None)


@pytest.mark.parametrize("mark", [NO_VAL, INFINITE])
def test_sacct_history_marks_are_no_limit(mark: int) -> None:
    [job] = slurm.parse_history(f"7|p|{mark}|2026-12-06T08:00:00|2026-12-06T08:01:00|"
                                f"2026-12-06T09:00:00|{mark}|{mark}|COMPLETED\n")
    assert (sane(job).walltime_s, job.cpus, job.nodes) == (None, None, None)


@pytest.mark.parametrize("memory", [NO_VAL64, ULONG_MAX, wrapped(NO_VAL64),
                                    wrapped(0, set_=False)])
def test_slurmrestd_node_real_memory_mark_is_no_memory(memory: object) -> None:
    [node] = rest.parse_nodes(json.dumps({"nodes": [
        {"name": "n1", "state": ["IDLE"], "cpus": 64, "real_memory": memory,
         "alloc_memory": memory, "temporary_disk": NO_VAL, "sockets": NO_VAL16,
         "partitions": ["p"]}]}))
    assert (sane(node).memory_mb, node.memory_allocated, node.tmp_disk_mb, node.sockets) == (
        0, 0, None, None)


@pytest.mark.parametrize("mark", [NO_VAL, INFINITE, INT_MAX])
def test_slurmrestd_partition_marks_are_no_limit(mark: int) -> None:
    """v0.0.40's wrapped numbers set with a mark inside, and v0.0.38's plain ones."""
    nested = {"name": "p", "partition": {"state": ["UP"]},
              "maximums": {"time": wrapped(mark), "nodes": wrapped(mark),
                           "cpus_per_node": wrapped(mark)},
              "defaults": {"time": wrapped(mark)}, "nodes": {"total": mark},
              "cpus": {"total": mark}}
    plain = {"name": "q", "max_time_limit": mark, "default_time_limit": mark,
             "maximum_nodes_per_job": mark, "total_cpus": mark, "priority_tier": NO_VAL16}
    for part in rest.parse_partitions(json.dumps({"partitions": [nested, plain]})):
        assert (sane(part).max_time_s, part.default_time_s, part.max_nodes,
                part.total_cpus, part.priority_tier) == (None, None, None, 0, None)


def test_slurmrestd_qos_int_max_is_no_limit() -> None:
    mark = INT_MAX
    qos = rest.parse_qos(json.dumps({"qos": [
        {"name": "normal", "limits": {"max": {"wall_clock": {"per": {"job": wrapped(mark)}},
                                              "jobs": {"per": {"user": wrapped(mark)}}}}}]}),
        "v0.0.41")["normal"]
    assert (sane(qos).max_wall_s, qos.max_submit_jobs_per_user) == (None, None)


# -- PBS and Torque ---------------------------------------------------------------------------

def pbs_jobs(**resources: object) -> str:
    return json.dumps({"pbs_version": "2024.1.0", "Jobs": {"7.s": {
        "job_state": "Q", "queue": "workq", "Resource_List": resources}}})


@pytest.mark.parametrize("mark", [str(ULONG_MAX), str(INT_MAX), "18446744073709551615kb"])
def test_pbs_job_marks_are_no_limit(mark: str) -> None:
    [job] = pbs.parse_status(pbs_jobs(walltime=mark, mem=mark, ncpus=INT_MAX,
                                         nodect=INT_MAX))
    assert (sane(job).walltime_s, job.memory_mb, job.cpus, job.nodes) == (
        None, None, None, None)


def test_torque_xml_walltime_mark_is_no_limit() -> None:
    """Torque prints an unset walltime as ULONG_MAX seconds."""
    [job] = torque.parse_status(
        '<?xml version="1.0"?>\n<Data><Job><Job_Id>5000.t</Job_Id><job_state>Q</job_state>'
        f"<Resource_List><walltime>{ULONG_MAX}</walltime></Resource_List></Job></Data>")
    assert sane(job).walltime_s is None


@pytest.mark.parametrize("mark", [str(ULONG_MAX), str(INT_MAX)])
def test_pbs_queue_marks_are_no_limit(mark: str) -> None:
    queues = json.dumps({"pbs_version": "2024.1.0", "Queue": {"workq": {
        "queue_type": "Execution", "enabled": "True", "started": "True", "max_run": mark,
        "resources_max": {"walltime": mark, "nodect": mark, "ncpus": mark, "mem": mark,
                          "ngpus": mark},
        "resources_default": {"walltime": mark},
        "resources_available": {"ncpus": mark}}}})
    [queue] = pbs.parse_queues(queues)
    assert (sane(queue).max_time_s, queue.default_time_s, queue.max_nodes, queue.max_cpus,
            queue.max_mem_mb, queue.max_gpus, queue.max_running, queue.total_cpus) == (
        None, None, None, None, None, None, None, 0)


def test_pbs_node_marks_are_not_known() -> None:
    nodes = json.dumps({"pbs_version": "2024.1.0", "nodes": {"n1": {
        "state": "free", "resources_available": {"ncpus": INT_MAX, "mem": f"{ULONG_MAX}kb",
                                                 "ngpus": INT_MAX},
        "resources_assigned": {"ncpus": 0, "mem": f"{ULONG_MAX}b"}}}})
    [node] = pbs.parse_nodes(nodes)
    assert (sane(node).cpus, node.memory_mb, node.memory_allocated, node.gpus) == (0, 0, 0, 0)


# -- LSF --------------------------------------------------------------------------------------

def test_lsf_int_max_is_unlimited() -> None:
    """LSF prints INT_MAX (2147483647) where a host's or queue's slots have no limit."""
    hosts = lsf.parse_hosts(json.dumps({"RECORDS": [
        {"HOST_NAME": "h", "STATUS": "ok", "MAX": str(INT_MAX), "NJOBS": str(INT_MAX)}]}),
        json.dumps({"RECORDS": [{"HOST_NAME": "h", "type": "X86_64", "ncpus": "8",
                                 "maxmem": f"{INT_MAX}M"}]}))
    assert [(sane(h).cpus, h.memory_mb) for h in hosts] == [(8, 0)]
    [queue] = lsf.parse_queues(json.dumps({"RECORDS": [
        {"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": str(INT_MAX),
         "RUNLIMIT": f"{INT_MAX}.0 min"}]}))
    assert (sane(queue).max_time_s, queue.total_cpus) == (None, 0)
    [job] = lsf.parse_status(json.dumps({"RECORDS": [
        {"JOBID": "9", "STAT": "PEND", "QUEUE": "normal", "SLOTS": str(INT_MAX)}]}))
    assert sane(job).cpus is None


def test_lsf_per_user_slots_unlimited_is_left_out() -> None:
    bqueues = ("QUEUE: normal\n  -- x\n\nPARAMETERS/STATISTICS\n"
               "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n"
               f" 30    0  Open:Active       -  {INT_MAX}    -    -     0     0     0     0"
               "     0    0\n")
    assert lsf_cmds.parse_jl_u(bqueues) == {}


# -- Grid Engine ------------------------------------------------------------------------------

@pytest.mark.parametrize("mark", [str(INFINITE), str(ULONG_MAX)])
def test_grid_engine_number_marks_are_none(mark: str) -> None:
    """Grid Engine writes INFINITY, but a 32-bit or 64-bit all-ones where a value was set
    as a number of that size."""
    assert amount(mark) is None
    assert parse_throttles(f"job_number: 7\nmaximum concurrency: {mark}\n") == {}
    [job] = sge.parse_status(
        "<?xml version='1.0'?><job_info><queue_info></queue_info><job_info>"
        "<job_list state='pending'><JB_job_number>7</JB_job_number><state>qw</state>"
        f"<slots>{mark}</slots></job_list></job_info></job_info>")
    assert sane(job).cpus is None


# -- Flux -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("duration", "expiration"), [(1e308, 0), (0, 1e300),
                                                      (float(ULONG_MAX), 0)])
def test_flux_far_off_times_are_no_limit(duration: float, expiration: float) -> None:
    [job] = flux.parse_status(json.dumps({"jobs": [
        {"id": 6, "state": "RUN", "t_run": 1764999000.0, "duration": duration,
         "expiration": expiration, "nnodes": ULONG_MAX, "ncores": INFINITE}]}))
    assert (sane(job).walltime_s, job.nodes, job.cpus) == (None, None, None)


def test_flux_queue_marks_are_no_limit() -> None:
    [queue] = flux.parse_queues(
        "QUEUE    EN ST TDEFAULT TLIMIT NNODES NCORES NGPUS\n"
        f"batch*   ✔  ✔  inf      {ULONG_MAX}s 0-{INFINITE}  0-inf  0-inf\n")
    assert (sane(queue).max_time_s, queue.default_time_s, queue.max_nodes) == (
        None, None, None)
