"""Follow-ups of the twenty-third sweep of batch scripts: what it left unread or dropped.

Univa/Altair Grid Engine's `-l m_mem_free` is the job's memory per slot (a host consumable
of type YES unless the site's `qconf -sc` says JOB), carried by translation and seen by
placement's memory check."""

from __future__ import annotations

from test_placement_cases import run
from test_placement_cases11 import QCONF_SC, gaia

from diamond_jupyter.dialects.translate import translate

# --------------------------------------------------------------------------- m_mem_free

UGE = "#!/bin/bash\n#$ -pe smp 4\n#$ -l h_rt=01:00:00,m_mem_free=2G\n./app\n"
M_MEM_FREE = "m_mem_free mfree      MEMORY      <=    YES         YES        0        0\n"


def test_m_mem_free_is_the_memory_per_slot_carried_by_translation():
    out, warnings, spec = translate(UGE, "slurm")
    assert spec.resources.memory_per_cpu_mb == 2048
    assert spec.metadata["sge_memory"] == "m_mem_free" and not spec.unknown
    assert "#SBATCH --mem-per-cpu=2G" in out
    assert any("-l m_mem_free=2G read as the job's memory per slot" in w for w in warnings)
    assert not any("m_mem_free" in w and w.startswith("dropped") for w in warnings)
    out, _, _ = translate(UGE, "pbs")
    assert "#PBS -l select=1:ncpus=4:mem=8gb" in out  # 4 slots x 2G, one chunk
    # back to Grid Engine: the complex as written, not turned into h_vmem
    out, _, _ = translate(UGE, "sge")
    assert "#$ -l h_rt=01:00:00,m_mem_free=2G" in out and "h_vmem" not in out


def test_h_vmem_beside_m_mem_free_is_the_memory_and_m_mem_free_stays_as_written():
    out, _, spec = translate(UGE.replace("m_mem_free=2G", "m_mem_free=2G,h_vmem=3G"), "slurm")
    assert spec.resources.memory_per_cpu_mb == 3072 and "sge_memory" not in spec.metadata
    assert [d.value for d in spec.unknown] == ["m_mem_free=2G"]


def test_placement_sees_m_mem_free_as_memory_per_slot():
    # gaia: two 16-slot hosts of 64 GB. 4 slots x 20G = 80G a host: no host has it (before,
    # m_mem_free was no memory at all and the job was READY)
    job = "#$ -pe smp 4\n#$ -l m_mem_free=20G\n#$ -l h_rt=1:00:00"
    for complexes in ("", QCONF_SC + M_MEM_FREE):
        v = run(job, gaia({}, {}, complexes)).ranked[0]
        assert v.reasons == ["needs 81920 MB memory per host, largest host has 65536 MB"]
    # a site whose m_mem_free is of type JOB: 20G once
    as_job = QCONF_SC + M_MEM_FREE.replace("YES        0", "JOB        0")
    v = run(job, gaia({}, {}, as_job)).ranked[0]
    assert v.verdict == "READY"
    assert "m_mem_free is a consumable of type JOB here (qconf -sc): the job's 20G is " \
        "taken once, not times its 4 slots" in v.notes
    # 4 x 10G fits a host
    assert run(job.replace("20G", "10G"), gaia({}, {}, "")).ranked[0].verdict == "READY"
