"""A later Slurm hetjob component with its own `--account` or `--qos`, or naming no
partition where the first names one: the whole job was kept as written (only the first
component read; PBS, LSF, Grid Engine and flux got the first component alone). sbatch
carries --account and --qos over to the components after the one that sets them, not
--partition (Slurm's heterogeneous jobs page lists the propagated options): a component
without its own partition runs in the default one. Each is now read into the component,
given back to Slurm on it, placed with it, and said dropped where a job has one of each."""

from __future__ import annotations

import sys
from pathlib import Path

from diamond_jupyter.dialects.slurm_rest import job_description
from diamond_jupyter.dialects.translate import get_script_dialect
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Partition

sys.path.insert(0, str(Path(__file__).parent))

from test_placement_cases import NOW, hera, only, place  # noqa: E402

_HET = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -A proj --qos=normal -t 1:00:00\n"
        "#SBATCH hetjob\n#SBATCH {later}\n{more}srun ./a : ./b\n")


def _spec(later: str, more: str = ""):
    return Federation.parse(_HET.format(later=later, more=more))


def _sbatch_lines(spec) -> list[str]:
    out = get_script_dialect("slurm").render_script(spec)
    return [x for x in out.script.splitlines() if x.startswith("#SBATCH")]


def test_a_components_own_account_and_qos_are_read_with_it():
    spec = _spec("-p gpu -N 2 -n 8 -A other --qos=high")
    assert spec.unknown == []
    assert [(c.nodes, c.queue, c.account, c.qos) for c in spec.components] == \
        [(1, None, None, None), (2, "gpu", "other", "high")]
    assert (spec.account, spec.qos) == ("proj", "normal")


def test_sbatch_carries_a_components_account_to_the_ones_after_it():
    # the third component names none: sbatch gives it the second's, not the first's
    spec = _spec("-p gpu -N 2 -A other", "#SBATCH hetjob\n#SBATCH -p gpu -N 1\n")
    assert [c.account for c in spec.components] == [None, "other", "other"]
    # and a Slurm rendering says it on each component whose account is not the one before
    lines = _sbatch_lines(spec)
    assert lines.count("#SBATCH --account=other") == 1
    back = Federation.parse("#!/bin/bash\n" + "\n".join(lines) + "\n./a\n")
    assert [c.account for c in back.components] == [None, "other", "other"]


def test_a_component_back_on_the_jobs_account_is_written_with_it():
    spec = _spec("-p gpu -N 2 -A other", "#SBATCH hetjob\n#SBATCH -p gpu -N 1 -A proj\n")
    assert [c.account for c in spec.components] == [None, "other", None]
    lines = _sbatch_lines(spec)
    third = len(lines) - 1 - lines[::-1].index("#SBATCH hetjob")
    assert "#SBATCH --account=proj" in lines[third:]


def test_a_component_without_a_partition_is_in_the_default_one():
    spec = _spec("-N 2 -n 8")
    assert spec.unknown == []
    assert [(c.queue, c.default_queue) for c in spec.components] == [(None, False),
                                                                       (None, True)]
    lines = _sbatch_lines(spec)
    het = lines.index("#SBATCH hetjob")
    assert "#SBATCH --partition=cpu" in lines[:het]
    assert not any(x.startswith("#SBATCH --partition") for x in lines[het:])
    back = Federation.parse("#!/bin/bash\n" + "\n".join(lines) + "\n./a\n")
    assert [c.default_queue for c in back.components] == [False, True]


def test_one_queue_schedulers_say_each_components_own_settings_dropped():
    spec = _spec("-N 2 -n 8 -A other --qos=high")
    for dialect, shown in (("pbs", "PBS"), ("lsf", "LSF"), ("sge", "Grid Engine"),
                           ("flux", "flux")):
        w = get_script_dialect(dialect).render_script(spec).warnings
        assert f"dropped: the default partition of component 1 ({shown} has one queue per " \
               "job: the whole job goes to cpu)" in w, (dialect, w)
        assert f"dropped: account other of component 1 ({shown} has one account per job: " \
               "the whole job has account proj)" in w, (dialect, w)
        assert f"dropped: QOS high of component 1 ({shown} has one QOS per job: the whole " \
               "job has QOS normal)" in w, (dialect, w)
    spec.working_directory = "/home/u/run"
    job, warnings = job_description(spec)
    assert (job["account"], job["qos"]) == ("proj", "normal")
    assert any(x.startswith("dropped: account other of component 1") for x in warnings)


def test_a_component_without_a_partition_is_placed_in_the_default_one():
    # the first in debug; the later one names none: the default, cpu, whose 128-CPU nodes
    # it needs (debug's 32-CPU nodes cannot hold it)
    spec = Federation.parse("#!/bin/bash\n#SBATCH -p debug -N 1 -n 4 -t 20:00\n"
                            "#SBATCH hetjob\n#SBATCH -N 1 -n 1 -c 100\n./a\n")
    assert spec.components[1].default_queue
    v = only(place(spec, [hera()], now=NOW), "hera", "debug")
    assert v.feasible, v.reasons
    assert any("hetjob component 1" in n and "cpu" in n for n in v.notes), v.notes


def test_a_components_own_account_is_placed_with_it():
    # the gpu partition takes account gpu-users only: the component that asks it is placed
    cfg, snap = hera()
    parts = [p.model_copy(update={"allowed_accounts": ["gpu-users"]}) if p.name == "gpu"
             else p for p in snap.partitions]
    site = (cfg, snap.model_copy(update={"partitions": parts}))
    ok = Federation.parse("#!/bin/bash\n#SBATCH -p cpu -N 1 -A proj -t 1:00:00\n"
                          "#SBATCH hetjob\n#SBATCH -p gpu -N 1 -A gpu-users\n./a\n")
    assert only(place(ok, [site], now=NOW), "hera", "cpu").feasible
    bad = Federation.parse("#!/bin/bash\n#SBATCH -p cpu -N 1 -A proj -t 1:00:00\n"
                           "#SBATCH hetjob\n#SBATCH -p gpu -N 1\n./a\n")
    v = place(bad, [site], now=NOW).verdict("hera")
    assert not v.feasible
    assert any("hetjob component 1" in r and "proj" in r for r in v.reasons), v.reasons
    assert isinstance(parts[0], Partition)
