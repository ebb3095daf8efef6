"""Discovery, the pure part: the one command's sections and their parsers, on outputs
recorded from real Lmod 8.6.19, Environment Modules 5.2.0 and Slurm 22.05.8."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from diamond_jupyter.capabilities import SoftwareModule
from diamond_jupyter.config import DiscoveryConfig, SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.discovery import (
    discovery_script,
    parse_module_list,
    parse_mpi,
    parse_runtimes,
    split_sections,
)
from diamond_jupyter.discovery_site import describe_from_outputs

OUT = Path(__file__).parent / "fixtures" / "outputs"
DISC = OUT / "discovery"
NODES = (OUT / "slurm" / "scontrol_node.txt").read_text()
PARTS = (OUT / "slurm" / "scontrol_partition.txt").read_text()
KEYS = ["partitions", "nodes"]


def _sections(name: str) -> tuple[dict[str, str], dict[str, int]]:
    return split_sections((DISC / name).read_text())


def test_lmod_terse_listing_gives_every_module_once() -> None:
    parts, codes = _sections("lmod-8.6.19-beta.txt")
    assert codes["modules"] == 0
    system, version, mods = parse_module_list(parts["modules"])
    assert (system, version) == ("lmod", "8.6.19")
    assert [m.full for m in mods] == ["GCC/12.3.0", "GROMACS/2023.3-foss-2023a",
                                      "Python/3.11.3-GCCcore-12.3.0"]
    assert mods[1] == SoftwareModule(name="GROMACS", version="2023.3-foss-2023a")


def test_lmod_spider_finds_modules_a_hierarchy_hides() -> None:
    parts, _ = _sections("lmod-8.6.19-hierarchy.txt")
    avail_only = parts["modules"].split("@@spider")[0]
    assert [m.full for m in parse_module_list(avail_only)[2]] == ["GCC/12.3.0"]
    assert [m.full for m in parse_module_list(parts["modules"])[2]] == [
        "GCC/12.3.0", "OpenMPI/4.1.5"]


def test_environment_modules_listing_and_its_default_mark() -> None:
    parts, _ = _sections("envmodules-5.2.0.txt")
    system, version, mods = parse_module_list(parts["modules"])
    assert (system, version) == ("environment-modules", "5.2.0")
    assert [(m.full, m.default) for m in mods] == [
        ("gcc/12.2.0", False), ("gcc/13.1.0", True), ("openmpi/4.1.5", False)]
    # the scheduler query of this recording failed: its section says so
    assert _sections("envmodules-5.2.0.txt")[1]["sched:x:nodes"] == 1


def test_lmod_default_marks_and_hidden_modules() -> None:
    text = ("system lmod 8.7.30\n/apps:\ngcc/\ngcc/12.2.0\ngcc/13.2.0 (D)\n"
            "cuda/12.2(default)\n.secret/1\nfoo/.hidden\n")
    _, _, mods = parse_module_list(text)
    assert [(m.full, m.default) for m in mods] == [
        ("cuda/12.2", True), ("gcc/12.2.0", False), ("gcc/13.2.0", True)]


def test_no_module_system_is_none() -> None:
    assert parse_module_list("system none\n") == (None, None, [])


def test_runtimes_and_mpi() -> None:
    assert parse_runtimes("apptainer /usr/bin/apptainer\nch-run /opt/ch/bin/ch-run\n"
                          "junk line here\npodman relative\n") == ["apptainer", "charliecloud"]
    mods = [SoftwareModule.parse("openmpi/4.1.5-tq4bzvh"), SoftwareModule.parse("GCC/12")]
    srun = ("pmi MPI plugin types are...\npmi \tnone\npmi \tpmi2\npmi \tcray_shasta\n"
            "pmi specific pmix plugin versions available: pmix_v3,pmix_v4\n"
            "cmd mpichversion /usr/bin/mpichversion\n")
    assert parse_mpi(srun, mods) == (["mpich", "openmpi"],
                                     ["cray_shasta", "none", "pmi2", "pmix_v3", "pmix_v4"])
    # srun without a configuration only complains: no plugin is made up from its words
    parts, _ = _sections("lmod-8.6.19-beta.txt")
    assert parse_mpi(parts["mpi"], []) == ([], [])


def test_srun_plugins_reach_the_capabilities_placement_reads() -> None:
    parts, codes = _sections("lmod-8.6.19-beta.txt")
    parts.update(_cluster_sections("capture", NODES, PARTS))
    # srun failed there (no configuration): the plugins stay unknown, not "none"
    d = describe_from_outputs("capture", SlurmCommands(), parts, codes, ["capture"], KEYS)
    assert d.capabilities.pmi is None and "pmi" not in d.capabilities.sources
    parts["mpi"] = "pmi MPI plugin types are...\npmi \tnone\npmi \tpmi2\n"
    d = describe_from_outputs("capture", SlurmCommands(), parts, codes, ["capture"], KEYS)
    assert d.capabilities.pmi == ["none", "pmi2"] == d.pmi
    assert d.capabilities.sources["pmi"] == "discovered"


def _cluster_sections(cluster: str, nodes: str, parts: str) -> dict[str, str]:
    return {f"sched:{cluster}:nodes": nodes, f"sched:{cluster}:partitions": parts}


def test_partitions_with_different_node_types_are_summarised_upward() -> None:
    parts, codes = _sections("lmod-8.6.19-beta.txt")
    parts.update(_cluster_sections("capture", NODES, PARTS))
    d = describe_from_outputs("capture", SlurmCommands(), parts, codes, ["capture"], KEYS)
    types = {t.name: t for t in d.capabilities.node_types}
    assert set(types) == {"x86_64-8c-16g", "x86_64-16c-62g-2xgpu"}
    cpu, gpu = types["x86_64-8c-16g"], types["x86_64-16c-62g-2xgpu"]
    assert (cpu.count, cpu.partitions, cpu.features) == (2, ["debug", "long"],
                                                         ["arch=x86_64", "avx2"])
    assert (gpu.count, gpu.gpus, gpu.partitions) == (1, 2, ["debug", "gpu"])
    [cluster] = d.clusters
    by_part = {p.name: p for p in cluster.partitions}
    assert by_part["debug"].node_types == ["x86_64-8c-16g", "x86_64-16c-62g-2xgpu"]
    assert by_part["long"].node_types == ["x86_64-8c-16g"]
    assert (by_part["debug"].max_time_s, by_part["gpu"].max_time_s) == (3600, None)
    assert cluster.nodes == 3 and cluster.architectures == ["x86_64"]
    caps = d.capabilities
    assert caps.architectures == ["x86_64"] and caps.features == ["arch=x86_64", "avx2", "gpu"]
    assert caps.module_system == "lmod" and caps.container_runtimes == []


def test_a_center_of_several_clusters() -> None:
    cpu_nodes = "\n".join(line for line in NODES.splitlines() if line.startswith("NodeName=c"))
    gpu_nodes = "\n".join(line for line in NODES.splitlines() if line.startswith("NodeName=g"))
    arm = cpu_nodes.replace("arch=x86_64", "arch=aarch64").replace("Arch=x86_64",
                                                                   "Arch=aarch64")
    parts, codes = _sections("lmod-8.6.19-beta.txt")
    parts.update(_cluster_sections("cpu", arm, PARTS))
    parts.update(_cluster_sections("gpu", gpu_nodes, PARTS))
    parts.update(_cluster_sections("broken", "scontrol: error: cannot connect", ""))
    codes["sched:broken:nodes"] = 1
    d = describe_from_outputs("center", SlurmCommands(), parts, codes,
                              ["cpu", "gpu", "broken"], KEYS)
    assert [c.name for c in d.clusters] == ["cpu", "gpu", "broken"]
    assert d.clusters[0].architectures == ["aarch64"] and d.clusters[1].gpu_models == []
    assert d.clusters[2].error and "cannot connect" in d.clusters[2].error
    assert d.capabilities.architectures == ["aarch64", "x86_64"]
    names = [t.name for t in d.capabilities.node_types]
    assert names == ["cpu/aarch64-8c-16g", "gpu/x86_64-16c-62g-2xgpu"]
    assert {t.cluster for t in d.capabilities.node_types} == {"cpu", "gpu"}
    assert any("broken" in e for e in d.capabilities.errors)


def test_typed_gres_names_the_gpu_model() -> None:
    typed = NODES.replace("Gres=gpu:2", "Gres=gpu:a100:2")
    parts = _cluster_sections("c", typed, PARTS) | {"arch": "x86_64"}
    d = describe_from_outputs("c", SlurmCommands(), parts, {}, ["c"], KEYS)
    assert d.capabilities.gpu_models == ["a100"]
    assert any(t.gpu_model == "a100" and t.name.endswith("2xa100")
               for t in d.capabilities.node_types)


def test_the_command_quotes_what_the_sites_file_gives() -> None:
    script = discovery_script({"c 1": {"nodes": ["scontrol", "show", "node"]}},
                              {"c 1": {"SLURM_CONF": "/x/$(reboot)/slurm.conf",
                                       "bad name;": "x"}})
    assert "SLURM_CONF='/x/$(reboot)/slurm.conf' scontrol show node" in script
    assert "bad name" not in script
    # bash reads it without error, and each section reports its exit status
    r = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_discovery_runs_as_written_in_bash() -> None:
    """The real command, run here by bash with no scheduler: each section comes back."""
    script = discovery_script({"c": {"nodes": ["sh", "-c", "echo NodeName=n1; exit 3"]}})
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, timeout=60)
    parts, codes = split_sections(r.stdout)
    assert set(parts) == {"login", "arch", "sched:c:nodes", "modules", "envs", "runtimes",
                          "mpi"}
    assert codes["sched:c:nodes"] == 3 and parts["sched:c:nodes"] == "NodeName=n1"
    assert parts["arch"].strip() == subprocess.run(["uname", "-m"], capture_output=True,
                                                   text=True).stdout.strip()


@pytest.mark.parametrize("bad", [{"ttl_s": -1}, {"clusters": [{"name": "a b"}]},
                                 {"overide": True}])
def test_discovery_settings_are_checked(bad: dict) -> None:
    with pytest.raises(ValueError):
        SiteConfig(name="s", discovery=DiscoveryConfig(**bad))
