"""What a job needs (read from its script and options) against what a site has (pure)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter.capabilities import SiteCapabilities, SoftwareModule, from_metadata, merge
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.federation import Federation
from diamond_jupyter.federation_needs import mismatch
from diamond_jupyter.model import BadInput, JobSpec, Node, Partition, SiteSnapshot
from diamond_jupyter.needs import (
    Feature,
    Needs,
    Op,
    join_features,
    needs_of,
    parse_constraint,
    required_arch,
    with_options,
)
from diamond_jupyter.option_types import SPEC_OPTIONS
from diamond_jupyter.placement import place
from diamond_jupyter.script_body import body_needs
from diamond_jupyter.software import (
    find_module,
    needs_reasons,
    norm_name,
    rewrite_modules,
    versions_match,
)

# ---------------------------------------------------------------- constraint expressions

NAMES = st.sampled_from(["a100", "avx2", "sve", "arch=aarch64", "arch=x86_64", "ib",
                         "gpu_v100", "knl.flat", "mem:256g"])


def _trees(depth: int):
    leaf = st.builds(Feature, NAMES, st.one_of(st.none(), st.integers(1, 9)))
    if depth == 0:
        return leaf
    sub = _trees(depth - 1)
    return st.one_of(leaf, st.integers(2, 4).flatmap(lambda n: st.builds(
        Op, st.tuples(*[sub] * n), st.tuples(*[st.sampled_from("&|")] * (n - 1)),
        st.sampled_from(["(", "["]), st.one_of(st.none(), st.integers(1, 9)))))


def _reference(tree, feats: set[str], arch: str | None) -> bool:
    """Slurm's reading: operators applied left to right, no precedence."""
    if isinstance(tree, Feature):
        n = tree.name.lower()
        return n in feats or (n.startswith("arch=") and n[5:] == arch)
    acc = _reference(tree.items[0], feats, arch)
    for op, item in zip(tree.ops, tree.items[1:], strict=True):
        acc = (acc and _reference(item, feats, arch)) if op == "&" else \
            (acc or _reference(item, feats, arch))
    return acc


@settings(max_examples=300, deadline=None)
@given(tree=_trees(3), feats=st.sets(NAMES, max_size=5),
       arch=st.sampled_from([None, "x86_64", "aarch64"]))
def test_constraint_text_round_trips_and_evaluates_left_to_right(tree, feats, arch):
    text = tree.text()
    parsed = parse_constraint(text)
    assert parsed.text() == text
    assert parse_constraint(" " + text.replace("&", " & ").replace("|", " | ") + " ").text() \
        == text  # spaces around operators do not matter
    assert parsed.matches(feats, arch) == _reference(tree, feats, arch)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab=&|()[]*1 $,;", max_size=12))
def test_constraint_parser_never_crashes(text):
    try:
        parse_constraint(text)
    except BadInput as e:
        assert "constraint" in str(e) and "\n" not in str(e)


def test_constraint_forms():
    assert parse_constraint("arch=aarch64").matches(set(), "aarch64")  # reported arch counts
    assert not parse_constraint("arch=aarch64").matches({"arch=x86_64"}, "x86_64")
    assert parse_constraint("a|b&c").matches({"c", "b"}, None)
    assert not parse_constraint("a|b&c").matches({"a"}, None)  # (a|b)&c, as Slurm reads it
    assert required_arch(parse_constraint("avx2&arch=arm64")) == "aarch64"
    assert required_arch(parse_constraint("avx2|arch=aarch64")) is None
    assert join_features(["avx2", "a|b"]) == "avx2&(a|b)"
    # a count on a group (sbatch's own example) is kept, and each node is checked alone
    knl = parse_constraint("[(knl&snc4&flat)*4&haswell*1]")
    assert knl.text() == "[(knl&snc4&flat)*4&haswell*1]"
    assert knl.items[0].count == 4 and not knl.matches({"knl", "snc4", "haswell"}, None)
    for bad, where in (("a&", "position 2"), ("(a|b", "missing ')'"), ("a b", "unexpected"),
                       ("a*x", "count"), ("$FEAT", "'$'")):
        with pytest.raises(BadInput, match=re.escape(where)):
            parse_constraint(bad)


def _slurm(text: str) -> JobSpec:
    return get_script_dialect("slurm").parse_script("#!/bin/bash\n" + text + "\necho x\n")


def test_slurm_constraint_with_equals_and_or_is_parsed_not_kept_unknown():
    s = _slurm("#SBATCH -C arch=aarch64")
    assert s.constraints.features == ["arch=aarch64"] and not s.unknown
    assert needs_of(s).architecture == "aarch64"
    assert "#SBATCH --constraint=arch=aarch64" in get_script_dialect("slurm").render_script(
        s).script
    s = _slurm('#SBATCH --constraint="[a100|v100]&ib"')
    assert s.constraints.features == ["[a100|v100]&ib"] and not s.unknown
    assert "--constraint=[a100|v100]&ib" in get_script_dialect("slurm").render_script(s).script
    s = _slurm("#SBATCH -C avx2&sve")
    assert s.constraints.features == ["avx2", "sve"]
    lsf, _, _ = translate("#!/bin/bash\n#SBATCH -C 'avx2|sve'\necho x\n", "lsf", "slurm")
    assert 'select[avx2 || sve]' in lsf
    s = _slurm("#SBATCH -C c4140,m,v100")  # not Slurm syntax: kept for sbatch to judge
    assert s.constraints.features == [] and s.unknown[0].option == "--constraint"


# ---------------------------------------------------------------- software names, versions

VERSION = st.lists(st.integers(0, 30), min_size=1, max_size=4).map(
    lambda xs: ".".join(map(str, xs)))


@given(VERSION, VERSION)
def test_versions_match_is_symmetric_and_reflexive(a, b):
    assert versions_match(a, a)
    assert versions_match(a, b) == versions_match(b, a)


@given(VERSION, st.lists(st.integers(0, 30), max_size=3),
       st.sampled_from(["", "-foss-2023a", "-GCCcore-12.3.0", "-k3x7qzt"]))
def test_a_more_precise_version_matches_and_suffixes_do_not_count(v, more, suffix):
    longer = ".".join([v, *map(str, more)])
    assert versions_match(v, longer + suffix)
    assert versions_match(None, longer) and versions_match(longer, None)


@given(VERSION, VERSION)
def test_different_leading_numbers_never_match(a, b):
    x, y = a.split("."), b.split(".")
    if x[0] != y[0]:
        assert not versions_match(a, b)


SITES = {
    "alpha": ["gcc/12.2.0-k3x7qzt", "openmpi/4.1.5-tq4bzvh", "python/3.11.4-mn2ahcd"],
    "beta": ["GCC/12.3.0", "GROMACS/2023.3-foss-2023a", "Python/3.11.3-GCCcore-12.3.0"],
    "gamma": ["python3/3.11", "cuda/12.2", "pytorch/2.1"],
}


def _mods(site: str) -> list[SoftwareModule]:
    return [SoftwareModule.parse(m) for m in SITES[site]]


@pytest.mark.parametrize("want, site, found", [
    ("gromacs/2023", "beta", "GROMACS/2023.3-foss-2023a"),
    ("GROMACS/2023.3-foss-2023a", "beta", "GROMACS/2023.3-foss-2023a"),
    ("gromacs", "beta", "GROMACS/2023.3-foss-2023a"),
    ("CUDA/12.2.0", "gamma", "cuda/12.2"),
    ("Python/3.11", "gamma", "python3/3.11"),
    ("python3", "alpha", "python/3.11.4-mn2ahcd"),
    ("python3", "beta", "Python/3.11.3-GCCcore-12.3.0"),
    ("torch", "gamma", "pytorch/2.1"),
    ("gcc/12", "alpha", "gcc/12.2.0-k3x7qzt"),
    ("gcc/12.3", "alpha", None),
    ("gromacs", "alpha", None),
    ("python2", "gamma", None),
    ("cuda/11", "gamma", None),
])
def test_find_module_across_naming_conventions(want, site, found):
    got = find_module(want, _mods(site))
    assert (got.full if got else None) == found


def test_norm_name():
    assert norm_name("Python3") == ("python", "3")
    assert norm_name("HDF5") == ("hdf5", None)  # digits that are part of the name stay
    assert norm_name("Open-MPI") == ("openmpi", None)


def test_a_bare_configured_name_does_not_widen_known_versions():
    mods = [SoftwareModule.parse("gcc/12.2.0-k3x7qzt"), SoftwareModule.parse("gcc")]
    assert find_module("gcc/12.3", mods) is None
    assert find_module("gcc/12.3", [SoftwareModule.parse("gcc")]).full == "gcc"  # unknown
    assert find_module("gcc", mods).full == "gcc/12.2.0-k3x7qzt"


def test_best_candidate_is_the_default_then_the_newest():
    mods = [SoftwareModule.parse("cuda/11.8"), SoftwareModule.parse("cuda/12.1"),
            SoftwareModule.parse("cuda/12.4")]
    assert find_module("cuda", mods).full == "cuda/12.4"
    assert find_module("cuda/12", mods).full == "cuda/12.4"
    mods[1] = SoftwareModule.parse("cuda/12.1", default=True)
    assert find_module("cuda", mods).full == "cuda/12.1"


def test_rewrite_module_lines_for_the_site_and_report_each():
    body = ("module purge\nmodule load gromacs/2023 python3  # md\n"
            "ml CUDA/12.2.0\nmodule load unknown/1\necho module load gromacs\n")
    caps = SiteCapabilities(site="beta", software=_mods("beta"))
    new, notes = rewrite_modules(body, caps)
    assert new.splitlines()[1] == \
        "module load GROMACS/2023.3-foss-2023a Python/3.11.3-GCCcore-12.3.0  # md"
    assert new.splitlines()[2:] == ["ml CUDA/12.2.0", "module load unknown/1",
                                    "echo module load gromacs"]
    assert notes == [
        "rewrote: body line 2: module gromacs/2023 -> GROMACS/2023.3-foss-2023a "
        "(as beta names it)",
        "rewrote: body line 2: module python3 -> Python/3.11.3-GCCcore-12.3.0 "
        "(as beta names it)"]
    assert rewrite_modules(body, SiteCapabilities(site="x")) == (body, [])  # unknown: kept


# ---------------------------------------------------------------- the body's needs

def test_body_needs_modules_containers_mpi():
    body = """set -e
module load gcc/12 openmpi
module --force add fftw/3.3
ml python3 cuda/12.2
ml -cuda
module unload gromacs
module load $MYMOD
ml
if true; then module load hdf5; fi
srun -n 4 \\
   apptainer exec --nv -B /scratch:/scratch --env A=1 img/lammps.sif lmp -in in.lj
mpirun -np 2 ./a.out
"""
    sw, container, mpi = body_needs(body)
    assert [(s.name, s.version, s.line) for s in sw] == [
        ("gcc", "12", 2), ("openmpi", None, 2), ("fftw", "3.3", 3), ("python3", None, 4),
        ("cuda", "12.2", 4), ("hdf5", None, 9)]
    assert container.image == "img/lammps.sif" and container.runtime == "apptainer"
    assert container.line == 10 and mpi == "srun"
    _, c, mpi = body_needs("singularity run docker://alpine:3 echo\nmpiexec -n 2 x\n")
    assert (c.image, c.runtime, mpi) == ("docker://alpine:3", "apptainer", "mpiexec")
    _, c, _ = body_needs("podman run --rm -v /a:/b -e X=1 --name t quay.io/x/y:1 cmd\n")
    assert (c.image, c.runtime) == ("quay.io/x/y:1", "podman")
    assert body_needs("# module load gromacs\necho apptainer exec\n") == ([], None, None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["module", "ml", "load", "add", "-q", "apptainer", "exec",
                                 "podman", "run", "--nv", "-B", "img.sif", "x/1", "'", '"',
                                 "\\", ";", "&&", "|", "#", "$X", "srun", "\n", " "]),
                max_size=25).map("".join))
def test_body_needs_never_crash(text):
    software, container, mpi = body_needs(text)
    assert all(s.name and "\n" not in s.full for s in software)
    assert container is None or container.image


@pytest.mark.parametrize("dialect, text, want", [
    ("slurm", "#SBATCH --gres=gpu:a100:2\n#SBATCH --mem=64G", ("a100", 2, 65536)),
    ("slurm", "#SBATCH --gpus=a100:1", ("a100", 1, None)),
    ("pbs", "#PBS -l select=1:ncpus=4:ngpus=2:gpu_type=v100:mem=32gb", ("v100", 2, 32768)),
    ("lsf", '#BSUB -gpu "num=1:gmodel=TeslaV100"\n#BSUB -M 4GB', ("TeslaV100", 1, None)),
    ("flux", "#flux: -N 1 --gpus-per-node=1\n#flux: --requires=a100", (None, 1, None)),
])
def test_gpu_and_memory_needs_in_every_dialect(dialect, text, want):
    spec = get_script_dialect(dialect).parse_script("#!/bin/bash\n" + text + "\necho x\n")
    n = needs_of(spec)
    assert (n.gpu_type, n.gpus, n.memory_mb) == want


def test_options_add_needs_and_refuse_bad_values():
    spec = with_options(JobSpec(script="echo x\n"), arch="arm64", software=["gromacs/2023",
                        "python3,cuda"], container="docker://alpine", gpu_type="a100",
                        memory="64G")
    n = needs_of(spec)
    assert n.architecture == "aarch64" and n.gpu_type == "a100" and n.gpus == 1
    assert [s.full for s in n.software] == ["gromacs/2023", "python3", "cuda"]
    assert n.container.image == "docker://alpine" and n.memory_mb == 65536
    for kw, msg in ((dict(arch="x86;rm"), "--arch"), (dict(memory="lots"), "--memory"),
                    (dict(software="a b"), "--software"), (dict(gpu_type="a 1"), "--gpu-type")):
        with pytest.raises(BadInput, match=re.escape(msg)):  # as the command line says it
            with_options(JobSpec(script="x\n"), **kw, said_as=SPEC_OPTIONS)
        with pytest.raises(BadInput, match=f"^{list(kw)[0]} "):  # a JSON field: its own name
            with_options(JobSpec(script="x\n"), **kw)


def test_container_image_is_kept_when_rendered():
    spec = with_options(JobSpec(script="echo in-box\n"), container="docker://alpine:3")
    out, warnings, _ = translate(get_script_dialect("slurm").render_script(spec).script,
                                 "pbs", "slurm")
    for dialect in ("slurm", "pbs", "lsf", "flux"):
        r = get_script_dialect(dialect).render_script(spec)
        assert "apptainer exec docker://alpine:3 /bin/bash -s <<'DIAMOND_CONTAINER_BODY'\n" \
               "echo in-box\nDIAMOND_CONTAINER_BODY\n" in r.script
        assert any("container image docker://alpine:3" in w and w.startswith("approximated")
                   for w in r.warnings)
    assert "apptainer exec docker://alpine:3" in out  # and it survives a translation
    tricky = with_options(JobSpec(script="cat <<DIAMOND_CONTAINER_BODY\nx\n"
                                  "DIAMOND_CONTAINER_BODY\n"), container="img.sif")
    text = get_script_dialect("slurm").render_script(tricky).script
    assert "<<'DIAMOND_CONTAINER_BODY1'" in text and text.endswith("DIAMOND_CONTAINER_BODY1\n")
    with pytest.raises(BadInput, match="container runtime"):
        get_script_dialect("slurm").render_script(tricky.model_copy(update={
            "metadata": {"container_runtime": "sh -c"}}))


# ---------------------------------------------------------------- matching, placement

def _site(name: str, arch: str, feats: list[str], gpus: int = 0, gpu: str | None = None,
          mem: int = 32000, **meta) -> tuple[SiteConfig, SiteSnapshot]:
    nodes = [Node(name=f"{name}{i}", state="idle", cpus=8, memory_mb=mem, gpus=gpus,
                  gpu_type=gpu, features=feats, partitions=["p"], architecture=arch)
             for i in range(2)]
    return (SiteConfig(name=name, metadata=meta),
            SiteSnapshot(site=name, partitions=[Partition(name="p", default=True, total_nodes=2,
                                                          nodes=[n.name for n in nodes])],
                         nodes=nodes))


def _tb() -> list[tuple[SiteConfig, SiteSnapshot]]:
    return [_site("alpha", "x86_64", ["arch=x86_64", "avx2"], software=SITES["alpha"],
                  container_runtimes=["apptainer"]),
            _site("beta", "x86_64", ["arch=aarch64", "sve"], mem=256000,
                  software=SITES["beta"], container_runtimes=[]),
            _site("gamma", "x86_64", ["arch=x86_64", "a100"], gpus=2, gpu="a100", mem=128000,
                  software=SITES["gamma"], container_runtimes=["apptainer"])]


@pytest.mark.parametrize("script, feasible", [
    ("#SBATCH -C arch=aarch64\nhostname", {"beta"}),
    ("#SBATCH -C 'avx2|sve'\nhostname", set()),  # sbatch refuses a feature it lacks
    ("#SBATCH -C 'avx2|arch=x86_64'\nhostname", {"alpha"}),
    ("#SBATCH -C '(avx2|a100)&arch=x86_64'\nhostname", set()),
    ("module load gromacs/2023\ngmx", {"beta"}),
    ("ml cuda/12.2\nnvcc", {"gamma"}),
    ("module load python3\npython3 x.py", {"alpha", "beta", "gamma"}),
    ("module load gcc/12.3\ngcc", {"beta"}),
    ("apptainer exec img.sif true", {"alpha", "gamma"}),
    ("#SBATCH --gres=gpu:a100:1\nnvidia-smi", {"gamma"}),
    ("#SBATCH --mem=200G\n./big", {"beta"}),
    ("#SBATCH --mem=100G\nmodule load GROMACS\ngmx", {"beta"}),
    ("module load cuda\napptainer exec x.sif nvcc", {"gamma"}),
])
def test_placement_from_script_needs(script, feasible):
    spec = Federation.parse("#!/bin/bash\n" + script + "\n")
    pl = place(spec, _tb())
    assert {v.site for v in pl.ranked if v.feasible} == feasible, pl.explain()
    assert "; needs " in pl.explain().splitlines()[0] and pl.needs
    for v in pl.ranked:
        assert v.feasible or v.reasons


def test_mismatch_names_what_is_missing():
    spec = Federation.parse("#!/bin/bash\n#SBATCH -C arch=aarch64\n#SBATCH -n 500\n"
                            "module load gromacs/2023\napptainer exec x.sif gmx\n")
    cfg, snap = _tb()[0]
    got = mismatch(spec, cfg.metadata, snap, from_metadata("alpha", cfg.metadata))
    assert got == [
        "software 'gromacs/2023' not installed (site has: gcc/12.2.0-k3x7qzt, "
        "openmpi/4.1.5-tq4bzvh, python/3.11.4-mn2ahcd)",
        "architecture mismatch: job needs aarch64, site has x86_64"]  # CPU count: not a need
    cfg, snap = _tb()[1]
    got = mismatch(spec, cfg.metadata, snap, from_metadata("beta", cfg.metadata))
    assert got == ["container x.sif needs a container runtime, site has none"]


def test_mpi_launcher_needs_an_mpi_stack_only_where_it_is_known():
    n = needs_of(Federation.parse("#!/bin/bash\nmpirun -np 4 ./a.out\n"))
    assert needs_reasons(n, SiteCapabilities(site="x", mpi=[])) == [
        "the script runs mpirun but the site has no MPI stack"]
    assert needs_reasons(n, SiteCapabilities(site="x", mpi=["openmpi"])) == []
    assert needs_reasons(n, SiteCapabilities(site="x")) == []  # not known: not checked


@pytest.mark.parametrize("body, pmi", [
    ("srun --mpi=pmix ./a.out", "pmix"),
    ("srun -n 8 --mpi pmi2 ./a.out", "pmi2"),
    ("srun --mpi='pmix_v4' ./a.out", "pmix_v4"),
    ("export SLURM_MPI_TYPE=pmix_v4\nsrun ./a.out", "pmix_v4"),
    ("SLURM_MPI_TYPE=pmi2 srun ./a.out", "pmi2"),
    ("export SLURM_MPI_TYPE=pmi2\nsrun --mpi=pmix ./a.out", "pmix"),  # the option wins
    ("srun ./a.out", None),  # the site's MpiDefault: nothing to check
    ("srun --mpi=$KIND ./a.out", None),  # only the shell knows
    ("if [ -n \"$X\" ]; then\n  srun --mpi=pmix ./a.out\nfi", None),  # a branch
    ("mpirun --mpi=pmix ./a.out", None),  # not srun's option
    ("srun ./a.out --mpi=pmix", "pmix"),  # read as written; srun has no way to tell
])
def test_srun_mpi_plugin_is_read_from_the_body(body, pmi):
    assert needs_of(Federation.parse("#!/bin/bash\n" + body + "\n")).pmi == pmi


@pytest.mark.parametrize("want, have, ok", [
    ("pmix", ["none", "pmi2", "pmix", "pmix_v4"], True),
    ("pmix", ["none", "pmi2", "cray_shasta"], False),
    ("pmix_v4", ["pmix", "pmix_v4"], True),
    ("pmix_v5", ["pmix", "pmix_v3", "pmix_v4"], False),
    ("pmix_v5", ["pmix"], True),  # PMIx whose versions the site did not list
    ("pmi2", ["none", "pmix", "pmix_v4"], False),
    ("none", ["pmi2"], True),
    ("PMI2", ["pmi2"], True),
])
def test_srun_mpi_plugin_against_the_sites_list(want, have, ok):
    n = Needs(mpi="srun", pmi=want)
    got = needs_reasons(n, SiteCapabilities(site="x", pmi=have))
    assert got == ([] if ok else [f"the script runs srun --mpi={want} but the site's Slurm "
                                  f"has no such MPI plugin (srun --mpi=list: {', '.join(have)})"])
    # a site whose plugins are not known (no srun, or it failed) is not checked
    assert needs_reasons(n, SiteCapabilities(site="x")) == []


def test_placement_keeps_an_srun_pmix_job_off_a_site_with_pmi2_only():
    sites = [_site("alpha", "x86_64", ["arch=x86_64"], pmi=["none", "pmi2"]),
             _site("beta", "x86_64", ["arch=x86_64"], pmi=["none", "pmi2", "pmix", "pmix_v4"]),
             _site("gamma", "x86_64", ["arch=x86_64"])]  # not known: not checked
    spec = Federation.parse("#!/bin/bash\n#SBATCH -N 2\nsrun --mpi=pmix ./md\n")
    pl = place(spec, sites)
    assert {v.site for v in pl.ranked if v.feasible} == {"beta", "gamma"}, pl.explain()
    alpha = next(v for v in pl.ranked if v.site == "alpha")
    assert any("srun --mpi=pmix" in r and "pmi2" in r for r in alpha.reasons), alpha.reasons
    assert "MPI (srun --mpi=pmix)" in pl.explain()


def test_sites_file_adds_to_or_overrides_discovery():
    found = SiteCapabilities(site="a", software=[SoftwareModule.parse("gcc/12")],
                             container_runtimes=["apptainer"])
    both = merge(found, {"software": ["mylib/1"], "container_runtimes": ["apptainer"]})
    assert both.module_names() == ["gcc/12", "mylib/1"]
    assert both.sources["software"] == "configured+discovered"
    over = merge(found, {"software": ["mylib/1"]}, override=True)
    assert over.module_names() == ["mylib/1"] and over.container_runtimes == ["apptainer"]


# ---------------------------------------------------------------- the corpus

CORPUS = Path("/work/shared/corpus/batch-scripts")
ROWS = list(csv.DictReader((CORPUS / "MANIFEST.tsv").open(), delimiter="\t")) \
    if (CORPUS / "MANIFEST.tsv").exists() else []
_MODULE = re.compile(r"^[ \t]*(?:module[ \t]+(?:load|add)|ml)[ \t]+([A-Za-z][\w.+-]*"
                     r"(?:/[\w.+-]+)?)[ \t]*$", re.M)
_NOT_MODULES = {"purge", "list", "avail", "spider", "reset", "restore", "save", "show", "use"}
_CONTAINER = re.compile(r"^[ \t]*(?:singularity|apptainer)[ \t]+(?:exec|run)[ \t]+"
                        r"([\w./-]+\.(?:sif|simg))\b", re.M)
_CONSTRAINT = re.compile(r"^#SBATCH[ \t]+(?:-C[ \t]*|--constraint[= ])[\"']?([\w=.|&]+)"
                         r"[\"']?[ \t]*$", re.M)


def test_needs_found_in_every_corpus_script():
    """No script crashes the reading of needs; each literal `module load X`, container
    image and Slurm constraint in a script shows up in its needs."""
    assert len(ROWS) >= 400
    counts = {"software": 0, "container": 0, "constraint": 0, "gpu_type": 0, "memory": 0}
    for row in ROWS:
        text = (CORPUS / row["file"]).read_bytes().decode("utf-8", errors="replace")
        try:
            spec = Federation.parse(text, row["dialect"])
        except BadInput:
            continue
        n = needs_of(spec)
        body = spec.script or ""
        for m in _MODULE.finditer(body):
            if m.group(1) in _NOT_MODULES:
                continue
            assert m.group(1) in [s.full for s in n.software], (row["file"], m.group(1))
        if m := _CONTAINER.search(body):
            assert n.container is not None, row["file"]
        if (m := _CONSTRAINT.search(text)) and m.group(1).lower() in text.lower() \
                and not any(d.option == "--constraint" for d in spec.unknown) \
                and spec.constraints.features:
            assert n.constraint is not None, row["file"]
        counts["software"] += bool(n.software)
        counts["container"] += bool(n.container)
        counts["constraint"] += bool(n.constraint)
        counts["gpu_type"] += bool(n.gpu_type)
        counts["memory"] += bool(n.memory_mb)
    assert counts["software"] > 250 and counts["container"] > 20
    assert counts["constraint"] > 30 and counts["gpu_type"] > 20 and counts["memory"] > 100


# ---------------------------------------------------------------- faces

def test_faces_take_the_need_options(tmp_path, capsys):
    from diamond_jupyter.cli.main import main
    from diamond_jupyter.skills import spec_of
    from diamond_jupyter.skills_models import SubmitInput

    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\necho x\n")
    for opts, named in ((["--arch", "x86;rm"], "--arch"), (["--memory", "lots"], "--memory"),
                        (["--software", "a b"], "--software")):
        assert main(["submit", "--site", "alpha", *opts, str(script)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("diamond: ") and named in err and err.count("\n") == 1
    spec = Federation.spec_from_text("#!/bin/bash\nmodule load gromacs\n",
                      overrides={"arch": "aarch64", "software": ["cuda/12"], "force": True,
                                 "gpu_type": None, "nodes": 2})
    n = needs_of(spec)
    assert n.architecture == "aarch64" and [s.full for s in n.software] == ["gromacs", "cuda/12"]
    assert spec.resources.nodes == 2
    got = spec_of(Federation, SubmitInput(script="#!/bin/bash\necho x\n", gpu_type="a100",
                                          memory="8G"))
    assert (needs_of(got).gpu_type, needs_of(got).memory_mb) == ("a100", 8192)


def test_benchmark_jobs_need_exactly_the_sites_they_name():
    """The metadata benchmark's jobs, against a model of the test bed (its three module
    naming conventions, features, GPUs, memory, runtimes): placement finds exactly the
    sites each job names, at least 40 jobs, every kind of need present."""
    from benchmarks.metadata import JOBS, blind

    sites = _tb()
    for (_, snap), cpus in zip(sites, (8, 64, 32), strict=True):
        for n in snap.nodes:
            n.cpus = cpus
    assert len(JOBS) >= 40 and len({j.name for j in JOBS}) == len(JOBS)
    assert {j.kind for j in JOBS} >= {"architecture", "software", "gpu", "container", "memory"}
    for job in JOBS:
        spec = Federation.parse(job.script())
        pl = place(spec, sites)
        assert {v.site for v in pl.ranked if v.feasible} == set(job.sites), (job.name,
                                                                            pl.explain())
        assert place(blind(spec), sites).choice is not None  # blind, every job goes somewhere
