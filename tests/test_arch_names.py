"""Every scheduler's spelling of a CPU architecture reads as the same `uname -m` name."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.discovery import node_types
from diamond_jupyter.model import Constraints, JobSpec, Node, Resources, arch_name
from diamond_jupyter.needs import node_arch
from diamond_jupyter.placement import place


def _lsf_arches(*types: str) -> list[str | None]:
    hosts = json.dumps({"COMMAND": "bhosts", "RECORDS": [
        {"HOST_NAME": f"h{i}", "STATUS": "ok", "MAX": "8", "NJOBS": "0"}
        for i in range(len(types))]})
    lshosts = json.dumps({"COMMAND": "lshosts", "RECORDS": [
        {"HOST_NAME": f"h{i}", "ncpus": "8", "maxmem": "64G", "type": t, "model": "PC"}
        for i, t in enumerate(types)]})
    snap = LsfCommands().parse_snapshot("lsfsite", {"hosts": hosts, "lshosts": lshosts})
    return [n.architecture for n in sorted(snap.nodes, key=lambda n: n.name)]


def test_lsf_host_types_read_as_documented():
    # LINUX86 is LSF's 32-bit x86 Linux type (i686), LINUX64 its Itanium Linux type
    assert _lsf_arches("X86_64", "LINUX86", "LINUXPPC64LE", "LINUXPPC64", "LINUX64") == [
        "x86_64", "i686", "ppc64le", "ppc64", "ia64"]


def _sge_arches(*arches: str) -> list[str | None]:
    host = ("<host name='{n}'><hostvalue name='arch_string'>{a}</hostvalue>"
            "<hostvalue name='num_proc'>8</hostvalue><hostvalue name='load_avg'>0.1</hostvalue>"
            "<hostvalue name='mem_total'>16G</hostvalue></host>")
    qhost = "<?xml version='1.0'?><qhost>" + "".join(
        host.format(n=f"s{i}", a=a) for i, a in enumerate(arches)) + "</qhost>"
    qstat = ("<?xml version='1.0'?><job_info><queue_info>" + "".join(
        f"<Queue-List><name>all.q@s{i}</name><qtype>BIP</qtype><slots_used>0</slots_used>"
        f"<slots_total>8</slots_total><arch>{a}</arch></Queue-List>"
        for i, a in enumerate(arches)) + "</queue_info><job_info></job_info></job_info>")
    snap = SgeCommands().parse_snapshot("gecko", {"hosts": qhost, "queue": qstat})
    return [n.architecture for n in sorted(snap.nodes, key=lambda n: n.name)]


def test_grid_engine_arch_strings_read_through_the_shared_table():
    assert _sge_arches("lx-amd64", "lx-x86", "lx-ppc64le", "lx-ppc64", "lx-arm64",
                       "lx-ia64") == ["x86_64", "i686", "ppc64le", "ppc64", "aarch64", "ia64"]


def test_pbs_arch_resource_reads_through_the_shared_table():
    nodes = {f"p{i}": {"state": "free", "resources_available": {"ncpus": 8, "arch": a}}
             for i, a in enumerate(("linux", "arm64", "ppc64", "amd64"))}
    got = PbsCommands().parse_nodes(json.dumps({"nodes": nodes}))
    assert [n.architecture for n in sorted(got, key=lambda n: n.name)] == [
        None, "aarch64", "ppc64", "x86_64"]


@pytest.mark.parametrize(("feature", "arch"), [("ppc64", "ppc64"), ("ppc64le", "ppc64le"),
                                               ("lx-amd64", "x86_64"), ("arch=lx-ppc64", "ppc64")])
def test_architecture_named_feature_is_the_node_arch(feature: str, arch: str):
    node = Node(name="n1", state="idle", cpus=8, features=["avx2", feature],
                architecture="x86_64" if arch != "x86_64" else "aarch64")
    assert node_arch(node) == arch


def test_grid_engine_ppc64_request_round_trips():
    sge = get_script_dialect("sge")
    spec = sge.parse_script("#!/bin/bash\n#$ -l arch=lx-ppc64\nhostname\n")
    assert spec.constraints.architecture == "ppc64"
    assert "#$ -l arch=lx-ppc64" in sge.render_script(spec).script


# -- 32-bit x86, Itanium, and what Flux says ------------------------------------------------


@pytest.mark.parametrize(("text", "arch"), [
    ("i686", "i686"), ("lx-x86", "i686"), ("LINUX86", "i686"),
    ("ia64", "ia64"), ("lx-ia64", "ia64"), ("LINUX64", "ia64"),
    ("x86", None),  # 32 or 64 bits: not said
])
def test_i686_and_ia64_are_architectures_of_their_own(text: str, arch: str | None):
    assert arch_name(text) == arch


def test_a_job_for_x86_64_is_not_placed_on_32_bit_or_itanium_hosts():
    snap = LsfCommands().parse_snapshot("old", {
        "hosts": json.dumps({"RECORDS": [{"HOST_NAME": "h1", "STATUS": "ok", "MAX": "8",
                                          "NJOBS": "0"}]}),
        "lshosts": json.dumps({"RECORDS": [{"HOST_NAME": "h1", "type": "LINUX86",
                                            "ncpus": "8", "maxmem": "4G"}]})})
    job = JobSpec(name="j", script="hostname", resources=Resources(cpus_per_task=1),
                  constraints=Constraints(architecture="x86_64"))
    [verdict] = place(job, [(SiteConfig(name="old"), snap)]).ranked
    assert not verdict.feasible
    assert verdict.reasons == ["architecture mismatch: job needs x86_64, site has i686"]


def test_grid_engine_32_bit_request_round_trips():
    sge = get_script_dialect("sge")
    spec = sge.parse_script("#!/bin/bash\n#$ -l arch=lx-x86\nhostname\n")
    assert spec.constraints.architecture == "i686"
    assert "#$ -l arch=lx-x86" in sge.render_script(spec).script


def _flux_nodes(listing: str) -> list[tuple[str, str | None]]:
    return [(n.name, n.architecture) for n in FluxCommands().parse_resources(listing)]


@pytest.mark.parametrize(("properties", "arch"), [
    ("x86_64,gpu", "x86_64"),
    ("amd64", "x86_64"),
    ("arch=aarch64", "aarch64"),
    ("i686", "i686"),
    ("gpu,ib", None),  # Flux reports no architecture itself: unknown
    ("", None),
    ("x86_64,aarch64", None),  # two that disagree say none
])
def test_flux_architecture_from_a_property_naming_one(properties: str, arch: str | None):
    listing = f"free|{properties}|2|16|0|n[1-2]\n"
    assert _flux_nodes(listing) == [("n1", arch), ("n2", arch)]


def test_flux_node_without_an_arch_is_unknown_as_lsf_says_an_unread_type():
    flux = FluxCommands().parse_resources("free||1|8|0|f1\n")
    lsf = LsfCommands().parse_hosts(
        json.dumps({"RECORDS": [{"HOST_NAME": "l1", "STATUS": "ok", "MAX": "8"}]}),
        json.dumps({"RECORDS": [{"HOST_NAME": "l1", "type": "SLINUX64", "ncpus": "8"}]}))
    assert [n.architecture for n in flux + lsf] == [None, None]
    assert [t.name for t in node_types("c", flux + lsf)] == ["unknown-8c-0g"]
