"""Text of the files each test-bed cluster runs from (slurm.conf, gres.conf, sshd_config)."""

from __future__ import annotations

from pathlib import Path

from .clusters import ClusterDef
from .modules import session_env


def cluster_dir(base: Path, c: ClusterDef) -> Path:
    return base / "clusters" / c.name


def slurm_conf(base: Path, c: ClusterDef) -> str:
    d = cluster_dir(base, c)
    first_port = 17000 + c.index * 10
    ports = f"[{first_port}-{first_port + c.nodes - 1}]" if c.nodes > 1 else str(first_port)
    nodes = c.node_names
    node_range = f"{nodes[0][:-1]}[1-{c.nodes}]"
    gres = f" Gres=gpu:{c.gpu_type + ':' if c.gpu_type else ''}{c.gpus}" if c.gpus else ""
    lines = [
        f"ClusterName={c.name}",
        f"SlurmctldHost={c.name}(127.0.0.1)",
        "SlurmctldPort=6817",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={base / 'munge' / 'munge.socket'}",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={d / 'state'}",
        f"SlurmdSpoolDir={d / 'spool' / '%n'}",
        f"SlurmctldPidFile={d / 'run' / 'slurmctld.pid'}",
        f"SlurmdPidFile={d / 'run' / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={d / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={d / 'log' / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "MpiDefault=none",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=batch_sched_delay=0,bf_interval=1,sched_interval=2",
        "JobCompType=jobcomp/filetxt",
        f"JobCompLoc={d / 'jobcomp.txt'}",
        "AccountingStorageType=accounting_storage/none",
        f"FirstJobId={c.first_job_id}",
        "MinJobAge=300",
        "KillWait=5",
        "InactiveLimit=0",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=60",
        "GresTypes=gpu",
        f"NodeName={node_range} NodeHostname={c.name} NodeAddr=127.0.0.1 Port={ports} "
        f"CPUs={c.cpus} RealMemory={c.memory_mb} Features={','.join(c.features)}{gres} "
        "State=UNKNOWN",
    ]
    for p in c.partitions:
        lines.append(
            f"PartitionName={p.name} Nodes={node_range} MaxTime={p.max_time} "
            f"Default={'YES' if p.default else 'NO'} State=UP"
        )
    return "\n".join(lines) + "\n"


def gres_conf(base: Path, c: ClusterDef) -> str:
    if not c.gpus:
        return ""
    dev = cluster_dir(base, c) / "dev"
    kind = f" Type={c.gpu_type}" if c.gpu_type else ""
    return f"Name=gpu{kind} File={dev}/nvidia[0-{c.gpus - 1}]\n"


def sshd_config(base: Path, c: ClusterDef) -> str:
    d = cluster_dir(base, c)
    env = session_env(base, c)
    return "\n".join([
        f"ListenAddress {c.ip}",
        "Port 22",
        f"HostKey {d / 'ssh' / 'ssh_host_ed25519_key'}",
        f"PidFile {d / 'run' / 'sshd.pid'}",
        f"AuthorizedKeysFile {base / 'ssh' / 'authorized_keys.%u'}",
        "StrictModes no",
        "UsePAM no",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        "PermitRootLogin no",
        "AllowTcpForwarding yes",
        "X11Forwarding no",
        "PrintMotd no",
        "MaxSessions 10",
        "MaxStartups 100:30:200",
        "ClientAliveInterval 30",
        "Subsystem sftp internal-sftp",
        # every session (and the jobs it submits) sees the site's modules and runtimes
        *(["SetEnv " + " ".join(f"{k}={v}" for k, v in env.items())] if env else []),
        f"AllowUsers {' '.join(_users())}",
        "",
    ])


def _users() -> tuple[str, ...]:
    from .clusters import HUB_USERS, USER

    return (USER, *HUB_USERS)
