"""Dialect gaps, fifth round: output files appended or truncated, LSF's span[ptile] without
-n, Flux job ids in every spelling in dependencies, task-by-task array dependencies
(Slurm aftercorr, Grid Engine -hold_jid_ad, LSF done(ID[*])), and Lmod's hierarchy (a
module that loads only after its compiler and MPI). Each expectation is what the
scheduler's (or Lmod's) documentation says."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.flux_ids import (
    F58_ALPHABET,
    flux_id_form,
    flux_id_value,
    flux_words,
)
from diamond_jupyter.dialects.scripts_common import MAX_JOB_ID
from diamond_jupyter.dialects.translate import SCRIPT_DIALECTS, get_script_dialect, translate
from diamond_jupyter.model import BadInput


def _lines(script: str, *marks: str) -> list[str]:
    return [x for x in script.splitlines() if any(m in x for m in marks)]


# ---------------------------------------------------------------- Flux job ids

def _f58(n: int, prefix: str = "ƒ") -> str:
    """The F58 spelling of `n` (flux-job-id(1)), written here independently of the reader."""
    digits = ""
    while True:
        n, r = divmod(n, 58)
        digits = F58_ALPHABET[r] + digits
        if n == 0:
            return prefix + digits


def _dothex(n: int) -> str:
    h = f"{n:016x}"
    return ".".join(h[i:i + 4] for i in range(0, 16, 4))


@pytest.mark.parametrize("n", [0, 1, 57, 58, 4_242_424_242, 11_277_025_416_067_034, 2**64 - 1])
def test_flux_id_spellings_name_one_number(n: int) -> None:
    """F58 (with ƒ or f), decimal, hex, dotted hex and its KVS key are one id (RFC 19)."""
    spellings = [_f58(n), _f58(n, "f"), str(n), hex(n), _dothex(n), "job." + _dothex(n)]
    assert {flux_id_value(s) for s in spellings} == {n}
    assert [flux_id_form(s) for s in spellings] == \
        ["f58", "f58", "decimal", "hex", "dothex", "kvs"]


@pytest.mark.parametrize("text", ["ƒ0abc", "fIl", "0x", "0000.0000.0000", str(2**64),
                                  hex(2**64), "abc-def", "ƒ", "12a"])
def test_not_flux_ids(text: str) -> None:
    """0, O, I and l are not F58 digits; a number past 64 bits is no FLUID."""
    assert flux_id_form(text) is None and flux_id_value(text) is None


_ALL_FORMS = ["ƒ2X4PLSfCDw", "f2X4PLSfCDw", "11277025416067034", "0x281044b1000000",
              "0028.1044.b100.0000", "job.0028.1044.b100.0000",
              "turbo-parade-china--beast-whiskey-academy"]


@pytest.mark.parametrize("jid", _ALL_FORMS)
def test_flux_dependency_keeps_every_id_spelling(jid: str) -> None:
    """flux batch --dependency=afterok:ID takes the id in any spelling flux prints: a flux
    round trip keeps it as written (dotted hex and words were dropped as 'not a flux job
    id', the job then ran without waiting)."""
    text = f"#!/bin/bash\n# flux: -n 1\n# flux: --dependency=afterok:{jid}\nflux run ./a\n"
    spec = get_script_dialect("flux").parse_script(text)
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [("afterok", [jid])]
    script, warnings, _ = translate(text, "flux", "flux")
    assert _lines(script, "--dependency") == [f"#flux: --dependency=afterok:{jid}"]
    assert not [w for w in warnings if "depend" in w]


@pytest.mark.parametrize("jid", ["ƒ0OIl", "12ab", "job-42", "0xZZ"])
def test_flux_dependency_on_no_job_id_is_bad_input(jid: str) -> None:
    """flux refuses a dependency on something that is no job id: so does the reader, naming
    it and the spellings flux takes (it was read, then silently lost on rendering)."""
    text = f"#!/bin/bash\n#flux: --dependency=afterany:{jid}\n./a\n"
    with pytest.raises(BadInput, match=rf"line 2: {jid!r} is not a Flux job id.*F58"):
        get_script_dialect("flux").parse_script(text)


def test_flux_dependency_placeholder_is_kept_as_written() -> None:
    text = "#!/bin/bash\n#flux: --dependency=afterok:${PREV_JOB}\n./a\n"
    spec = get_script_dialect("flux").parse_script(text)
    assert spec.dependencies == [] and [d.option for d in spec.unknown] == ["--dependency"]


@pytest.mark.parametrize("target", ["slurm", "lsf", "pbs", "sge"])
def test_flux_ids_in_other_dialects(target: str) -> None:
    """A Flux id in F58, hex or dotted hex is its number: written in decimal where the
    target's ids go that high, else dropped naming the number and the target's largest id
    (F58 was dropped as 'not a job id' whatever its number; a decimal Flux id past the
    target's ids was written as it was, a job id that scheduler never gives)."""
    big = 2**40 + 5  # a real FLUID: its timestamp bits make it large
    ids = [("afterok", _f58(7)), ("afterany", hex(9)), ("afternotok", _dothex(11)),
           ("afterok", _f58(big)), ("afterany", str(big))]
    lines = "".join(f"#flux: --dependency={k}:{i}\n" for k, i in ids)
    text = f"#!/bin/bash\n#flux: -n 1\n{lines}flux run ./a\n"
    script, warnings, _ = translate(text, target, "flux", dependency_ids="target")
    back = get_script_dialect(target).parse_script(script)
    kinds = {"7": "afterok", "9": "afterany", "11": "afternotok"}
    assert sorted((d.kind, i) for d in back.dependencies for i in d.job_ids) == sorted(
        ("afterany" if target == "sge" else k, i) for i, k in kinds.items())  # qsub: any
    limit = str(MAX_JOB_ID[target])
    for kind, jid in ids[3:]:
        assert any(w.startswith(f"dropped: dependency {kind}:{jid} ") and str(big) in w
                   and limit in w for w in warnings), warnings
    assert any(w.startswith(f"approximated: dependency afterok:{_f58(7)} ") for w in warnings)


def test_flux_words_id_elsewhere_is_its_number() -> None:
    """The words form is decoded like any other spelling (before: dropped, as only flux
    read it): written as its number where the target's ids go that high, else dropped
    naming the number."""
    small, big = flux_words(7), "turbo-parade-china--beast-whiskey-academy"
    text = (f"#!/bin/bash\n#flux: --dependency=afterok:{small}\n"
            f"#flux: --dependency=afterany:{big}\n./a\n")
    script, warnings, _ = translate(text, "slurm", "flux", dependency_ids="target")
    assert [i for d in get_script_dialect("slurm").parse_script(script).dependencies
            for i in d.job_ids] == ["7"]
    assert any(w.startswith(f"dropped: dependency afterany:{big} ")
               and "11277025416067034" in w for w in warnings), warnings


def test_flux_commands_take_every_id_spelling() -> None:
    """flux cancel / flux jobs take any spelling; a non-id is refused, naming them."""
    ids = ["ƒ2X4PLSfCDw", "0028.1044.b100.0000", "turbo-parade-china--beast-whiskey-academy"]
    assert FluxCommands().cancel_argv(ids) == ["flux", "cancel", *ids]
    with pytest.raises(BadInput, match=r"not a job id: 'x; rm'.*dotted hex"):
        FluxCommands().cancel_argv(["x; rm"])


# ---------------------------------------------------------------- task-by-task dependencies

# (dialect, directive line, kind) of one task-by-task dependency on job 4242
_PER_TASK = {
    "slurm": ("#SBATCH --dependency=aftercorr:4242", "afterok"),
    "sge": ("#$ -hold_jid_ad 4242", "afterany"),
    "lsf": ('#BSUB -w "done(4242[*])"', "afterok"),
}
_ARRAY = {"slurm": "#SBATCH --array=1-10", "sge": "#$ -t 1-10", "lsf": '#BSUB -J "a[1-10]"'}


@pytest.mark.parametrize("source", list(_PER_TASK))
def test_task_by_task_dependency_is_read(source: str) -> None:
    """Slurm's aftercorr, Grid Engine's -hold_jid_ad and LSF's done(ID[*]): task n waits
    for task n of the job named. They were kept as unknown directives (Slurm, Grid
    Engine), or refused as an LSF dependency: lost in any translation."""
    line, kind = _PER_TASK[source]
    text = f"#!/bin/bash\n{_ARRAY[source]}\n{line}\n./a\n"
    spec = get_script_dialect(source).parse_script(text)
    assert [(d.kind, d.job_ids, d.per_task) for d in spec.dependencies] == \
        [(kind, ["4242"], True)]
    assert spec.unknown == []
    own, _, _ = translate(text, source, source)  # its own dialect writes it as it was
    assert line in own.splitlines()


@pytest.mark.parametrize(("source", "target", "want", "approximated"), [
    ("slurm", "lsf", '#BSUB -w "done(4242[*])"', False),
    ("slurm", "sge", "#$ -hold_jid_ad 4242", True),  # Grid Engine: whatever the exit status
    ("sge", "lsf", '#BSUB -w "ended(4242[*])"', False),
    ("lsf", "slurm", "#SBATCH --dependency=aftercorr:4242", False),
    ("lsf", "sge", "#$ -hold_jid_ad 4242", True),
    # Slurm's one task-by-task kind is on success: the whole job's afterany instead
    ("sge", "slurm", "#SBATCH --dependency=afterany:4242", True),
    # PBS and Flux have none: the same dependency on the whole job (later, never earlier)
    ("slurm", "pbs", "#PBS -W depend=afterok:4242", True),
    ("sge", "pbs", "#PBS -W depend=afterany:4242", True),
    ("lsf", "flux", "#flux: --dependency=afterok:4242", True),
])
def test_task_by_task_dependency_translates(source: str, target: str, want: str,
                                             approximated: bool) -> None:
    line, _ = _PER_TASK[source]
    text = f"#!/bin/bash\n{_ARRAY[source]}\n{line}\n./a\n"
    script, warnings, _ = translate(text, target, source, dependency_ids="target")
    assert want in script.splitlines()
    said = [w for w in warnings if w.startswith("approximated: dependency")]
    assert bool(said) is approximated, warnings
    assert not [w for w in warnings if w.startswith("dropped") and "4242" in w]


def test_lsf_one_to_one_dependency_among_others() -> None:
    """Each condition of an LSF -w keeps its own meaning."""
    text = ('#!/bin/bash\n#BSUB -J "b[1-4]"\n'
            '#BSUB -w "done(11[*]) && exit(12) && ended(13[*])"\n./a\n')
    spec = get_script_dialect("lsf").parse_script(text)
    assert [(d.kind, d.job_ids, d.per_task) for d in spec.dependencies] == [
        ("afterok", ["11"], True), ("afternotok", ["12"], False), ("afterany", ["13"], True)]
    out = translate(text, "slurm", "lsf", dependency_ids="target")[0]
    assert "#SBATCH --dependency=aftercorr:11,afternotok:12,afterany:13" in out.splitlines()


def test_every_dialect_reads_its_translation_of_a_task_dependency() -> None:
    text = "#!/bin/bash\n#SBATCH --array=1-10\n#SBATCH --dependency=aftercorr:77\n./a\n"
    for target in SCRIPT_DIALECTS:
        script, _, _ = translate(text, target, "slurm", dependency_ids="target")
        back = get_script_dialect(target).parse_script(script)
        assert [d.job_ids for d in back.dependencies] == [["77"]], target


# ---------------------------------------------------------------- output files: append / truncate

# (dialect, its directives naming run.log, what the scheduler does to an existing run.log)
_OUTPUTS = [
    ("slurm", "#SBATCH -n 1\n#SBATCH -o run.log", "truncate"),  # JobFileAppend=0 default
    ("slurm", "#SBATCH -n 1\n#SBATCH -o run.log\n#SBATCH --open-mode=append", "append"),
    ("slurm", "#SBATCH -n 1\n#SBATCH -o run.log\n#SBATCH --open-mode=t", "truncate"),
    ("lsf", "#BSUB -n 1\n#BSUB -o run.log", "append"),
    ("lsf", "#BSUB -n 1\n#BSUB -oo run.log\n#BSUB -eo err.log", "truncate"),
    ("pbs", "#PBS -l select=1:ncpus=1\n#PBS -o run.log", "truncate"),
    ("sge", "#$ -o run.log", "append"),
    ("flux", "#flux: -n 1\n#flux: --output=run.log", "truncate"),
    ("flux", "#flux: -n 1\n#flux: --output=run.log\n#flux: -o output.mode=append", "append"),
]
# what each target writes for each mode, or the word its warning uses when it cannot
_MODE_LINES = {
    "slurm": {"append": "#SBATCH --open-mode=append", "truncate": "#SBATCH --open-mode=truncate"},
    "lsf": {"append": "#BSUB -o run.log", "truncate": "#BSUB -oo run.log"},
    "flux": {"append": "#flux: --setopt=output.mode=append", "truncate": None},
    "pbs": {"append": "overwritten", "truncate": None},
    "sge": {"append": None, "truncate": "appended to"},
}


@pytest.mark.parametrize(("source", "lines", "mode"), _OUTPUTS)
def test_output_mode_is_read(source: str, lines: str, mode: str) -> None:
    from diamond_jupyter.dialects.scripts_common import output_mode_of

    spec = get_script_dialect(source).parse_script(f"#!/bin/bash\n{lines}\n./a\n")
    assert output_mode_of(spec) == mode
    assert not [d for d in spec.unknown if "mode" in d.option or "setopt" in d.option]


@pytest.mark.parametrize(("source", "lines", "mode"), _OUTPUTS)
@pytest.mark.parametrize("target", list(_MODE_LINES))
def test_output_mode_survives_translation(source: str, lines: str, mode: str,
                                          target: str) -> None:
    """A job whose output file is appended to stays so where the target can say it (Slurm
    --open-mode=append, LSF -o, flux's output.mode=append), and one that truncates it stays
    so (--open-mode=truncate, LSF -oo); PBS (always overwrites) and Grid Engine (always
    appends) say so in a warning. Before, LSF's -o (append) became sbatch's default
    (truncate), Slurm's output became LSF's appending -o, and --open-mode and flux's
    output.mode were dropped."""
    text = f"#!/bin/bash\n{lines}\n./a\n"
    script, warnings, _ = translate(text, target, source)
    out = script.splitlines()
    want = _MODE_LINES[target][mode]
    if target in ("pbs", "sge"):
        said = [w for w in warnings if w.startswith("approximated: output files")]
        assert bool(said) is (want is not None), warnings
        if want:
            assert want in said[0]
        return
    if target == source == "slurm" and "open-mode" not in lines:  # the site's default kept
        assert not _lines(script, "open-mode")
        return
    if want is not None:
        assert want in out, out
    unwanted = _MODE_LINES[target][{"append": "truncate", "truncate": "append"}[mode]]
    if unwanted:
        assert unwanted not in out, out
    if target == "lsf" and mode == "truncate":
        assert "#BSUB -o run.log" not in out


def test_slurm_open_mode_without_a_letter_sbatch_knows_is_kept_with_a_note() -> None:
    """sbatch ignores an --open-mode that starts with neither a nor t (the site decides)."""
    text = "#!/bin/bash\n#SBATCH -o run.log\n#SBATCH --open-mode=keep\n./a\n"
    spec = get_script_dialect("slurm").parse_script(text)
    assert spec.output_mode is None
    assert [(d.option, d.value) for d in spec.unknown] == [("--open-mode", "keep")]
    assert any("--open-mode=keep is neither append nor truncate" in n
               for n in spec.metadata["parse_notes"])


def test_lsf_files_of_two_modes_keep_theirs_in_lsf() -> None:
    text = "#!/bin/bash\n#BSUB -o out.log\n#BSUB -eo err.log\n./a\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert any("read as append" in n for n in spec.metadata["parse_notes"])
    out = translate(text, "lsf", "lsf")[0].splitlines()
    assert "#BSUB -o out.log" in out and "#BSUB -eo err.log" in out
    assert "#SBATCH --open-mode=append" in translate(text, "slurm", "lsf")[0].splitlines()


# ---------------------------------------------------------------- LSF span[ptile] without -n

@pytest.mark.parametrize("resreq", ["span[ptile=16]", "span[ptile=16] rusage[mem=2GB]"])
def test_lsf_ptile_without_slots_is_one_task(resreq: str) -> None:
    """span[ptile=N] spreads the job's slots N to a host; without -n the job has bsub's one
    default slot. It was read as N tasks on a host (16x the CPUs, and Slurm got
    --ntasks-per-node=16). Now one task, a note naming the line, the ptile kept for LSF."""
    from diamond_jupyter.dialects.translate import request_totals

    text = f'#!/bin/bash\n#BSUB -W 10\n#BSUB -R "{resreq}"\n./a\n'
    spec = get_script_dialect("lsf").parse_script(text)
    totals = request_totals(spec)
    assert (totals["tasks"], totals["cpus"], spec.resources.tasks_per_node) == (1, 1, None)
    assert any(n.startswith("line 3: span[ptile=16] without -n") and "1 task" in n
               for n in spec.metadata["parse_notes"])
    assert "lsf_ptile_at" not in spec.metadata
    lsf = translate(text, "lsf", "lsf")[0]
    back = get_script_dialect("lsf").parse_script(lsf)
    assert request_totals(back)["tasks"] == 1 and "span[ptile=16]" in lsf
    slurm = translate(text, "slurm", "lsf")[0]
    assert "ntasks-per-node" not in slurm and "#SBATCH --ntasks=1" in slurm.splitlines()


@pytest.mark.parametrize("slots", [4, 16])
def test_lsf_ptile_beyond_the_slots_is_one_host(slots: int) -> None:
    """-n 4 with span[ptile=16]: at most 16 slots a host, so all 4 on one. It was read as 16
    tasks per node: PBS's translation asked 16 CPUs and was refused, flux dropped it."""
    from diamond_jupyter.dialects.translate import request_totals

    text = f'#!/bin/bash\n#BSUB -n {slots}\n#BSUB -R "span[ptile=16]"\n./a\n'
    spec = get_script_dialect("lsf").parse_script(text)
    assert (request_totals(spec)["nodes"], request_totals(spec)["tasks"]) == (1, slots)
    if slots < 16:
        assert any(f"with -n {slots}: every slot fits on one host" in n
                   for n in spec.metadata["parse_notes"])
    for target in SCRIPT_DIALECTS:
        script, _, _ = translate(text, target, "lsf")  # none refused, none larger
        back = request_totals(get_script_dialect(target).parse_script(script))
        assert back["tasks"] in (slots, None) and (back["cpus"] or 0) <= slots, target
    assert "span[ptile=16]" in translate(text, "lsf", "lsf")[0]


def test_lsf_ptile_with_slots_still_spreads_them() -> None:
    from diamond_jupyter.dialects.translate import request_totals

    text = '#!/bin/bash\n#BSUB -R "span[ptile=16]"\n#BSUB -n 48\n./a\n'  # -n after the -R
    spec = get_script_dialect("lsf").parse_script(text)
    assert (request_totals(spec)["nodes"], spec.resources.tasks_per_node) == (3, 16)
    assert "parse_notes" not in spec.metadata and "lsf_ptile_at" not in spec.metadata


# ---------------------------------------------------------------- Lmod hierarchy prerequisites

# `module -t avail` shows the Core compilers; `module -t spider` also the modules a compiler
# (and an MPI) unlock; `module spider NAME/VERSION` says what to load first (Lmod 8.7's
# layout: the sentence wraps, a blank line, one line per choice, a blank line, Help)
_SPIDER_HDF5 = """
-----------------------------------------------------------------------------
  hdf5: hdf5/1.14.3
-----------------------------------------------------------------------------

    You will need to load all module(s) on any one of the lines below before the
    "hdf5/1.14.3" module is available to load.

      gcc/13.2.0  openmpi/4.1.6
      intel/2021.10.0  intel-oneapi-mpi/2021.10.0

    Help:
      HDF5 is a data model, library, and file format.
"""
_SPIDER_OPENMPI = (  # unwrapped: on one long line
    "\n    You will need to load all module(s) on any one of the lines below before the "
    '"openmpi/4.1.6" module is available to load.\n\n      gcc/13.2.0\n'
    "      intel/2021.10.0\n")
_LMOD = ("system lmod 8.7.20\n/opt/spack/lmod/Core:\ngcc/13.2.0 (D)\ngcc/12.3.0\n"
         "intel/2021.10.0\n@@spider\ngcc/12.3.0\ngcc/13.2.0\nhdf5/1.14.3\n"
         "intel-oneapi-mpi/2021.10.0\nintel/2021.10.0\nopenmpi/4.1.6\n"
         f"@@requires hdf5/1.14.3\n{_SPIDER_HDF5}@@requires openmpi/4.1.6\n{_SPIDER_OPENMPI}")


def _site():
    from diamond_jupyter.capabilities import SiteCapabilities
    from diamond_jupyter.discovery import parse_module_list

    system, _, mods = parse_module_list(_LMOD)
    return SiteCapabilities(site="spack", software=mods, module_system=system)


def test_spider_prerequisites_are_read() -> None:
    """Each choice line of `module spider NAME/VERSION` is a set of modules to load first;
    the lines of its answer are not modules of the site."""
    caps = _site()
    by = {m.full: m.requires for m in caps.software}
    assert by["hdf5/1.14.3"] == [["gcc/13.2.0", "openmpi/4.1.6"],
                                 ["intel/2021.10.0", "intel-oneapi-mpi/2021.10.0"]]
    assert by["openmpi/4.1.6"] == [["gcc/13.2.0"], ["intel/2021.10.0"]]
    assert by["gcc/13.2.0"] == [] and len(by) == 6


@pytest.mark.parametrize(("body", "missing"), [
    ("module load gcc/13 openmpi/4 hdf5", []),
    ("module load gcc openmpi hdf5/1.14", []),  # gcc: the site's default, 13.2.0
    ("ml intel\nml intel-oneapi-mpi\nml hdf5", []),  # the other line of choices
    ("module load hdf5", ["hdf5"]),
    ("module load openmpi hdf5", ["openmpi", "hdf5"]),
    ("module load gcc/12 openmpi/4 hdf5", ["openmpi", "hdf5"]),  # not under gcc 12 here
    ("module load hdf5 gcc/13 openmpi/4", ["hdf5"]),  # loaded too early
])
def test_hierarchy_prerequisites_decide_whether_a_module_loads(body: str,
                                                               missing: list[str]) -> None:
    """A module Lmod shows only under a compiler and an MPI is there for a script that loads
    them first, and missing, naming them, for one that does not (it was judged there either
    way: `module load hdf5` alone fails on such a site)."""
    from diamond_jupyter.needs import needs_of
    from diamond_jupyter.software import needs_reasons

    spec = get_script_dialect("slurm").parse_script(f"#!/bin/bash\n#SBATCH -n 1\n{body}\n./a\n")
    reasons = needs_reasons(needs_of(spec), _site())
    assert [r.split("'")[1].split("/")[0] for r in reasons] == missing
    for r in reasons:
        assert "loaded first" in r and "Lmod" in r
    if "hdf5" in missing:
        hdf5 = next(r for r in reasons if r.startswith("software 'hdf5'"))
        assert "gcc/13.2.0 + openmpi/4.1.6 or intel/2021.10.0 + intel-oneapi-mpi" in hdf5


def test_discovery_asks_spider_for_each_hidden_module() -> None:
    """The discovery command, run by bash with a stand-in `module` (Lmod prints to stderr):
    each module spider lists and avail does not is asked what it needs, the others not."""
    import subprocess

    from diamond_jupyter.discovery import discovery_script, parse_module_list, split_sections

    fake = (
        'module() { case "$1 $2" in\n'
        '  "-t avail"|"--show_hidden -t") printf "/opt/Core:\\ngcc/13.2.0 (D)\\n" >&2 ;;\n'
        '  "-t spider") printf "gcc/\\ngcc/13.2.0\\nhdf5/\\nhdf5/1.14.3\\n" >&2 ;;\n'
        '  "spider hdf5/1.14.3") printf "%s" "$HDF5_ANSWER" >&2 ;;\n'
        '  "spider "*) echo "asked about $2" >&2 ;;\n'
        'esac; }\nexport LMOD_VERSION=8.7.20\n')
    r = subprocess.run(["bash", "-c", fake + discovery_script({})], capture_output=True,
                       text=True, timeout=60, env={"PATH": "/usr/bin:/bin",
                                                   "HDF5_ANSWER": _SPIDER_HDF5})
    modules = split_sections(r.stdout)[0]["modules"]
    assert "@@requires hdf5/1.14.3" in modules and "asked about" not in modules
    _, _, mods = parse_module_list(modules)
    assert {m.full: m.requires for m in mods} == {
        "gcc/13.2.0": [],
        "hdf5/1.14.3": [["gcc/13.2.0", "openmpi/4.1.6"],
                        ["intel/2021.10.0", "intel-oneapi-mpi/2021.10.0"]]}


# ---------------------------------------------------------------- logs of a file appended to

def _run_wrapper(tmp_path, redirect: str) -> str:
    import subprocess

    from diamond_jupyter.wrapper import wrapper_prologue

    jd = tmp_path / "jobs" / "0a0b0c0d0e0f"
    jd.mkdir(parents=True, exist_ok=True)
    (jd / "secret").write_text("ab" * 32 + "\n")
    body = wrapper_prologue(str(tmp_path / "events.log"), "0a0b0c0d0e0f", str(jd / "secret"))
    (tmp_path / "job.sh").write_text(body + "echo this-run\necho this-err >&2\n")
    subprocess.run(["bash", "-c", f"bash {tmp_path / 'job.sh'} {redirect}"], timeout=30,
                   check=True, cwd=tmp_path)
    return (jd / "output.offsets").read_text() if (jd / "output.offsets").exists() else ""


def test_the_wrapper_notes_how_long_the_output_files_were(tmp_path) -> None:
    """A job whose output file is appended to starts after what the file held: the wrapper
    notes that length once (a requeued run's output is the job's too)."""
    from diamond_jupyter.wrapper import parse_output_offsets

    (tmp_path / "out.log").write_text("an earlier job\n")
    note = _run_wrapper(tmp_path, ">> out.log 2>> err.log")
    assert parse_output_offsets(note) == {"stdout": len("an earlier job\n"), "stderr": 0}
    again = _run_wrapper(tmp_path, ">> out.log 2>> err.log")  # requeued: the first note holds
    assert again == note
    assert (tmp_path / "out.log").read_text().count("this-run") == 2


def test_the_wrapper_notes_nothing_for_output_to_a_pipe(tmp_path) -> None:
    assert _run_wrapper(tmp_path, "2>&1 | cat >/dev/null") == ""


def _local_fed(tmp_path):
    from one_site_engine import local_home_federation

    return local_home_federation(tmp_path), tmp_path / "home"


_EARLIER = "an earlier job's line\n"


@pytest.mark.parametrize(("source", "offsets", "shown", "note"), [
    # the wrapper's note: what the file held before is left out, and said so
    ("lsf", f"1 {len(_EARLIER)}\n", "this job's line\n", f"first {len(_EARLIER)} bytes"),
    # no note (output through a spool file, a site without the wrapper): a file appended
    # to is shown whole, with a warning that an earlier job's output may be in it
    ("lsf", None, "an earlier job's line\nthis job's line\n", "appended to"),
    # the wrapper could note nothing (a spool file, a pipe): the same warning
    ("lsf", "", "an earlier job's line\nthis job's line\n", "appended to"),
    ("sge", None, "an earlier job's line\nthis job's line\n", "appended to"),
    # a file the job truncates holds its own output only: no note
    ("slurm", None, "an earlier job's line\nthis job's line\n", None),
])
async def test_logs_of_an_appended_file_show_this_jobs_output(tmp_path, source: str,
                                                              offsets: str | None,
                                                              shown: str,
                                                              note: str | None) -> None:
    """`diamond logs` showed what an appended-to output file held before the job (an
    earlier run's lines) as if it were this job's output."""
    from diamond_jupyter.model import JobSpec

    fed, home = _local_fed(tmp_path)
    token = "abc123abc123"
    out = home / "run.log"
    out.write_text(_EARLIER + "this job's line\n")
    jd = home / ".diamond" / "jobs" / token
    jd.mkdir(parents=True)
    if offsets is not None:
        (jd / "output.offsets").write_text(offsets)
    try:
        fed.store.record_intent("here", token, JobSpec(script="true\n", stdout=str(out),
                                                       join_output=True,
                                                       source_dialect=source))
        job = fed.store.bind_native_id(token, "41")
        logs = await fed.logs(job.id)
        assert logs["stdout"] == shown and logs["missing"] == ""
        if note is None:
            assert logs["notes"] == ""
        else:
            assert note in logs["notes"] and str(out) in logs["notes"]
    finally:
        await fed.close()


def test_slurmrestd_request_of_an_appending_job_says_what_it_leaves_out() -> None:
    from diamond_jupyter.dialects.slurm_rest import job_description

    spec = get_script_dialect("lsf").parse_script("#!/bin/bash\n#BSUB -o /w/run.log\n./a\n")
    spec.working_directory = "/w"
    _, warnings = job_description(spec)
    assert any("appended to" in w and "JobFileAppend" in w for w in warnings)
    spec.output_mode = "truncate"
    assert not [w for w in job_description(spec)[1] if "JobFileAppend" in w]


@pytest.mark.parametrize("n", [1, 2**40 + 5, 2**64 - 1])
def test_a_wrapper_line_names_its_flux_job_in_any_spelling(n: int) -> None:
    """The wrapper reports $FLUX_JOB_ID as the job's shell sets it; the submit printed F58:
    every spelling of one id is that job (the KVS key and ASCII f were not)."""
    from diamond_jupyter.monitor import same_native

    for a in (_f58(n), _f58(n, "f"), str(n), hex(n), _dothex(n), "job." + _dothex(n)):
        assert same_native(a, _f58(n))
        assert not same_native(a, _f58(n + 1))


def test_discovery_asks_spider_about_a_bounded_number_of_modules() -> None:
    """A site with hundreds of hidden modules: at most SPIDER_ASKED are asked (each ask is a
    command; the whole discovery has a time limit), the rest load as if free to."""
    import subprocess

    from diamond_jupyter.discovery import (
        SPIDER_ASKED,
        discovery_script,
        parse_module_list,
        split_sections,
    )

    fake = (
        'module() { case "$1 $2" in\n'
        '  "-t avail"|"--show_hidden -t") printf "/opt/Core:\\ngcc/13.2.0\\n" >&2 ;;\n'
        '  "-t spider") for i in $(seq 1 150); do echo "lib$i/1.0"; done >&2 ;;\n'
        '  "spider "*) printf "\\n You will need to load all module(s) on any one of the '
        'lines below before the \\"%s\\" module is available to load.\\n\\n  gcc/13.2.0\\n" '
        '"$2" >&2 ;;\n'
        'esac; }\nexport LMOD_VERSION=8.7.20\n')
    r = subprocess.run(["bash", "-c", fake + discovery_script({})], capture_output=True,
                       text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    modules = split_sections(r.stdout)[0]["modules"]
    assert modules.count("@@requires ") == SPIDER_ASKED < 150
    mods = parse_module_list(modules)[2]
    assert len(mods) == 151
    assert sum(m.requires == [["gcc/13.2.0"]] for m in mods) == SPIDER_ASKED


def test_a_failed_note_does_not_stop_a_bash_e_job(tmp_path) -> None:
    """The note is the engine's, not the job's: where it cannot be written (here `mv` is
    missing from the PATH), a `bash -e` job still runs its body."""
    import shutil
    import subprocess

    from diamond_jupyter.wrapper import wrapper_prologue

    jd = tmp_path / "jd"
    jd.mkdir()
    (jd / "secret").write_text("ab" * 32 + "\n")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("cat", "date", "sha256sum", "stat"):  # everything the wrapper runs but mv
        (bin_ / tool).symlink_to(shutil.which(tool))
    script = wrapper_prologue(str(tmp_path / "events.log"), "0a0b0c0d0e0f",
                              str(jd / "secret")) + "echo body-ran\n"
    r = subprocess.run([shutil.which("bash"), "-e", "-c", script], capture_output=True,
                       text=True, timeout=30, cwd=tmp_path, env={"PATH": str(bin_)})
    assert "body-ran" in r.stdout and not (jd / "output.offsets").exists()


@pytest.mark.parametrize("door", ["shell", "rest"])
async def test_a_sites_tail_leaves_out_what_the_file_held_before(tmp_path, door: str) -> None:
    """Both kinds of site read a log after its first `start` bytes, bounded as before (the
    slurmrestd site's file door has no wrapper note, but takes the same call)."""
    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.site_kinds import make_site
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports.local import LocalTransport

    work = tmp_path / "work"
    work.mkdir()
    log = work / "run.log"
    log.write_text(_EARLIER + "one\ntwo\n")
    if door == "rest":
        site = make_site(SiteConfig(name="r", workdir=str(work), files={"kind": "local"},
                                    transport={"kind": "slurmrestd", "url": "http://127.0.0.1:9",
                                               "token_file": "/nonexistent"}))
    else:
        cfg = SiteConfig(name="s", transport=TransportConfig(kind="local"), workdir=str(work))
        site = Site(cfg, transport=LocalTransport("s", workdir=str(work)))
    try:
        n = len(_EARLIER)
        assert await site.tail(str(log), 100, start=n) == "one\ntwo\n"
        assert await site.tail(str(log), 1, start=n) == "two\n"
        assert await site.tail(str(log), 100, start=n, max_bytes=4) == "two\n"
        assert await site.tail(str(log), 100, start=10**6) == ""
        assert await site.tail(str(work / "none.log"), 100, start=n) is None
    finally:
        await site.close()


# ---------------------------------------------------------------- logs of a named pattern

@pytest.mark.parametrize(("pattern", "target", "array", "want", "why"), [
    ("/o/run-%x-%j.log", "slurm", False, "/o/run-sim-41.log", None),
    ("/o/run-%4j.log", "slurm", False, "/o/run-0041.log", None),  # padded as sbatch does
    ("/o/100%%-%j.log", "slurm", False, "/o/100%-41.log", None),
    ("/o/%A.log", "slurm", True, "/o/41.log", None),
    ("/o/%j.log", "slurm", True, None, "each array task's own job id"),
    ("/o/%A_%a.log", "slurm", True, None, "its array task's index"),
    ("/o/%u-%j.log", "slurm", False, None, "the user name"),
    ("/o/run-%j.log", "lsf", False, "/o/run-41.log", None),  # rendered as %J
    ("/o/run-%x.log", "lsf", False, "/o/run-%x.log", None),  # no LSF token: the name's own
    ("/o/run-%j.%a.log", "lsf", True, None, "its array task's index"),
    ("/o/run-%j.log", "pbs", False, "/o/run-%j.log", None),  # PBS expands none
    ("/o/%x.o%j", "sge", False, "/o/sim.o41", None),  # $JOB_NAME.o$JOB_ID
    ("/o/%x-%j.out", "flux", False, "/o/sim-41.out", None),  # {{name}}-{{id}}
])
def test_output_file_names_as_each_scheduler_writes_them(pattern: str, target: str,
                                                          array: bool, want: str | None,
                                                          why: str | None) -> None:
    from diamond_jupyter.dialects.scripts_common import output_file_name

    got = output_file_name(pattern, target, job_id="41", name="sim", array=array)
    assert got == ((want, None) if why is None else (pattern, why))


async def test_logs_of_a_job_whose_output_name_holds_its_id(tmp_path) -> None:
    """`#SBATCH --output=run-%x-%j.log`: `diamond logs` read the file `run-%x-%j.log`,
    which no scheduler writes, and said the log was missing. Now it reads the job's own
    file; a name only the running job knows (an array task's index) is said so."""
    from diamond_jupyter.model import ArraySpec, JobSpec

    fed, home = _local_fed(tmp_path)
    (home / "run-sim-41.log").write_text("the job's output\n")
    try:
        fed.store.record_intent("here", "abc123abc123", JobSpec(
            name="sim", script="true\n", stdout=str(home / "run-%x-%j.log"),
            join_output=True, source_dialect="slurm"))
        job = fed.store.bind_native_id("abc123abc123", "41")
        logs = await fed.logs(job.id)
        assert (logs["stdout"], logs["missing"]) == ("the job's output\n", "")
        fed.store.record_intent("here", "def456def456", JobSpec(
            name="sweep", script="true\n", stdout=str(home / "run-%A_%a.log"),
            join_output=True, array=ArraySpec(expression="1-4")))
        arr = fed.store.bind_native_id("def456def456", "42")
        logs = await fed.logs(arr.id)
        assert logs["stdout"] == "" and "array task's index" in logs["missing"]
        assert "diamond files" in logs["missing"]
    finally:
        await fed.close()
