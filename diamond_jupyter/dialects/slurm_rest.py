"""Slurm's REST API (slurmrestd, OpenAPI plugin v0.0.38 as Slurm 22.05 serves it, and the
job shapes of v0.0.39 and later read from their documented schemas): request bodies from a
JobSpec, and models from the JSON replies. Pure: no I/O.

Recorded facts (Slurm 22.05.8, tests/fixtures/outputs/slurmrestd/):
- `POST /slurm/v0.0.38/job/submit` takes {"script", "job": {...}} and IGNORES the script's
  `#SBATCH` lines: every option must be in "job"; `current_working_directory` and
  `environment` (an object) are required. A held job comes back with its `job_id` AND an
  error 2042 ("Job is in held state"), which is no failure.
- `GET /slurm/v0.0.38/jobs` lists every job in the shape of `squeue --json`;
  `GET /job/A,B` is not a list query (one id only).
- Errors come as HTTP 500 with {"errors": [{"error", "error_number", "description"}]};
  a token slurmctld refuses gives 500 "Unspecified error" from slurm_load_jobs; no token
  at all 401 in plain text; an unknown plugin version 404 in plain text.

Documented (not captured) for v0.0.39 and later (Slurm 23.02 on): the "job" object's
`environment` is a list of `NAME=value`, its times and memory sizes are numbers wrapped as
{set, infinite, number}, `nodes` a count as text, `mail_type` and `exclusive` lists of
flags, and GPUs are TRES (`tres_per_node`/`tres_per_task` = `gres/gpu[:TYPE]:N`; there is
no `gres` nor `gpus_per_node`). From v0.0.40 the script is the job's own `script` (v0.0.41
calls the top-level one deprecated). An unknown field is ignored with a warning in the
reply, which the submit passes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..model import (
    OVER_TIME_UNLIMITED,
    UNREPORTED_BF_WINDOW,
    UNREPORTED_MAX_ARRAY,
    UNREPORTED_PRIORITY_WEIGHTS,
    UNREPORTED_SCHEDULER_TYPE,
    UNREPORTED_TRES_MINS_USED,
    Association,
    BadInput,
    JobSpec,
    JobStatus,
    Node,
    Partition,
    QosLimits,
    Reservation,
    SiteError,
    SiteSnapshot,
    SlurmPriority,
)
from .outputs_common import (
    clean,
    from_epoch,
    gpu_count,
    gpu_types,
    json_error,
    known_count,
    limit_count,
    limit_seconds,
    load_json,
    memory_mb,
    other_gres,
    to_int,
    unread,
)
from .scripts_common import (
    any_of_dependencies,
    component_settings_dropped,
    dependencies_for,
    one_shape,
    output_mode_of,
    without_zero_gpus,
)
from .slurm_commands import (
    NO_VAL64,
    SlurmCommands,
    job_dependency,
    job_licenses,
    over_time_s,
    partition_nodes,
)
from .slurm_script import dependency_value

HELD_ERROR = 2042  # "Job is in held state, pending scheduler release": not a failure
MAIL = {"begin": "BEGIN", "end": "END", "fail": "FAIL"}


NO_VAL16 = 0xFFFE  # Slurm's "not set" of a 16-bit number (a partition taking the global one)
INFINITE16 = 0xFFFF  # Slurm's "no limit" of a 16-bit number


def _minutes(seconds: int) -> int:
    return max(1, -(-seconds // 60))


OLDEST_NESTED = 39  # the first plugin version whose "job" object takes v0.0.39's shapes
SCRIPT_IN_JOB = 40  # from this version on, the script travels as the job's own `script`


def api_number(api_version: str) -> int:
    """`v0.0.41` -> 41 (the transport's `api_version`, checked `v0.0.N` when loaded)."""
    m = re.fullmatch(r"v?0\.0\.([0-9]+)", api_version.strip())
    if m is None:
        raise BadInput(f"slurmrestd api_version {api_version!r}: expected v0.0.N, e.g. "
                       "v0.0.38 or v0.0.41")
    return int(m.group(1))


def _wrapped(n: int) -> dict[str, Any]:
    """A number as v0.0.39 and later take it (`uint32_no_val`, `uint64_no_val`)."""
    return {"set": True, "infinite": False, "number": n}


def job_description(spec: JobSpec, *, hold: bool = False, api_version: str = "v0.0.38"
                    ) -> tuple[dict[str, Any], list[str]]:
    """The "job" object for `spec` (paths already absolute) in the shape `api_version`
    takes, and what it cannot carry. Everything the Slurm script dialect would put in
    #SBATCH lines goes here."""
    version = api_number(api_version)
    # a job of several shapes is sent as one here: one partition, account and QOS
    warnings = component_settings_dropped(spec, lambda _: "one shape over REST here")
    # a job of several shapes: one here (v0.0.38's "jobs" list of components is not used)
    spec = one_shape(without_zero_gpus(spec), "slurmrestd", warnings)
    r, c, env = spec.resources, spec.constraints, spec.environment
    if not spec.working_directory:
        raise BadInput("slurmrestd: the job needs a working directory")
    job: dict[str, Any] = {
        "current_working_directory": spec.working_directory,
        # the job's environment, as sbatch's --export=NONE plus the spec's variables: the
        # REST server's own environment is not the user's
        "environment": {"PATH": "/usr/local/bin:/usr/bin:/bin", **env.variables},
    }
    if env.export_all:
        warnings.append("approximated: export of the whole environment (over REST only the "
                        "listed variables and PATH reach the job)")
    opt = {
        "name": spec.name, "partition": spec.queue, "account": spec.account, "qos": spec.qos,
        "reservation": spec.reservation, "comment": spec.comment,
        "standard_output": spec.stdout, "mail_user": spec.mail_user,
        "nodes": r.nodes, "tasks": r.tasks, "tasks_per_node": r.tasks_per_node,
        "cpus_per_task": r.cpus_per_task, "gpus_per_node": r.gpus_per_node,
        "gpus_per_task": r.gpus_per_task, "memory_per_node": r.memory_mb,
        "memory_per_cpu": r.memory_per_cpu_mb, "distribution": r.distribution,
        "cpu_binding": r.cpu_bind, "gpu_binding": r.gpu_bind, "requeue": spec.requeue,
    }
    job.update({k: v for k, v in opt.items() if v is not None})
    if spec.stderr and not spec.join_output:
        job["standard_error"] = spec.stderr
    elif spec.stdout:
        job["standard_error"] = spec.stdout  # joined: both streams to one file
    if (spec.stdout or spec.stderr) and output_mode_of(spec) == "append":
        warnings.append("approximated: output files appended to in the source; this request "
                        "does not say so: the site's JobFileAppend decides (truncate unless "
                        "set)")
    if version >= OLDEST_NESTED:
        _gpus_as_tres(job, r.gpu_type, r.gpus_per_node, r.gpus_per_task, r.gpu_bind)
    elif r.gpu_type and (r.gpus_per_node or r.gpus_per_task):
        job.pop("gpus_per_node", None)
        job.pop("gpus_per_task", None)
        job["gres"] = f"gpu:{r.gpu_type}:{r.gpus_per_node or r.gpus_per_task}"
        if r.gpus_per_task and not r.gpus_per_node:
            warnings.append(f"approximated: {r.gpus_per_task} GPU(s) of type {r.gpu_type} per "
                            "task as per node")
    if r.walltime_s is not None:
        job["time_limit"] = _minutes(r.walltime_s)
    feats = list(c.features) + ([f"arch={c.architecture}"] if c.architecture else [])
    if feats:
        job["constraints"] = "&".join(feats)
    if c.exclusive:
        job["exclusive"] = "exclusive"
    if spec.array:
        job["array"] = spec.array.expression
    if deps := dependencies_for(spec, "slurm", warnings):  # as #SBATCH --dependency takes
        job["dependency"] = dependency_value(deps, warnings, any_of_dependencies(spec))
    mail = [MAIL[e] for e in spec.mail_events if e in MAIL]
    if mail:
        job["mail_type"] = ",".join(mail)
    if hold or spec.hold:
        job["hold"] = True
    if env.modules or env.container_image:
        pass  # they are lines of the script body (rendered by the Slurm script dialect)
    if spec.begin:  # the API takes a Unix time: a relative or yearless one needs the clock
        warnings.append(f"dropped: begin time {spec.begin} (the REST request takes no "
                        "--begin here; submit by sbatch to keep it)")
    for d in spec.unknown:
        if d.dialect == "slurm":
            warnings.append(f"dropped: {d.raw.strip()} (the REST API ignores #SBATCH lines)")
    return (_nested_job(job) if version >= OLDEST_NESTED else job), warnings


def _gpus_as_tres(job: dict[str, Any], kind: str | None, per_node: int | None,
                  per_task: int | None, bind: str | None) -> None:
    """v0.0.39 on: GPUs asked as TRES, as sbatch records `--gres`/`--gpus-per-*` (a typed
    count per task is carried as such, not approximated per node as in v0.0.38)."""
    for key in ("gpus_per_node", "gpus_per_task", "gpu_binding"):
        job.pop(key, None)
    gpu = f"gres/gpu:{kind}" if kind else "gres/gpu"
    if per_node:
        job["tres_per_node"] = f"{gpu}:{per_node}"
    if per_task:
        job["tres_per_task"] = f"{gpu}:{per_task}"
    if bind:
        job["tres_bind"] = f"gres/gpu:{bind}"


def _nested_job(job: dict[str, Any]) -> dict[str, Any]:
    """A v0.0.38 "job" object in the shapes of v0.0.39 and later."""
    out = dict(job)
    out["environment"] = [f"{k}={v}" for k, v in job["environment"].items()]
    for key in ("time_limit", "memory_per_node", "memory_per_cpu"):
        if key in out:
            out[key] = _wrapped(out[key])
    if "nodes" in out:
        out["nodes"] = str(out["nodes"])
    if "mail_type" in out:
        out["mail_type"] = out["mail_type"].split(",")
    if "exclusive" in out:
        out["exclusive"] = ["true"]  # whole nodes (v0.0.38's "exclusive")
    return out


def submit_body(script: str, job: dict[str, Any], api_version: str = "v0.0.38"
                ) -> dict[str, Any]:
    """The `job/submit` request: the script beside the job up to v0.0.39, in it after."""
    if api_number(api_version) >= SCRIPT_IN_JOB:
        return {"job": {**job, "script": script}}
    return {"script": script, "job": job}


def _load(what: str, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:  # a reply cut short, an HTML error page ...
        why = json_error(exc).removeprefix("invalid JSON ")
        raise SiteError(f"slurmrestd: {what}: not JSON {why}: {text.strip()[:200]!r}") \
            from None
    except (ValueError, RecursionError):  # (nested past reading: no answer either)
        raise SiteError(f"slurmrestd: {what}: not JSON: {text.strip()[:200]!r}") from None
    if not isinstance(data, dict):
        raise SiteError(f"slurmrestd: {what}: expected an object, got {type(data).__name__}")
    return data


def errors_of(data: dict[str, Any], *, ignore: tuple[int, ...] = ()) -> list[str]:
    """The reply's errors as one-line texts (those numbered in `ignore` left out)."""
    out = []
    for e in data.get("errors") or []:
        if not isinstance(e, dict):
            continue
        code = e.get("error_number", e.get("error_code"))
        if code in ignore:
            continue
        text = clean(e.get("description")) or clean(e.get("error")) or "error"
        if clean(e.get("error")) and clean(e.get("description")) \
                and clean(e.get("error")) != clean(e.get("description")):
            text = f"{e['error']}: {e['description']}"
        out.append(f"{text} ({code})" if code is not None else text)
    return out


def warnings_of(data: dict[str, Any]) -> list[str]:
    """The reply's warnings (v0.0.39 on: {description, source}) as one-line texts, e.g. a
    job field this slurmrestd does not know and ignored."""
    out = []
    for w in data.get("warnings") or []:
        if isinstance(w, dict) and (text := clean(w.get("description"))):
            source = clean(w.get("source"))
            out.append(f"slurmrestd: {text}" + (f" (at {source})" if source else ""))
    return out


def parse_submit(text: str) -> tuple[str, list[str]]:
    """(job id, notes) of a submit reply; SiteError when it holds no job id. The notes: the
    job_submit plugin's message and slurmrestd's warnings (what it ignored of the job)."""
    data = _load("job/submit", text)
    errors = errors_of(data, ignore=(HELD_ERROR,))
    jid = data.get("job_id")
    if jid is None:  # v0.0.41 on also answer {"result": {"job_id", ...}}
        jid = _at(data, "result", "job_id")
    if jid is None or errors:
        raise SiteError("slurmrestd refused the job: " + ("; ".join(errors) or "no job id"))
    if isinstance(jid, bool) or not (isinstance(jid, int) or re.fullmatch(r"[0-9]+", str(jid))):
        raise SiteError(f"slurmrestd answered the submit with job_id {str(jid)[:80]!r}, "
                        "which is not a job number")
    msg = clean(data.get("job_submit_user_msg")) or clean(
        _at(data, "result", "job_submit_user_msg"))
    return str(jid), ([msg] if msg else []) + warnings_of(data)


def carries_errors(text: str) -> bool:
    """Whether a reply is an object with errors (not worth keeping for the next read)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and bool(errors_of(data))


def _refuse_errors(what: str, data: dict[str, Any]) -> None:
    """SiteError for a reply that carries errors: its list (of jobs, nodes, partitions) is
    not what the cluster has (slurmctld not answering comes back as errors beside an empty
    list, which read as a cluster of no nodes)."""
    if errors := errors_of(data):
        raise SiteError(f"slurmrestd: {what}: " + "; ".join(errors))


def _reply(what: str, text: str) -> dict[str, Any]:
    """The reply to `GET what`, an object carrying no errors (else SiteError)."""
    data = _load(what, text)
    _refuse_errors(what, data)
    return data


def _named_entries(what: str, entry: str, text: str, skipped: list[str] | None,
                   name_of: Callable[[dict[str, Any]], Any] = lambda e: e.get("name")
                   ) -> Iterator[dict[str, Any]]:
    """The objects listed under `what` in the reply to `GET what` that `name_of` finds a
    name in; each other `entry` is said in `skipped` and left out (else SiteError)."""
    for i, item in enumerate(_reply(what, text).get(what) or [], 1):
        if isinstance(item, dict) and name_of(item):
            yield item
        else:
            unread(skipped, "slurmrestd", f"{what} {entry} {i}", "no name", str(item)[:200])


def parse_jobs(text: str, commands: SlurmCommands | None = None,
               skipped: list[str] | None = None) -> list[JobStatus]:
    """`GET jobs`: the same shape as `squeue --json`; `skipped`: where to say a job
    without a job_id, left out (else SiteError)."""
    _reply("jobs", text)
    return (commands or SlurmCommands()).parse_status_json(text, skipped)


def parse_nodes(text: str, skipped: list[str] | None = None) -> list[Node]:
    """`GET nodes`; `skipped`: where to say a node without a name, left out (else
    SiteError)."""
    out = []
    for n in _named_entries("nodes", "node", text, skipped):
        gpus, kind = gpu_count(n.get("gres"))
        feats = _names(n.get("active_features")) or _names(n.get("features"))
        # v0.0.38: "state" one word, its flags (DRAIN, RESERVED, MAINTENANCE) apart;
        # later versions: "state" a list of them all
        words = [str(w) for w in (n.get("state") if isinstance(n.get("state"), list)
                                  else [n.get("state") or "unknown"])]
        words += [str(w) for w in n.get("state_flags") or [] if isinstance(w, str)]
        # the CPUs and memory left to jobs by core and memory specialisation
        cpus = known_count(n.get("effective_cpus"), bits=16) \
            or known_count(n.get("cpus"), bits=16) or 0
        spec = known_count(n.get("specialized_cores"), bits=16)
        if n.get("effective_cpus") is None and spec:
            cpus = max(0, cpus - spec * (known_count(n.get("threads"), bits=16) or 1))
        memory = (known_count(n.get("real_memory")) or 0) \
            - (known_count(n.get("specialized_memory")) or 0)
        out.append(Node(
            name=n["name"], state="+".join(words).lower(),
            cpus=cpus, cpus_allocated=known_count(n.get("alloc_cpus"), bits=16) or 0,
            memory_mb=max(0, memory), gpus=gpus,
            gpus_allocated=gpu_count(n.get("gres_used"))[0], gpu_type=kind,
            features=feats,
            partitions=_names(n.get("partitions")),
            architecture=clean(n.get("architecture")), gres=other_gres(n.get("gres")),
            memory_allocated=known_count(n.get("alloc_memory")) or 0,
            threads_per_core=known_count(n.get("threads"), bits=16),
            sockets=known_count(n.get("sockets"), bits=16), gpu_types=gpu_types(n.get("gres")),
            cores_per_socket=known_count(n.get("cores"), bits=16),
            tmp_disk_mb=known_count(n.get("temporary_disk")),
            # who set it and when are fields of their own here (`reason_set_by_user`)
            reason=clean(n["reason"]) if isinstance(n.get("reason"), str) else None,
            weight=known_count(n.get("weight")),
            # scontrol's ResumeAfterTime: epoch seconds, plain or wrapped (0, a mark or
            # {set: false}: none); absent from 22.05's v0.0.38
            resume_after=from_epoch(n.get("resume_after")),
        ))
    return out


def _names(value: Any) -> list[str]:
    """A node's features or partitions: v0.0.38's comma-separated text (`"a100,ib"`), a
    list from v0.0.40 on (`["a100", "ib"]`)."""
    items = value if isinstance(value, list) else (clean(value) or "").split(",")
    return [x for x in (str(i).strip() for i in items if isinstance(i, str)) if x]


def _seconds(value: Any) -> int | None:
    """A time (epoch seconds, or seconds a job ran) plain or wrapped; None where not set (a
    negative number, NO_VAL and up, {set: false})."""
    n = known_count(value, bits=64)
    return None if n is None or n >= 0xFFFFFFFE else n


def parse_partitions(text: str, skipped: list[str] | None = None) -> list[Partition]:
    """`GET partitions`; `skipped`: where to say a partition without a name, left out (else
    SiteError)."""
    out = []
    for p in _named_entries("partitions", "partition", text, skipped):
        if _nested(p):  # v0.0.39 on: the same facts grouped under objects
            out.append(_nested_partition(p))
            continue
        max_time_s = limit_seconds(p.get("max_time_limit"), 60)
        default_time_s = limit_seconds(p.get("default_time_limit"), 60)
        accounts = clean(p.get("allowed_accounts"))
        modes = p.get("preemption_mode")
        mode = ",".join(str(m) for m in modes) if isinstance(modes, list) else clean(modes)
        out.append(Partition(
            name=p["name"], default="default" in (p.get("flags") or []),
            state=str(p.get("state") or "UP").upper(),
            max_time_s=max_time_s, default_time_s=default_time_s or None,
            max_nodes=limit_count(p.get("maximum_nodes_per_job")),
            # v0.0.38 spells it with blanks
            min_nodes=limit_count(p.get("minimum_nodes_per_job", p.get("min nodes per job")))
            or None,
            max_cpus_per_node=limit_count(p.get("maximum_cpus_per_node")),
            nodes=partition_nodes(p.get("nodes")),
            total_nodes=known_count(p.get("total_nodes")) or 0,
            total_cpus=known_count(p.get("total_cpus")) or 0,
            allowed_accounts=None if accounts in (None, "ALL") else accounts.split(","),
            denied_accounts=_listed(p.get("denied_accounts")),
            allowed_qos=_listed(p.get("allowed_qos")),
            denied_qos=_listed(p.get("denied_qos")),
            allowed_groups=_listed(p.get("allowed_groups")),
            def_mem_per_cpu_mb=limit_count(p.get("default_memory_per_cpu")),
            def_mem_per_node_mb=limit_count(p.get("default_memory_per_node")),
            max_mem_per_cpu_mb=limit_count(p.get("maximum_memory_per_cpu")),
            max_mem_per_node_mb=limit_count(p.get("maximum_memory_per_node")),
            preempt_mode="OFF" if (mode or "").lower() in ("", "disabled", "off")
            else mode.upper() if mode else None,
            priority_tier=known_count(p.get("priority_tier"), bits=16),
            priority_job_factor=known_count(p.get("priority_job_factor"), bits=16),
            hidden="hidden" in (flags := [str(f).lower() for f in p.get("flags") or []]),
            root_only="root_only" in flags, req_resv="reservation_required" in flags,
        ))
    return out


def _nested(p: dict[str, Any]) -> bool:
    """Whether a partition is in the shape of v0.0.39 and later (`partition: {state}`,
    `nodes: {configured}`, `maximums`, `defaults`), not v0.0.38's flat one."""
    return any(isinstance(p.get(k), dict) for k in ("partition", "nodes", "maximums"))


def _at(p: dict[str, Any], *path: str) -> Any:
    """The value at `path` in nested objects; None where any step is missing."""
    for key in path:
        p = p.get(key) if isinstance(p, dict) else None
    return p


def _over_time(value: Any) -> float | None:
    """`maximums.over_time_limit` ({set, infinite, number} minutes, a 16-bit number) as
    `Partition.over_time_s`: OVER_TIME_UNLIMITED where infinite (or INFINITE16, 65535),
    None where not set (NO_VAL16: the site's, which slurmrestd does not serve)."""
    if isinstance(value, dict):
        if value.get("infinite"):
            return OVER_TIME_UNLIMITED
        value = value.get("number") if value.get("set") else None
    if value == INFINITE16:
        return OVER_TIME_UNLIMITED
    return over_time_s(str(value)) if isinstance(value, int) and value < NO_VAL16 else None


def _nested_partition(p: dict[str, Any]) -> Partition:
    """A partition of v0.0.39 and later: its state is a list (`["DRAIN"]`: no job starts
    in it), its nodes under `nodes.configured`, its limits wrapped numbers (minutes for
    times, MB for memory) under `maximums`, `minimums` and `defaults`."""
    states = _at(p, "partition", "state")
    words = [str(w).upper() for w in (states if isinstance(states, list) else [states])
             if clean(w)]
    # UP only when every word says so: DOWN, DRAIN or INACTIVE (with UP or alone) stop it
    state = next((w for w in words if w != "UP"), "UP") if words else "UP"
    max_time_s = limit_seconds(_at(p, "maximums", "time"), 60)
    default_time_s = limit_seconds(_at(p, "defaults", "time"), 60)
    flags = [str(f).lower() for f in (p.get("flags") if isinstance(p.get("flags"), list)
                                      else _at(p, "partition", "flags") or [])]
    force = [str(f).lower() for f in _at(p, "maximums", "oversubscribe", "flags") or []]
    jobs = known_count(_at(p, "maximums", "oversubscribe", "jobs"), bits=16)
    return Partition(
        name=p["name"], default="default" in flags, state=state,
        max_time_s=max_time_s, default_time_s=default_time_s or None,
        max_nodes=limit_count(_at(p, "maximums", "nodes")),
        min_nodes=limit_count(_at(p, "minimums", "nodes")) or None,
        max_cpus_per_node=limit_count(_at(p, "maximums", "cpus_per_node")),
        max_cpus_per_socket=limit_count(_at(p, "maximums", "cpus_per_socket")),
        nodes=partition_nodes(_at(p, "nodes", "configured")),
        total_nodes=known_count(_at(p, "nodes", "total")) or 0,
        total_cpus=known_count(_at(p, "cpus", "total")) or 0,
        allowed_accounts=_listed(_at(p, "accounts", "allowed")),
        denied_accounts=_listed(_at(p, "accounts", "deny")),
        allowed_qos=_listed(_at(p, "qos", "allowed")),
        denied_qos=_listed(_at(p, "qos", "deny")),
        allowed_groups=_listed(_at(p, "groups", "allowed")),
        def_mem_per_cpu_mb=limit_count(_at(p, "defaults", "partition_memory_per_cpu")) or None,
        def_mem_per_node_mb=limit_count(_at(p, "defaults", "partition_memory_per_node")) or None,
        max_mem_per_cpu_mb=limit_count(_at(p, "maximums", "partition_memory_per_cpu")) or None,
        max_mem_per_node_mb=limit_count(_at(p, "maximums", "partition_memory_per_node")) or None,
        # OverSubscribe as scontrol prints it (`FORCE:4`, `YES:2`, `EXCLUSIVE`, `NO`)
        oversubscribe=f"FORCE:{jobs or 1}" if "force" in force else "EXCLUSIVE"
        if "exclusive" in force else f"YES:{jobs}" if jobs and jobs > 1 else
        "NO" if jobs == 1 else None,
        priority_tier=known_count(_at(p, "priority", "tier"), bits=16),
        priority_job_factor=known_count(_at(p, "priority", "job_factor"), bits=16),
        over_time_s=_over_time(_at(p, "maximums", "over_time_limit")),
        resume_timeout_s=_own_timeout(p, "resume"),
        suspend_timeout_s=_own_timeout(p, "suspend"),
        hidden="hidden" in flags, root_only="root_only" in flags,
        req_resv="reservation_required" in flags or "req_resv" in flags,
        qos=clean(_at(p, "qos", "assigned")),
    )


def _listed(value: Any) -> list[str] | None:
    """A partition's comma-separated names; "" (slurmrestd's nothing) and ALL are None."""
    s = clean(value)
    if s is None or s.upper() == "ALL":
        return None
    return [x for x in s.split(",") if x] or None


def parse_reservations(text: str, skipped: list[str] | None = None) -> list[Reservation]:
    """`GET reservations` (what `scontrol show reservation` lists): each one's window,
    nodes, users, accounts, groups and flags. v0.0.38 gives its times as plain epoch
    seconds, later versions wrapped as {set, infinite, number}; `users`, `accounts` and
    `groups` are comma-separated text (a `-name` denies), `flags` a list. No state is
    given: a reservation's start says whether it has begun. `skipped`: where to say one
    without a name, left out (else SiteError)."""
    out = []
    for r in _named_entries("reservations", "reservation", text, skipped,
                            lambda r: clean(r.get("name"))):
        flags = r.get("flags") if isinstance(r.get("flags"), list) \
            else (clean(r.get("flags")) or "").split(",")
        out.append(Reservation(
            name=str(r["name"]), start=from_epoch(r.get("start_time")),
            end=from_epoch(r.get("end_time")),
            nodes=[x for x in [clean(r.get("node_list"))] if x],
            users=_listed_names(r.get("users")), accounts=_listed_names(r.get("accounts")),
            groups=_listed_names(r.get("groups")),
            flags=[str(f).strip().upper() for f in flags if isinstance(f, str) and f.strip()]))
    return out


def _listed_names(value: Any) -> list[str] | None:
    """A reservation's users, accounts or groups: comma-separated text, "" for none."""
    return [x for x in (clean(value) or "").split(",") if x.strip()] or None


RESERVATIONS_UNREAD = "reservations_unread"  # in the outputs: why GET reservations failed
QOS_UNREAD = "qos_unread"  # in the outputs: why the QOS were not read from slurmdb
READ_AT = "read_at"  # in the outputs: this machine's clock (epoch s) when `queue` was read
# the outputs also name the transport's user (`user`), whom a reservation's Users= and
# MAGNETIC flag are checked for

# QOS flags as the slurmdb API names them -> as `sacctmgr show qos` prints them (what the
# checks read)
_QOS_FLAGS = {"DENY_LIMIT": "DenyOnLimit", "OVERRIDE_PARTITION_QOS": "OverPartQOS",
              "PARTITION_MINIMUM_NODE": "PartitionMinNodes",
              "PARTITION_MAXIMUM_NODE": "PartitionMaxNodes",
              "PARTITION_TIME_LIMIT": "PartitionTimeLimit",
              "REQUIRED_RESERVATION": "RequiresReservation", "NO_RESERVE": "NoReserve",
              "NO_DECAY": "NoDecay", "USAGE_FACTOR_SAFE": "UsageFactorSafe",
              "ENFORCE_USAGE_THRESHOLD": "EnforceUsageThreshold"}


def _tres_list(value: Any) -> dict[str, int]:
    """A slurmdb TRES list ([{type, name, count}], the `type/name=count` of sacctmgr's
    text) -> counts by name (`cpu`, `mem` in MB, `node`, `gres/gpu`); an entry without a
    type or a count (or a count of none: null, INFINITE, NO_VAL) is left out: not
    checked."""
    out: dict[str, int] = {}
    for t in value if isinstance(value, list) else []:
        if not isinstance(t, dict) or not (kind := clean(t.get("type"))):
            continue
        count = _tres_count(t.get("count"))
        if count is None:
            continue
        name = f"{kind}/{n}" if (n := clean(t.get("name"))) else kind
        out[name.lower() if kind.lower() != "gres" else name] = count
    return out


def _tres_count(value: Any) -> int | None:
    """A TRES count (slurmdb keeps 64 bits: TRES-minutes pass 2**32 at large sites), plain
    or wrapped; None for none (a negative number, the 64-bit marks)."""
    return limit_count(value, bits=64)


def _wall_s(value: Any) -> int | None:
    """A QOS's MaxWall (slurmdb keeps minutes) in seconds; None: no limit or not said."""
    return limit_seconds(value, 60)


def _qos_rows(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The QOS of a `GET /slurmdb/VERSION/qos` reply as (name, its row), leaving out rows
    without a usable name (none, or one with a blank). SiteError for a reply of errors or
    without a `qos` list."""
    data = _reply("qos", text)
    if not isinstance(data.get("qos"), list):
        raise SiteError("slurmrestd: qos: the reply has no 'qos' list")
    for q in data["qos"]:
        name = clean(q.get("name")) if isinstance(q, dict) else None
        if name and " " not in name:
            yield name, q


def parse_qos(text: str, api_version: str = "v0.0.38") -> dict[str, QosLimits]:
    """`GET /slurmdb/VERSION/qos` (as `sacctmgr show qos`): each QOS's limits a job meets,
    by name. The same paths in every version (`api_version` changes only how numbers are
    wrapped): MaxJobsPerUser at `max.jobs.active_jobs.per.user`, MaxSubmitJobsPerUser at
    `max.jobs.per.user`, GrpJobs at `max.active_jobs.count`, GrpTRES at `max.tres.total`
    (the dbv0.0.38 plugin of 22.05.8 writes these four though its spec declares only the
    first). MaxTRESMins at `max.tres.minutes.per.job`, GrpTRESRunMins at
    `max.tres.minutes.per.qos` (every version's parser). GrpSubmitJobs at `max.jobs.count`
    and GrpTRESMins at `max.tres.minutes.total`: the published schema of v0.0.43 has them,
    the parsers of v0.0.38 to v0.0.41 write neither (then not known). What a QOS has used
    of its GrpTRESMins is slurmctld's and no version serves it: `tres_mins_used_known` is
    False where it has one (the job is then checked against the whole limit, said).
    SiteError for a reply of errors (no slurmdbd, the database not answering) or without a
    `qos` list: then no QOS is known, and none of their limits is checked (never a limit
    read from a reply that is not one)."""
    out: dict[str, QosLimits] = {}
    for name, q in _qos_rows(text):
        most = _at(q, "limits", "max") or {}
        flags = [f for f in q.get("flags") if isinstance(f, str)] if isinstance(
            q.get("flags"), list) else []
        out[name] = QosLimits(
            name=name,
            max_tres_per_job=_tres_list(_at(most, "tres", "per", "job")),
            max_tres_per_node=_tres_list(_at(most, "tres", "per", "node")),
            max_tres_per_user=_tres_list(_at(most, "tres", "per", "user")),
            grp_tres=_tres_list(_at(most, "tres", "total")),
            max_wall_s=_wall_s(_at(most, "wall_clock", "per", "job")),
            grp_jobs=limit_count(_at(most, "active_jobs", "count")),
            max_jobs_per_user=limit_count(_at(most, "jobs", "active_jobs", "per", "user")),
            max_submit_jobs_per_user=limit_count(_at(most, "jobs", "per", "user")),
            grp_submit_jobs=limit_count(_at(most, "jobs", "count")),
            min_tres_per_job=_tres_list(_at(q, "limits", "min", "tres", "per", "job")),
            max_tres_mins_per_job=_tres_list(_at(most, "tres", "minutes", "per", "job")),
            grp_tres_mins=(grp_mins := _tres_list(_at(most, "tres", "minutes", "total"))),
            grp_tres_run_mins=_tres_list(_at(most, "tres", "minutes", "per", "qos")),
            tres_mins_used_known=not grp_mins,
            flags=[_QOS_FLAGS.get(f.upper(), f) for f in flags])
    return out


LICENSES = "licenses"  # in the outputs: the `GET licenses` reply
LICENSES_UNREAD = "licenses_unread"  # in the outputs: why the licenses were not read
# the first plugin version asked to change a queued job's dependency (`POST job/ID`)
DEPENDENCY_UPDATE_SINCE = 38
LICENSES_SINCE = 38  # the first plugin version with `GET licenses` (v0.0.36, v0.0.37: none)


def parse_licenses(text: str) -> tuple[dict[str, int], dict[str, int] | None]:
    """`GET /slurm/VERSION/licenses` (as `scontrol show licenses`): the licenses the site
    defines, name -> how many in all, and how many are free now (`Free`, else `Total` less
    `Used` and `Reserved`; None when an entry says neither `Free` nor `Used`). An entry
    without a name or a total is left out, as the CLI's reading does. SiteError for a reply
    of errors or without a `licenses` list: then they are not known."""
    data = _reply("licenses", text)
    if not isinstance(data.get("licenses"), list):
        raise SiteError("slurmrestd: licenses: the reply has no 'licenses' list")
    total: dict[str, int] = {}
    free: dict[str, int] | None = {}
    for lic in data["licenses"]:
        name = clean(lic.get("LicenseName")) if isinstance(lic, dict) else None
        if not name or (count := limit_count(lic.get("Total"))) is None:
            continue
        total[name] = count
        if free is None:
            continue
        if (now := limit_count(lic.get("Free"))) is not None:
            free[name] = now
        elif (used := limit_count(lic.get("Used"))) is not None:
            free[name] = max(0, count - used - (limit_count(lic.get("Reserved")) or 0))
        else:
            free = None
    return total, free


ASSOCIATIONS = "associations"  # in the outputs: a JSON list of slurmdb association replies
ASSOCIATIONS_UNREAD = "associations_unread"  # in the outputs: why they were not read


def parse_associations(text: str, user: str | None = None) -> list[Association]:
    """One `GET /slurmdb/VERSION/associations?...` reply (as `sacctmgr show assoc`): a
    user's associations (level "user") and the accounts' own (no user: level "account").
    Paths as the dbv0.0.38 plugin of 22.05.8 writes them (its parse table; its spec
    declares fewer) and the data parser names them alike: `default.qos`, `qos` (a list; the
    spec says `QOS`), `parent_account`, GrpJobs at `max.jobs.per.count`, GrpSubmitJobs at
    `max.jobs.per.submitted`, GrpTRES at `max.tres.total`, MaxTRES at `max.tres.per.job`,
    MaxJobs at `max.jobs.active`, MaxSubmitJobs at `max.jobs.total`, MaxTRESMins at
    `max.tres.minutes.per.job`, GrpTRESMins at `max.tres.group.minutes`, GrpTRESRunMins at
    `max.tres.group.active` (what was used of them is slurmctld's: `parse_shares`, else
    not known). `user`: another
    user's associations are left out (dbv0.0.36 and dbv0.0.37 take no `user=` filter and
    answer every association). SiteError for a reply of errors or without an
    `associations` list."""
    data = _reply("associations", text)
    if not isinstance(data.get("associations"), list):
        raise SiteError("slurmrestd: associations: the reply has no 'associations' list")
    out: list[Association] = []
    for a in data["associations"]:
        if not isinstance(a, dict) or not (account := clean(a.get("account"))):
            continue
        qos = a.get("qos", a.get("QOS"))
        names = [str(q) for q in qos if isinstance(q, str) and q] if isinstance(
            qos, list) else []
        most = a.get("max") if isinstance(a.get("max"), dict) else {}
        owner = clean(a.get("user"))
        if user is not None and owner is not None and owner != user:
            continue
        user_level = owner is not None
        out.append(Association(
            account=account, partition=clean(a.get("partition")),
            default_qos=clean(_at(a, "default", "qos")), qos=names or None,
            level="user" if user_level else "account",
            # (an account's parent; a user's association has none, as sacctmgr shows)
            parent=None if user_level else clean(a.get("parent_account")),
            grp_tres=_tres_list(_at(most, "tres", "total")),
            grp_jobs=limit_count(_at(most, "jobs", "per", "count")),
            grp_submit_jobs=limit_count(_at(most, "jobs", "per", "submitted")),
            max_jobs=limit_count(_at(most, "jobs", "active")),
            max_submit_jobs=limit_count(_at(most, "jobs", "total")),
            max_tres_per_job=_tres_list(_at(most, "tres", "per", "job")),
            max_tres_mins_per_job=_tres_list(_at(most, "tres", "minutes", "per", "job")),
            grp_tres_mins=(grp_mins := _tres_list(_at(most, "tres", "group", "minutes"))),
            grp_tres_run_mins=_tres_list(_at(most, "tres", "group", "active")),
            tres_mins_used_known=not grp_mins))
    return out


SHARES = "shares"  # in the outputs: the `GET shares?users=U` reply
SHARES_UNREAD = "shares_unread"  # in the outputs: why the shares were not read
SHARES_SINCE = 40  # the first plugin version with `GET shares` (Slurm 23.11)


def _shares_count(value: Any) -> float | None:
    """One TRES's number in a shares reply: plain (`usage`'s long double) or wrapped
    ({set, infinite, number}: `run_seconds`, `group_minutes`); None where not set."""
    if isinstance(value, dict):
        if value.get("infinite") or not value.get("set", True):
            return None
        value = value.get("number")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if value < 0 or value >= NO_VAL64 else float(value)


def _shares_minutes(value: Any) -> dict[str, int]:
    """A shares TRES list ([{name, value}]) of TRES-seconds -> TRES-minutes by name, as
    sshare prints them (its GrpTRESRaw and TRESRunMins divide by 60)."""
    out: dict[str, int] = {}
    for t in value if isinstance(value, list) else []:
        name = clean(t.get("name")) if isinstance(t, dict) else None
        if name and (n := _shares_count(t.get("value"))) is not None:
            out[name] = int(n // 60)
    return out


def parse_shares(text: str) -> dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]]:
    """`GET /slurm/VERSION/shares` (as `sshare`, v0.0.40 on): {(account, user or ''):
    (TRES-minutes used of its GrpTRESMins, its running jobs' TRES-minutes still to run)}.
    Each entry of `shares.shares` is a user's association (`type` USER: `name` the user,
    `parent` the account) or an account's (`name` the account); `tres.usage` is slurmctld's
    usage_tres_raw and `tres.run_seconds` its tres_run_secs, both TRES-seconds. SiteError
    for a reply of errors or without that list."""
    data = _reply("shares", text)
    rows = _at(data, "shares", "shares")
    if not isinstance(rows, list):
        raise SiteError("slurmrestd: shares: the reply has no 'shares.shares' list")
    out: dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]] = {}
    for row in rows:
        if not isinstance(row, dict) or not (name := clean(row.get("name"))):
            continue
        kinds = row.get("type") if isinstance(row.get("type"), list) else [row.get("type")]
        is_user = any(isinstance(k, str) and k.upper() == "USER" for k in kinds)
        account = clean(row.get("parent")) if is_user else name
        if not account:
            continue
        out[(account, name if is_user else "")] = (
            _shares_minutes(_at(row, "tres", "usage")),
            _shares_minutes(_at(row, "tres", "run_seconds")))
    return out


def parse_fair_shares(text: str, user: str | None) -> tuple[dict[str, float],
                                                              dict[str, str]]:
    """`GET /slurm/VERSION/shares` (as `sshare -U`'s FairShare and LevelFS, v0.0.40 on):
    the user's FairShare factor by account (`fairshare.factor` of each row of theirs: `type`
    USER, `name` the user, `parent` the account) and its LevelFS (`fairshare.level`), as
    text. A row without a factor is left out. SiteError for a reply of errors or without
    the `shares.shares` list."""
    data = _reply("shares", text)
    rows = _at(data, "shares", "shares")
    if not isinstance(rows, list):
        raise SiteError("slurmrestd: shares: the reply has no 'shares.shares' list")
    factors: dict[str, float] = {}
    levels: dict[str, str] = {}
    for row in rows:
        if not isinstance(row, dict) or clean(row.get("name")) != user or not user:
            continue
        kinds = row.get("type") if isinstance(row.get("type"), list) else [row.get("type")]
        account = clean(row.get("parent"))
        if not account or not any(isinstance(k, str) and k.upper() == "USER" for k in kinds):
            continue
        factor = _shares_count(_at(row, "fairshare", "factor"))
        if factor is None:
            continue
        factors[account] = factor
        if (level := _shares_count(_at(row, "fairshare", "level"))) is not None:
            levels[account] = f"{level:g}"
    return factors, levels


def parse_qos_priorities(text: str) -> dict[str, int]:
    """`GET /slurmdb/VERSION/qos` (as `sacctmgr show qos format=Name,Priority`): each QOS's
    Priority (`priority`: plain in v0.0.38, {set, infinite, number} from v0.0.39), by name;
    one not set is left out. SiteError for a reply of errors or without a `qos` list."""
    out: dict[str, int] = {}
    for name, q in _qos_rows(text):
        if (n := known_count(q.get("priority"))) is not None:
            out[name] = n
    return out


def job_priorities(text: str, commands: SlurmCommands | None = None) -> dict[str, int] | None:
    """`GET jobs` (as sprio's %Y): each waiting job's priority (`priority`, plain or
    wrapped), by native id; None where no waiting job says one."""
    data = load_json("slurm", "jobs", text)
    reader = commands or SlurmCommands()
    out: dict[str, int] = {}
    for j in data.get("jobs") or []:
        if not isinstance(j, dict) or to_int(j.get("job_id")) is None \
                or "PENDING" not in _state_words(j):
            continue
        if (n := known_count(j.get("priority"))) is not None:
            out[reader._json_job(j).native_id] = n
    return out or None


def _snapshot_priority(outputs: dict[str, str], user: str | None, api_version: str
                       ) -> SlurmPriority:
    """What a new job's multifactor priority is weighed by, as far as slurmrestd serves
    it: the QOS priorities (slurmdb) and the user's fair share (`shares`, v0.0.40 on). The
    plugin and its weights are slurm.conf's, which no version serves (None, none)."""
    out = SlurmPriority()
    try:
        out.qos_priority = parse_qos_priorities(outputs["qos"]) or None \
            if "qos" in outputs else None
    except SiteError as e:
        out.unread["qos"] = str(e)
    if out.qos_priority is None and "qos" not in out.unread:
        out.unread["qos"] = outputs.get(QOS_UNREAD) or "slurmdb's QOS not read"
    if api_number(api_version) < SHARES_SINCE:
        # (its associations' spec declares a `usage.fairshare_factor` that slurmdbd,
        # which never computes one, does not fill: 22.05.8's replies have no `usage`)
        out.unread["fair share"] = f"slurmrestd {api_version} has no shares call"
        return out
    try:
        shares = parse_fair_shares(outputs[SHARES], user) if SHARES in outputs else None
    except SiteError as e:
        shares, out.unread["fair share"] = None, str(e)
    if shares and shares[0]:
        out.fair_share, out.level_fs = shares[0], shares[1] or None
    else:
        out.unread.setdefault("fair share", outputs.get(SHARES_UNREAD)
                              or "no row of yours in slurmrestd's shares reply")
    return out


def with_shares(assocs: list[Association],
                usage: dict[tuple[str, str], tuple[dict[str, int], dict[str, int]]],
                user: str | None) -> list[Association]:
    """The associations with what the shares reply says each has used of its TRES-minutes
    (then known); one the reply does not hold stays not known."""
    out = []
    for a in assocs:
        got = usage.get((a.account or "", (user or "") if a.level == "user" else ""))
        out.append(a.model_copy(update={"tres_mins_used": got[0], "tres_run_mins": got[1],
                                        "tres_mins_used_known": True}) if got else a)
    return out


def _snapshot_associations(output: str, skipped: list[str], user: str | None = None
                           ) -> list[Association] | None:
    """The `associations` output: the replies for the user (`user`: another's left out),
    then for each account above theirs. None (not known) when the user's own reply is not
    one or holds none of theirs; an account's reply that is not one leaves that account's
    limits out, said."""
    try:
        replies = json.loads(output)
    except (ValueError, RecursionError):
        replies = None
    if not isinstance(replies, list) or not replies or not all(
            isinstance(r, str) for r in replies):
        skipped.append("associations not read (not a list of slurmdb replies): your "
                       "default QOS and account limits are not checked")
        return None
    try:
        mine = [a for a in parse_associations(replies[0], user) if a.level == "user"]
    except SiteError as e:
        skipped.append(f"associations not read ({e}): your default QOS and account limits "
                       "are not checked")
        return None
    if not mine:
        return None
    above: dict[tuple[str | None, str | None], Association] = {}
    for text in replies[1:]:
        try:
            for a in parse_associations(text):  # (an account's reply holds its children)
                if a.level == "account":
                    above.setdefault((a.account, a.partition), a)
        except SiteError as e:
            skipped.append(f"an account's association not read ({e}): its limits are not "
                           "checked")
    return mine + list(above.values())


def _time_used_s(j: dict[str, Any], now: float | None) -> int | None:
    """What squeue's %M says of a job: the time it has run, its suspensions left out. A
    suspended job ran `pre_sus_time`; one resumed since ran that and the time since
    `suspend_time` (when it last changed); one never suspended, the time since it started.
    None where not running or where the time of the reading is not known."""
    words = _state_words(j)
    before = _seconds(j.get("pre_sus_time")) or 0
    if "SUSPENDED" in words:
        return before
    if "RUNNING" not in words or now is None:
        return None
    start, changed = _seconds(j.get("start_time")), _seconds(j.get("suspend_time"))
    if changed and start and changed >= start:
        return max(0, before + int(now - changed))
    return max(0, int(now - start)) if start else None


def _state_words(j: dict[str, Any]) -> set[str]:
    """A job's state and its flags: one word in v0.0.38, a list from v0.0.40 on."""
    state = j.get("job_state")
    return {str(w).upper() for w in (state if isinstance(state, list) else [state])}


def _held_memory_mb(j: dict[str, Any]) -> int | None:
    """The memory a running job holds in all, from its `tres_alloc_str` (`mem=4G`)."""
    for item in (clean(j.get("tres_alloc_str")) or "").split(","):
        name, _, value = item.strip().partition("=")
        if name == "mem":
            return memory_mb(value)
    return None


def _snapshot_jobs(text: str, commands: SlurmCommands | None, skipped: list[str],
                   now: float | None) -> list[JobStatus]:
    """`GET jobs` as the queue snapshot: each job as `parse_jobs` reads it, with what the
    CLI's second squeue query adds to it: the QOS and account it runs under (the limits of
    both count its use), the memory a running job holds, and the time it has run. `now`:
    when the reply was read (epoch s); slurmctld's own `last_update` (v0.0.40 on) wins."""
    statuses = parse_jobs(text, commands, skipped)
    data = load_json("slurm", "jobs", text)
    now = _seconds(data.get("last_update")) or now
    extras: dict[str, dict[str, Any]] = {}
    reader = commands or SlurmCommands()
    for j in data.get("jobs") or []:
        if not isinstance(j, dict) or to_int(j.get("job_id")) is None:
            continue
        held = _held_memory_mb(j)
        extras[reader._json_job(j).native_id] = {
            "qos": clean(j.get("qos")), "account": clean(j.get("account")),
            "time_used_s": _time_used_s(j, now),
            # the licenses it holds or asks (squeue -O Licenses); None: not said
            "licenses": job_licenses(j["licenses"]) if isinstance(j.get("licenses"), str)
            else None,
            # what its dependency still waits for (squeue %E, the same text: "" for none;
            # a string in v0.0.38 as in the published schemas of later versions)
            "dependency": job_dependency(j.get("dependency")),
            # a running (or suspended) job's memory a node
            **({"memory_mb": -(-held // (known_count(j.get("node_count")) or 1))}
               if held and _state_words(j) & {"RUNNING", "SUSPENDED"} else {})}
    return [s.model_copy(update=extras[s.native_id]) if s.native_id in extras else s
            for s in statuses]


_Read = TypeVar("_Read")  # what an optional snapshot output reads as


def _read_if_asked(outputs: dict[str, str], key: str, unread: str,
                   parse: Callable[[str], _Read], skipped: list[str], said: str,
                   reasons: list[str] | None = None) -> _Read | None:
    """`parse` of `outputs[key]`; None where it was not asked, its call failed (the reason
    left under `unread`) or its answer is refused (SiteError): then `said`, its `{}` the
    reason, in `skipped` (and the reason alone in `reasons`, where given)."""
    why: str | None = None
    if key in outputs:
        try:
            return parse(outputs[key])
        except SiteError as e:
            why = str(e)
    else:
        why = outputs.get(unread)
    if why:
        skipped.append(said.format(why))
        if reasons is not None:
            reasons.append(why)
    return None


# a partition's power-saving timeouts (seconds) as the data parser of v0.0.40 and later
# names them in its published schema (`timeouts.resume`, `timeouts.suspend`); v0.0.38's
# partition has neither (its spec and replies on 22.05.8)
_PARTITION_TIMEOUTS = {"ResumeTimeout": "resume", "SuspendTimeout": "suspend"}


def _own_timeout(p: dict[str, Any], key: str) -> int | None:
    """A partition's `timeouts.resume` / `timeouts.suspend` (seconds); None where not set
    (NO_VAL16: GLOBAL) or not served."""
    value = limit_count(_at(p, "timeouts", key))
    return value if value is not None and value < NO_VAL16 else None


def partition_timeouts(text: str) -> dict[str, float]:
    """ResumeTimeout and SuspendTimeout (seconds, by those names) from `GET partitions`
    where every partition sets the same one: slurm.conf's own is served by no endpoint of
    any version, and one partition's override is no site's value. A name missing: not
    known (placement takes Slurm's default). A reply that does not read: none."""
    try:
        parts = _load("partitions", text).get("partitions")
    except SiteError:
        return {}
    if not isinstance(parts, list) or not parts:
        return {}
    out: dict[str, float] = {}
    for name, key in _PARTITION_TIMEOUTS.items():
        values = {limit_count(_at(p, "timeouts", key)) if isinstance(p, dict) else None
                  for p in parts}
        (value,) = values if len(values) == 1 else (None,)
        if value is not None and value < NO_VAL16:
            out[name] = float(value)
    return out


DIAG = "diag"  # `GET diag` (as `sdiag`): the scheduler's statistics
DIAG_UNREAD = "diag unread"  # why `GET diag` did not answer


def backfill_seen(text: str | None) -> bool:
    """Whether `GET /slurm/VERSION/diag` (v0.0.38 to v0.0.41: `statistics`) shows Slurm's
    backfill at work: a backfill cycle counted (`bf_cycle_counter`, since the statistics
    were reset), a job backfilled (`bf_backfilled_jobs`, since slurmctld started), the time
    of the last cycle (`bf_when_last_cycle`) or one running (`bf_active`). Only the
    sched/backfill plugin counts these, so any says SchedulerType=sched/backfill; all
    naught (sched/builtin, or a backfill that has not run yet) says nothing."""
    try:
        stats = json.loads(text or "").get("statistics")
    except (ValueError, AttributeError):
        return False
    if not isinstance(stats, dict):
        return False
    counts = (limit_count(stats.get(k), bits=64) for k in
              ("bf_cycle_counter", "bf_backfilled_jobs", "bf_when_last_cycle"))
    return stats.get("bf_active") is True or any(c is not None and c > 0 for c in counts)


def parse_snapshot(site: str, outputs: dict[str, str],
                   commands: SlurmCommands | None = None,
                   api_version: str = "v0.0.38") -> SiteSnapshot:
    queue = outputs.get("queue") or '{"jobs": []}'  # discovery asks no queue
    skipped: list[str] = []
    read_at = outputs.get(READ_AT)
    now = float(read_at) if read_at and re.fullmatch(r"[0-9]+(\.[0-9]+)?", read_at) else None
    jobs = [j for j in _snapshot_jobs(queue, commands, skipped, now)
            if not j.state.terminal]
    # each unknown (None) where it was not asked or failed, said in `skipped`
    resv: list[Reservation] | None = _read_if_asked(
        outputs, "reservations", RESERVATIONS_UNREAD,
        lambda text: parse_reservations(text, skipped), skipped,
        "reservations not read ({}): a job naming one is placed without its window, and "
        "their nodes read as their state says")
    qos: dict[str, QosLimits] | None = _read_if_asked(
        outputs, "qos", QOS_UNREAD, lambda text: parse_qos(text, api_version) or None,
        skipped, "QOS limits not read ({}): none of them is checked")
    user = clean(outputs.get("user"))
    assocs: list[Association] | None = _read_if_asked(
        outputs, ASSOCIATIONS, ASSOCIATIONS_UNREAD,
        lambda text: _snapshot_associations(text, skipped, user), skipped,
        "associations not read ({}): your default QOS and account limits are not checked")
    licenses, licenses_free = _read_if_asked(
        outputs, LICENSES, LICENSES_UNREAD, parse_licenses, skipped,
        "licenses not read ({}): a job asking one is not checked against them") \
        or (None, None)
    minutes_unread: dict[str, str] = {}  # why the associations' use could not be read
    if assocs is not None:
        why: list[str] = []
        shares = _read_if_asked(
            outputs, SHARES, SHARES_UNREAD, parse_shares, skipped,
            "shares not read ({}): what your associations have used of their GrpTRESMins "
            "is not known", why)
        if shares is not None:
            assocs = with_shares(assocs, shares, user)
            minutes_unread["associations"] = "not in slurmrestd's shares reply"
        elif why:
            minutes_unread["associations"] = why[0]
    # MaxArraySize and SchedulerParameters' bf_window are slurm.conf's, which no
    # slurmrestd version serves (v0.0.38's paths; the published ones of later versions:
    # `diag` has backfill statistics, not its window); nor is what a QOS (any version) or
    # an association (before v0.0.40's `shares`) has used of its GrpTRESMins
    who = f"slurmrestd {api_version}"
    unreported = {UNREPORTED_MAX_ARRAY: who, UNREPORTED_BF_WINDOW: who,
                  UNREPORTED_TRES_MINS_USED: who, UNREPORTED_PRIORITY_WEIGHTS: who}
    # SchedulerType neither: its `diag` can show the backfill at work, never its absence
    if not backfill_seen(outputs.get(DIAG)):
        unreported[UNREPORTED_SCHEDULER_TYPE] = (
            f"{who} (its diag: {outputs[DIAG_UNREAD]})" if DIAG_UNREAD in outputs
            else f"{who} (its diag shows no backfill cycle)" if DIAG in outputs else who)
    timeouts = partition_timeouts(outputs.get("partitions", "{}"))
    # a timeout every partition sets alike is taken as the site's; one they set apart, as
    # each partition's own
    shared = {f: None for name, f in (("ResumeTimeout", "resume_timeout_s"),
                                      ("SuspendTimeout", "suspend_timeout_s"))
              if name in timeouts}
    partitions = [p.model_copy(update=shared) if shared else p
                  for p in parse_partitions(outputs.get("partitions", "{}"), skipped)]
    return SiteSnapshot(site=site, nodes=parse_nodes(outputs.get("nodes", "{}"), skipped),
                        node_timeouts=timeouts or None,
                        partitions=partitions,
                        jobs=jobs, reservations=resv, user=user, qos=qos,
                        associations=assocs, licenses=licenses, licenses_free=licenses_free,
                        priority=_snapshot_priority(outputs, user, api_version),
                        job_priorities=job_priorities(queue, commands),
                        unreported=unreported, tres_mins_unread=minutes_unread,
                        warnings=[f"{site}: {w}" for w in skipped])


class RestCommands(SlurmCommands):
    """Slurm's ids, states and token-in-comment rules, with the queue snapshot read from
    the REST replies (`queue`: GET jobs, `nodes`, `partitions`, `qos`: slurmdb's) in the
    shapes of `api_version`."""

    def __init__(self, *args: Any, api_version: str = "v0.0.38", **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.api_version = api_version

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot:
        return parse_snapshot(site, outputs, self, self.api_version)
