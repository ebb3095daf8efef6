"""File staging written in batch scripts: PBS `-W stagein=`/`stageout=`, LSF `-f`, Slurm
burst buffer `#DW stage_in`/`stage_out`.

Before, each was kept as an unknown directive: its own scheduler staged the files, any other
ran the job on input never brought in (said "dropped"), and diamond's placer counted no
transfer time. Now the plain files become the job's diamond stage entries (moved by
diamond's transfers, held until they are there, measured by placement), each said
"carried" naming its line; what a stage entry cannot say stays as written and is reported;
a malformed entry, or a path climbing out with '..', is refused naming its line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_corpus import CORPUS, ROWS

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput, StageEntry

if TYPE_CHECKING:
    from diamond_jupyter.federation import Federation

HERE = Path(__file__).parent / "fixtures"


def _pbs(*lines: str) -> str:
    return "#!/bin/bash\n#PBS -N st\n#PBS -l select=1:ncpus=1\n" + "\n".join(lines) + \
        "\n./run\n"


def _lsf(*lines: str) -> str:
    return "#!/bin/bash\n#BSUB -J st\n#BSUB -n 1\n" + "\n".join(lines) + "\n./run\n"


def _parse(dialect: str, text: str):
    return get_script_dialect(dialect).parse_script(text)


def _notes(spec) -> list[str]:
    return spec.metadata.get("parse_notes", [])


# ------------------------------------------------------------------------------ PBS

def test_pbs_staging_lists_become_the_jobs_stage_entries():
    """A comma list in one -W, quoted or not, with other attributes beside it; a second -W
    adds to it. Each entry copies a directory whole, as PBS does (scp -r); a trailing '/'
    is dropped (it would copy `mesh` into `mesh/mesh`)."""
    spec = _parse("pbs", _pbs(
        '#PBS -W stagein="in.dat@fs01:/data/run7/in.dat,mesh/@fs01:/data/mesh/"',
        "#PBS -W umask=022,stageout=out.dat@fs01:/data/run7/out.dat,log.txt@arch:/logs/l.txt",
        "#PBS -W stagein=more.dat@fs02:~/more.dat"))
    assert spec.stage_in == [
        StageEntry(source="fs01:/data/run7/in.dat", destination="in.dat", recursive=True),
        StageEntry(source="fs01:/data/mesh", destination="mesh", recursive=True),
        StageEntry(source="fs02:~/more.dat", destination="more.dat", recursive=True)]
    assert spec.stage_out == [
        StageEntry(source="out.dat", destination="fs01:/data/run7/out.dat", recursive=True),
        StageEntry(source="log.txt", destination="arch:/logs/l.txt", recursive=True)]
    # the other attribute stays, alone
    assert [(d.option, d.value) for d in spec.unknown] == [("-W", "umask=022")]
    carried = [n for n in _notes(spec) if n.startswith("carried:")]
    assert len(carried) == 5
    assert carried[0].startswith("carried: line 4: 'in.dat@fs01:/data/run7/in.dat' as the "
                                 "job's stage-in fs01:/data/run7/in.dat -> in.dat")
    # kept apart too: the submit shows them with its warnings (`diamond submit`, the plan)
    assert spec.metadata["staging_notes"] == carried


def test_pbs_staging_beside_a_dependency_reads_both():
    spec = _parse("pbs", _pbs("#PBS -W stagein=a@fs01:/d/a,depend=afterok:12.srv"))
    assert spec.stage_in == [StageEntry(source="fs01:/d/a", destination="a", recursive=True)]
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [("afterok", ["12.srv"])]
    assert spec.unknown == []


@pytest.mark.parametrize("line", [
    "#PBS -W stagein=in.dat@fs01:/data/in.dat,depend=afterok:12.srv",
    "#PBS -W depend=afterok:12.srv,stagein=in.dat@fs01:/data/in.dat",
])
def test_pbs_to_pbs_translation_reads_a_dependency_beside_kept_staging(line):
    """A translation for PBS itself keeps the staging as written; a depend= on its line was
    kept with it unread (placement and the reports saw no parent), or, written first, kept
    as `depend=stagein=...`. Now the dependency is read wherever it stands and written in
    its own -W, the staging kept as written beside it, and both read back."""
    script, warnings, spec = translate(_pbs(line), "pbs", "pbs")
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [("afterok", ["12.srv"])]
    assert [(d.option, d.value) for d in spec.unknown] == [
        ("-W", "stagein=in.dat@fs01:/data/in.dat")]
    assert "#PBS -W depend=afterok:12.srv\n" in script
    assert "#PBS -W stagein=in.dat@fs01:/data/in.dat\n" in script
    assert not any("depend" in w or "stag" in w for w in warnings), warnings
    again = _parse("pbs", script)
    assert [(d.kind, d.job_ids) for d in again.dependencies] == [("afterok", ["12.srv"])]
    assert [e.source for e in again.stage_in] == ["fs01:/data/in.dat"]


def test_pbs_dependency_beside_a_staging_entry_kept_as_written_is_read():
    """At a submit an entry a stage entry cannot say (a variable in its path) is kept as
    written; the depend= of its line is read all the same, the other attributes kept."""
    spec = _parse("pbs", _pbs("#PBS -W stagein=a@fs01:/d/$PBS_JOBID/a,depend=afterany:7.srv"
                              ":8.srv,umask=022"))
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [
        ("afterany", ["7.srv", "8.srv"])]
    assert [(d.option, d.value) for d in spec.unknown] == [
        ("-W", "stagein=a@fs01:/d/$PBS_JOBID/a,umask=022")]


@pytest.mark.parametrize("target", ["slurm", "lsf", "flux", "sge"])
def test_pbs_staging_translated_for_another_scheduler_is_said_dropped_by_line(target):
    """A translation is submitted by hand: no directive of the other scheduler moves the
    files, so each entry is said dropped, naming its line and that a diamond submit of the
    original carries it; no "carried" note (nothing carries it there) and no summary line
    besides. The parsed job still holds the entries (`translate --json`)."""
    text = (HERE / "scripts_unseen19/pbs/W_stagein_stageout.pbs").read_text()
    script, warnings, spec = translate(text, target, "pbs")
    assert [(e.source, e.destination) for e in spec.stage_in] == [
        ("fs01:/data/run7/input.dat", "input.dat")]
    assert [(e.source, e.destination) for e in spec.stage_out] == [
        ("result.dat", "fs01:/data/run7/result.dat")]
    assert "stagein" not in script and "stageout" not in script
    staging = [w for w in warnings if "staging" in w]
    assert staging == [
        f"dropped: line 5: staging entry 'input.dat@fs01:/data/run7/input.dat' ({target} has "
        "no directive that moves it: submitted by hand the job runs without it; `diamond "
        "submit` of the original script moves it as the job's stage-in)",
        f"dropped: line 6: staging entry 'result.dat@fs01:/data/run7/result.dat' ({target} "
        "has no directive that moves it: submitted by hand the job runs without it; `diamond "
        "submit` of the original script moves it as the job's stage-out)"], warnings


def test_pbs_to_pbs_translation_keeps_the_staging_lines_as_written():
    """`diamond translate --to pbs` of a PBS script: qsub stages the files when the user
    submits the translation, so its -W stagein/stageout are written back (before, they were
    carried and left out: the job ran without its input), beside the other attributes of
    their line; nothing is said of them, and the job holds no diamond stage entry."""
    text = _pbs('#PBS -W stagein="in.dat@fs01:/data/in.dat,mesh/@fs01:/data/mesh/"',
                "#PBS -W umask=022,stageout=out.dat@fs01:/data/out.dat")
    script, warnings, spec = translate(text, "pbs", "pbs")
    assert "#PBS -W stagein=in.dat@fs01:/data/in.dat,mesh/@fs01:/data/mesh/\n" in script
    assert "#PBS -W umask=022,stageout=out.dat@fs01:/data/out.dat\n" in script
    assert spec.stage_in == [] and spec.stage_out == []
    assert not any("stag" in w for w in warnings), warnings
    # read back by PBS itself: the same staging, carried at a diamond submit
    again = _parse("pbs", script)
    assert [e.source for e in again.stage_in] == ["fs01:/data/in.dat", "fs01:/data/mesh"]
    assert [e.destination for e in again.stage_out] == ["fs01:/data/out.dat"]


def test_lsf_to_lsf_translation_keeps_the_file_lines_as_written():
    text = _lsf('#BSUB -f "in.dat > /tmp/in.dat" -f "res.dat <"', '#BSUB -f "log << log"')
    script, warnings, spec = translate(text, "lsf", "lsf")
    assert '-f "in.dat > /tmp/in.dat"' in script and '-f "res.dat <"' in script
    assert '-f "log << log"' in script
    assert spec.stage_in == [] and spec.stage_out == []
    assert not any("stag" in w for w in warnings), warnings
    _, warnings, spec = translate(text, "pbs", "lsf")
    assert [(e.source, e.destination) for e in spec.stage_in] == [("in.dat", "/tmp/in.dat")]
    assert any(w.startswith("dropped: line 4: staging entry 'in.dat > /tmp/in.dat' (pbs has "
                            "no directive") for w in warnings), warnings


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_a_submits_rendering_says_the_staging_once_as_carried(target):
    """At a submit the script's staging lines are said `carried: line N` (the submit's
    notes); the rendering for the site added "dropped: file staging ... is done by the
    engine", untrue and said twice. Now it adds nothing for them, and says an entry the
    face gave (no line said it) once: carried by diamond."""
    spec = _parse("pbs", _pbs("#PBS -W stagein=in.dat@fs01:/data/in.dat,"
                              "stageout=out.dat@fs01:/data/out.dat"))
    rendered = get_script_dialect(target).render_script(spec)
    assert not any("staging" in w for w in rendered.warnings), rendered.warnings
    spec.stage_in.append(StageEntry(source="alpha:/data/extra.dat", destination="extra.dat"))
    rendered = get_script_dialect(target).render_script(spec)
    assert [w for w in rendered.warnings if "staging" in w] == [
        "carried by diamond: file staging (1 in, 0 out): diamond moves the files before "
        f"and after the job, not a {target} directive"]
    assert not any(w.startswith("dropped") and "staging" in w for w in rendered.warnings)


def test_pbs_wildcard_entries_stay_with_pbs_and_are_reported_elsewhere():
    """PBS stages `*.out` itself; a stage entry names one path: that entry is kept as
    written (PBS gets it back; another scheduler's translation names it dropped), the plain
    entry of the same list is carried."""
    text = _pbs("#PBS -W stageout=*.out@fs01:/data/outs/,final.h5@fs01:/data/final.h5")
    spec = _parse("pbs", text)
    assert spec.stage_out == [StageEntry(source="final.h5", destination="fs01:/data/final.h5",
                                         recursive=True)]
    assert [(d.option, d.value) for d in spec.unknown] == [
        ("-W", "stageout=*.out@fs01:/data/outs/")]
    assert any("'*.out@fs01:/data/outs/' names files by a wildcard" in n for n in _notes(spec))
    script, _, _ = translate(text, "pbs", "pbs")
    assert "#PBS -W stageout=*.out@fs01:/data/outs/" in script
    _, warnings, _ = translate(text, "slurm", "pbs")
    assert any(w.startswith("dropped: #PBS -W stageout=*.out@fs01:/data/outs/")
               for w in warnings), warnings


@pytest.mark.parametrize("entry, why", [
    ("in.dat@fs01:/data/$PBS_JOBID/in.dat", "holds a variable"),
    ("<input file>@fs01:/data/in.dat", "template placeholder"),
    ("in.dat@fs01:/data/{{ run }}/in.dat", "template placeholder"),
])
def test_pbs_staging_path_not_yet_a_path_is_kept_not_carried(entry, why):
    spec = _parse("pbs", _pbs(f'#PBS -W stagein="{entry}"'))
    assert spec.stage_in == []
    assert [d.value for d in spec.unknown] == [f"stagein={entry}"]
    assert any(why in n for n in _notes(spec)), _notes(spec)


@pytest.mark.parametrize("value, problem", [
    ("stagein=in.dat", "stagein entry 'in.dat' in `#PBS -W stagein=in.dat` is not a file"),
    ("stagein=in.dat@fs01", "stagein entry 'in.dat@fs01'"),
    ("stagein=in.dat@:/data/in.dat", "stagein entry 'in.dat@:/data/in.dat'"),
    ("stageout=@fs01:/data/x", "stageout entry '@fs01:/data/x'"),
    ("stagein=a@fs01:/d/a,,b@fs01:/d/b", "stagein entry ''"),
    ("stagein=", "stagein with no file"),
])
def test_malformed_pbs_staging_is_refused_naming_the_line(value, problem):
    with pytest.raises(BadInput) as err:
        _parse("pbs", _pbs(f"#PBS -W {value}"))
    msg = str(err.value)
    assert msg.startswith("line 4: ") and problem in msg, msg
    assert "execution_path@storage_host:storage_path" in msg


@pytest.mark.parametrize("entry", ["../../.ssh/authorized_keys@fs01:/data/k",
                                   "in.dat@fs01:/data/../../etc/shadow",
                                   "out/../../x@fs01:/data/x"])
def test_pbs_staging_path_climbing_out_is_refused(entry):
    with pytest.raises(BadInput, match=r"^line 4: staging path .* climbs out with '\.\.'"):
        _parse("pbs", _pbs(f"#PBS -W stagein={entry}"))


# ------------------------------------------------------------------------------ LSF

def test_lsf_files_become_the_jobs_stage_entries():
    """Each operator: > in before the job, < back after it, >< and <> both; the remote name
    defaults to the local one; several -f on a line and over lines."""
    spec = _parse("lsf", _lsf('#BSUB -f "in.dat > /tmp/in.dat" -f "res.dat < out/res.dat"',
                              '#BSUB -f "state.chk >< state.chk"',
                              "#BSUB -f 'table.csv <>'",
                              '#BSUB -f "params.json >"'))
    assert spec.stage_in == [
        StageEntry(source="in.dat", destination="/tmp/in.dat"),
        StageEntry(source="state.chk", destination="state.chk"),
        StageEntry(source="table.csv", destination="table.csv"),
        StageEntry(source="params.json", destination="params.json")]
    assert spec.stage_out == [
        StageEntry(source="out/res.dat", destination="res.dat"),
        StageEntry(source="state.chk", destination="state.chk"),
        StageEntry(source="table.csv", destination="table.csv")]
    assert spec.unknown == []
    assert sum(n.startswith("carried: line 4:") for n in _notes(spec)) == 2


@pytest.mark.parametrize("value, why", [
    ("run.log << run.log", "appends the job's file to the local one"),
    ("out.%J > out.%J", "holds %J or %I"),
    ("part_*.dat > parts", "wildcard"),
])
def test_lsf_files_a_stage_entry_cannot_say_stay_with_lsf(value, why):
    text = _lsf(f'#BSUB -f "{value}"')
    spec = _parse("lsf", text)
    assert spec.stage_in == [] and spec.stage_out == []
    assert [(d.option, d.value) for d in spec.unknown] == [("-f", value)]
    assert any(n.startswith(f"kept: line 4: staging entry {value!r} ") and why in n
               for n in _notes(spec)), _notes(spec)
    _, warnings, _ = translate(text, "slurm", "lsf")
    assert any(w.startswith(f'dropped: #BSUB -f "{value}"') for w in warnings), warnings


@pytest.mark.parametrize("value", ["in.dat", "in.dat>in.dat", "a > b > c", "a => b", ""])
def test_malformed_lsf_file_is_refused_naming_the_line(value):
    with pytest.raises(BadInput) as err:
        _parse("lsf", _lsf(f'#BSUB -f "{value}"'))
    msg = str(err.value)
    assert msg.startswith(f"line 4: -f {value!r} in `#BSUB -f \"{value}\"` is not a file to "
                          "stage; expected \"local_file OP [remote_file]\""), msg


@pytest.mark.parametrize("value", ["../secrets.txt > s.txt", "in.dat > ../../.bashrc"])
def test_lsf_file_climbing_out_is_refused(value):
    with pytest.raises(BadInput, match=r"^line 4: staging path .* climbs out with '\.\.'"):
        _parse("lsf", _lsf(f'#BSUB -f "{value}"'))


# ------------------------------------------------------------------------------ Slurm

@pytest.mark.parametrize("line, problem", [
    ("#DW stage_in destination=$DW_JOB_STRIPED/in type=file", "no source"),
    ("#DW stage_out source=$DW_JOB_STRIPED/out type=file", "no destination"),
    ("#DW stage_in source=/a destination=$DW_JOB_STRIPED/a type=dir",
     "type 'dir'; expected file, directory or list"),
    ("#DW stage_in source=/a source=/b destination=$DW_JOB_STRIPED/a", "source given twice"),
    ("#DW stage_in source=/a destination= type=file", "'destination=' is not a staging "
                                                     "setting"),
    ("#DW stage_in /a $DW_JOB_STRIPED/a", "'/a' is not a staging setting"),
])
def test_malformed_burst_buffer_staging_is_refused_naming_the_line(line, problem):
    text = f"#!/bin/bash\n#SBATCH -n 1\n#DW jobdw capacity=10GB access_mode=striped " \
           f"type=scratch\n{line}\nsrun ./a\n"
    with pytest.raises(BadInput) as err:
        _parse("slurm", text)
    assert str(err.value).startswith(f"line 4: `{line}`: {problem}"), str(err.value)


def test_burst_buffer_staging_after_the_first_command_is_not_read():
    """sbatch reads none after the first command: a comment there is no directive."""
    text = "#!/bin/bash\n#SBATCH -n 1\necho go\n#DW stage_in nonsense\n"
    assert _parse("slurm", text).stage_in == []


@pytest.mark.parametrize("target", ["pbs", "lsf", "flux", "sge"])
def test_burst_buffer_staging_is_reported_with_why_it_is_not_carried(target):
    """The buffer lives on the Slurm cluster the script was written for, and so does each
    staged path: the line names no machine diamond reaches, so the report says which path
    and how to have diamond move it. The capacity pool and the persistent buffer are named
    dropped as before."""
    text = (HERE / "scripts_unseen19/slurm/bb_datawarp_stage_in.sbatch").read_text()
    _, warnings, spec = translate(text, target, "slurm")
    assert spec.stage_in == [] and spec.stage_out == []
    by_line = {w.split(":")[1].strip(): w for w in warnings if "burst buffer directive" in w}
    assert set(by_line) == {"line 6", "line 7", "line 8", "line 9"}
    assert "not carried" not in by_line["line 6"] + by_line["line 7"]
    assert "not carried as the job's diamond stage entry: /lus/proj/input is on the file " \
           "system of the cluster the script was written for" in by_line["line 8"]
    assert "/lus/proj/output is on the file system" in by_line["line 9"]
    assert "stage_in/stage_out SITE:PATH" in by_line["line 9"]


def test_burst_buffer_list_staging_says_its_list_is_not_read():
    text = ("#!/bin/bash\n#SBATCH -n 1\n#DW jobdw capacity=1GB access_mode=striped "
            "type=scratch\n#DW stage_in source=/lus/p/files.txt destination=$DW_JOB_STRIPED "
            "type=list\nsrun ./a\n")
    _, warnings, _ = translate(text, "pbs", "slurm")
    assert any(w.startswith("dropped: line 4:") and "listed in a file on that cluster" in w
               for w in warnings), warnings


# ------------------------------------------------------------------------------ corpus

@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_corpus_scripts_gain_no_staging_they_do_not_write(row):
    """The real-world corpus writes no staging: reading it invents none, and every script
    still parses (the staging reader refuses nothing there)."""
    text = (CORPUS / row["file"]).read_bytes().decode("utf-8", errors="replace")
    try:
        spec = _parse(row["dialect"], text)
    except BadInput as exc:
        assert "stag" not in str(exc) and "climbs out" not in str(exc), exc
        return
    assert spec.stage_in == [] and spec.stage_out == []
    assert not any(n.startswith("carried:") for n in _notes(spec))


# ------------------------------------------------------------------------------ engine

def _local_fed_with_big_file(tmp_path: Path) -> Federation:
    """An engine over one local site `here` whose server root (`tmp_path/root`) holds
    big.bin, 300 kB."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    root = tmp_path / "root"
    root.mkdir()
    (root / "big.bin").write_bytes(b"x" * 300_000)
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"))]),
        store=Store(tmp_path / "s.sqlite"))
    fed.server_root = root
    return fed


async def test_carried_stage_in_is_measured_for_placement(tmp_path):
    """The placer counts a carried stage-in: its bytes by where they are (an LSF local file
    on the server, a PBS storage host that is a site), measured from the real files."""
    from diamond_jupyter.federation import Federation

    fed = _local_fed_with_big_file(tmp_path)
    far = tmp_path / "far"
    far.mkdir()
    (far / "mesh.dat").write_bytes(b"y" * 70_000)
    try:
        lsf = Federation.parse(_lsf('#BSUB -f "big.bin > big.bin"'))
        assert (await fed.stage_data(lsf)).sources == {None: 300_000}
        pbs = Federation.parse(_pbs(f"#PBS -W stagein=mesh.dat@here:{far}/mesh.dat"))
        assert (await fed.stage_data(pbs)).sources == {"here": 70_000}
    finally:
        await fed.close()


def test_a_storage_host_that_is_a_sites_ssh_host_is_that_site(tmp_path):
    """PBS names a machine (`in@fs01:/data/in`), diamond a site: a site whose SSH host is
    that machine (its full name or first label) takes it; another machine is refused as an
    unknown site before anything moves."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store
    from diamond_jupyter.transfer import parse_location

    fed = Federation(FederationConfig(sites=[
        SiteConfig(name="archive", transport=TransportConfig(kind="ssh",
                                                             host="fs01.hpc.example")),
        SiteConfig(name="here", transport=TransportConfig(kind="local"),
                   workdir=str(tmp_path / "wd"))]), store=Store(tmp_path / "s.sqlite"))
    spec = Federation.parse(_pbs("#PBS -W stagein=in.dat@fs01:/data/in.dat,"
                                 "b.dat@fs01.hpc.example:/data/b.dat,c.dat@here:/c.dat"))
    locations = [parse_location(e.source, fed.sites) for e in spec.stage_in]
    assert [(loc.site, loc.path) for loc in locations] == [
        ("archive", "/data/in.dat"), ("archive", "/data/b.dat"), ("here", "/c.dat")]
    with pytest.raises(BadInput, match=r"unknown site 'fs09' in 'fs09:/data/in.dat'"):
        parse_location("fs09:/data/in.dat", fed.sites)


def _two_site_engine(tmp_path):
    """An engine over a Slurm site on this machine (its scheduler commands never reached
    here) and an SSH site whose host is fs01.hpc.example (never connected)."""
    from local_slurm import LocalSlurmQueue

    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    here = LocalSlurmQueue(tmp_path, "here").site.cfg
    return Federation(FederationConfig(sites=[here, SiteConfig(
        name="archive", transport=TransportConfig(kind="ssh", host="fs01.hpc.example"))]),
        store=Store(tmp_path / "s.sqlite"))


@pytest.mark.parametrize("lines, refusal", [
    (["#PBS -W stagein=in.dat@fs01:/data/in.dat,b.dat@fs09:/data/b.dat"],
     "line 4: staging entry 'b.dat@fs09:/data/b.dat' in `#PBS -W stagein=in.dat@fs01:/data/"
     "in.dat,b.dat@fs09:/data/b.dat`: host 'fs09' is no site's name nor its SSH host; "
     "expected after '@' a site's name or SSH host (known: here, archive "
     "(fs01.hpc.example)); or add a site whose transport host is fs09"),
    (["#PBS -W umask=022", "#PBS -W stageout=out.dat@tape:/arch/out.dat"],
     "line 5: staging entry 'out.dat@tape:/arch/out.dat' in `#PBS -W stageout=out.dat@tape:"
     "/arch/out.dat`: host 'tape' is no site's name nor its SSH host"),
])
async def test_a_staging_host_that_is_no_site_is_refused_at_submit_naming_the_line(
        tmp_path, lines, refusal):
    """Before, `unknown site 'fs09' in 'fs09:/data/b.dat' (known: ...)`: no line, and
    nothing of what the host may be. Now the line and the entry, and what is accepted;
    refused before anything is recorded or sent."""
    from diamond_jupyter.federation import Federation

    fed = _two_site_engine(tmp_path)
    try:
        spec = Federation.parse(_pbs(*lines))
        with pytest.raises(BadInput) as err:
            await fed.submit(spec, "here")
        assert str(err.value).startswith(refusal), str(err.value)
        assert fed.store.list_jobs() == []
    finally:
        await fed.close()


async def test_an_lsf_local_file_naming_no_site_is_refused_naming_the_line(tmp_path):
    from diamond_jupyter.federation import Federation

    fed = _two_site_engine(tmp_path)
    try:
        spec = Federation.parse(_lsf('#BSUB -f "fs09:/data/in.dat > in.dat"'))
        with pytest.raises(BadInput) as err:
            await fed.submit(spec, "here")
        assert str(err.value) == (
            "line 4: staging entry 'fs09:/data/in.dat > in.dat' in `#BSUB -f \"fs09:/data/"
            "in.dat > in.dat\"`: host 'fs09' is no site's name nor its SSH host; expected a "
            "local path on this server (no HOST: before it), or a site's name or SSH host "
            "before ':' (known: here, archive (fs01.hpc.example)); or add a site whose "
            "transport host is fs09")
    finally:
        await fed.close()


async def test_a_staging_host_of_two_sites_asks_for_the_sites_name(tmp_path):
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    doors = [SiteConfig(name=n, transport=TransportConfig(kind="ssh", host="fs01.hpc.example"))
             for n in ("arch1", "arch2")]
    fed = Federation(FederationConfig(sites=[*doors, SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"))]),
        store=Store(tmp_path / "s.sqlite"))
    try:
        spec = Federation.parse(_pbs("#PBS -W stagein=in.dat@fs01:/data/in.dat"))
        with pytest.raises(BadInput, match=r"^line 4: .*host 'fs01' is the SSH host of "
                                           r"several sites \(arch1, arch2\): write the entry "
                                           r"with the site's name in its place \(e\.g\. "
                                           r"arch1:/data/in\.dat\)"):
            fed.check_submittable(spec)
    finally:
        await fed.close()


# ------------------------------------------------------------------------------ workflow

STAGED_WORKFLOW = """\
name: staged
steps:
  - name: prep
    site: alpha
    script: "#!/bin/bash\\nhead -c 10 /dev/urandom > out.bin\\n"
  - name: train
    site: torque
    needs: [prep]
    inputs: [{from: prep, path: out.bin}]
    script: "{script}"
"""
STAGED_STEP = ("#!/bin/bash\n#PBS -l select=1:ncpus=1\n"
               "#PBS -W stagein=mesh.dat@fs01:/data/mesh.dat\ncat mesh.dat out.bin\n")


async def _past_moving(eng, wid: str, step: str) -> str:
    """The step's phase once its upstream's output has landed (ready, or released)."""
    while (now := eng.store.get_workflow(wid).step(step).phase) not in ("ready", "released"):
        eng.changed.clear()
        await eng.changed.wait()
    return now


async def test_a_workflow_steps_staging_lines_are_its_stage_entries_and_it_waits_for_them(
        tmp_path):
    """A step's script is read as a plain job's: its staging line becomes the same stage
    entry. Held for its upstream's output (a site without gates), the step was released as
    soon as that output landed, its own stage-in perhaps still copying: the job started
    without mesh.dat. Now it stays ready, and is released once its stage-in is done (the
    stage.in.done event moves the workflow on), as the staging releases a plain job."""
    from test_workflow_gate import SITES, Ops, complete, engine_with, phase

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import Event
    from diamond_jupyter.workflow.model import load_workflow

    plain = Federation.parse(STAGED_STEP)
    text = STAGED_WORKFLOW.replace("{script}", STAGED_STEP.replace("\n", "\\n"))
    async for eng, ops in engine_with(Ops, tmp_path):
        wid = await eng.run(load_workflow(text, sites=SITES))
        [train] = ops.of("train")
        assert train["hold"] is True
        assert train["spec"].stage_in == plain.stage_in == [
            StageEntry(source="fs01:/data/mesh.dat", destination="mesh.dat", recursive=True)]
        await complete(eng, ops, "prep", wid)
        assert await asyncio.wait_for(_past_moving(eng, wid, "train"), 10) == "ready"
        await eng.advance(wid)
        assert eng.store.get_workflow(wid).step("train").phase == "ready"
        assert ops.releases == []  # not before its own input
        job = ops.store.job_by_token(train["token"])
        done = ops.store.append_event(Event(kind="stage.in.done", job_id=job.id,
                                            site="torque", data={"transfers": []}))
        eng._on_event(done)
        await phase(eng, wid, "train", "released")
        assert ops.releases == [job.id]


async def test_a_workflow_steps_own_stage_in_is_measured_for_its_placement(tmp_path):
    """A plain job's placement counts its carried stage-in; a step's counted only the
    workflow's inputs, so a step staging 300 kB from the server was placed as if it staged
    nothing. Now both: the inputs from the upstream's site and the step's own bytes."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.federation_workflow import _Ops

    fed = _local_fed_with_big_file(tmp_path)
    given: list = []

    async def place(spec, **kw):  # what the facade's placement is asked, recorded
        given.append(kw["stage_data"])
        raise BadInput("recorded")
    fed.place = place
    try:
        step = Federation.parse(_lsf('#BSUB -f "big.bin > big.bin"'))
        with pytest.raises(BadInput, match="recorded"):
            await _Ops(fed).place(step, {"here": 1_000}, set())
        assert given[0].sources == {"here": 1_000, None: 300_000}
    finally:
        await fed.close()


# ------------------------------------------------------------------------------ test bed

@pytest.mark.testbed
async def test_a_pbs_scripts_staging_moves_with_the_job_on_a_slurm_site(testbed_fed):
    """A PBS script whose files live on alpha runs on beta (Slurm, which has no -W stagein):
    diamond brings its input before the job starts and takes its output back after it,
    and the submit says what it carried."""
    import secrets

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobState

    fed = testbed_fed
    d = f"xfer-test/{secrets.token_hex(4)}"
    alpha = fed.site("alpha").transport
    await alpha.run(["sh", "-c", f"mkdir -p {d} && printf 'staged words' > {d}/in.txt"],
                    check=True, timeout=60)
    spec = Federation.parse(
        "#!/bin/bash\n#PBS -N pbsstaged\n#PBS -l select=1:ncpus=1\n"
        "#PBS -l walltime=00:05:00\n"
        f"#PBS -W stagein=in.txt@alpha:{d}/in.txt,stageout=out.txt@alpha:{d}/out.txt\n"
        "tr a-z A-Z < in.txt > out.txt\n")
    job = await fed.submit(spec, "beta")
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.COMPLETED, done.reason
    async for ev in fed.events(since=0):
        if ev.kind in ("stage.out.done", "stage.out.failed"):
            assert ev.kind == "stage.out.done", ev.data
            break
    back = await alpha.run(["cat", f"{d}/out.txt"], check=True, timeout=60)
    assert back.stdout == "STAGED WORDS"
    notes = fed.submit_notes(job.id)
    assert any(n.startswith(f"carried: line 5: 'in.txt@alpha:{d}/in.txt' as the job's "
                            "stage-in") for n in notes), notes
    await alpha.run(["rm", "-rf", d])
