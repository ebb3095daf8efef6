"""Follow-ups of this session's sweeps: what a scheduler, ssh or a log reader takes that the
engine wrote or read otherwise.

PBS Pro's qsub refuses a -J range whose end is not past its start (`-J 5`, `-J 5-5`: "illegal
-J value"), so a one-task array was written as a job PBS Pro would not take. Grid Engine's
execd expands $JOB_ID, $TASK_ID ... in -o/-e paths by matching the name as a prefix and
knows no braces: `$JOB_ID_$TASK_ID` is right as written, `${JOB_ID}` is kept in the file's
name (it was read as the job id). ssh refuses an ssh_config keyword it does not know unless
IgnoreUnknown names it (a word near no keyword was passed over). A known_hosts file saved
with a byte-order mark: OpenSSH (9.2, `ssh-keygen -F`) does not read its first line as the
host's, so neither does the engine; a revocation on that line is honoured all the same. An
SWF job line shorter than the log's other 18-field lines, and a negative think time other
than -1, were read without a word."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest
from sweep_helpers import looked_up, swf_line

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.trace import read_swf
from diamond_jupyter.transports import HostKeyError
from diamond_jupyter.transports.ssh_auth import HostKeyVerifier, HostSpec


def _script(line: str) -> str:
    return f"#!/bin/bash\n{line}\n./app\n"


# -- 1. a one-task array for PBS Pro ---------------------------------------------------------

@pytest.mark.parametrize(("array", "written"), [
    ("5", "5-6:2"), ("5-5", "5-6:2"), ("0", "0-1:2"), ("7%2", "7-8:2%2"), ("5,5", "5-6:2"),
    ("3-3:4", "3-4:2")])
def test_a_one_task_array_is_a_range_pbs_pro_takes(array: str, written: str) -> None:
    """X-(X+1):2 holds X alone and has its end past its start, as qsub's -J check asks."""
    script, warnings, _ = translate(_script(f"#SBATCH --array={array}"), "pbs", "slurm")
    assert f"#PBS -J {written}\n" in script, script
    assert not [w for w in warnings if "array" in w], warnings
    back = get_script_dialect("pbs").parse_script(script).array
    assert back is not None and back.expression == written
    lo, _, rest = written.partition("%")[0].partition("-")
    hi, step = rest.split(":")
    assert list(range(int(lo), int(hi) + 1, int(step))) == [int(array.split("-")[0]
                                                                 .split(",")[0].split("%")[0])]


@pytest.mark.parametrize("array", ["1-10", "1-10:20", "2-8:3%2"])
def test_an_array_of_a_range_is_written_as_it_was(array: str) -> None:
    script, _, _ = translate(_script(f"#SBATCH --array={array}"), "pbs", "slurm")
    assert f"#PBS -J {array}\n" in script


def test_torque_keeps_its_one_index() -> None:
    script, _, _ = translate(_script("#PBS -t 5\n#PBS -l nodes=1:ppn=2"), "pbs", "pbs")
    assert "#PBS -t 5\n" in script


# -- 2. Grid Engine's pseudo variables in -o/-e paths ---------------------------------------

@pytest.mark.parametrize(("line", "neutral"), [
    ("#$ -o out.$JOB_ID_$TASK_ID.log", "out.%j_%a.log"),  # `_` after a name: a character
    ("#$ -o $JOB_NAME_$JOB_ID", "%x_%j"),
    ("#$ -o $USERNAME.log", "%uNAME.log"),  # $USER, then NAME
])
def test_a_name_followed_by_letters_is_the_name_then_the_letters(line: str,
                                                                 neutral: str) -> None:
    spec = get_script_dialect("sge").parse_script(_script(f"#$ -t 1-3\n{line}"))
    assert spec.stdout == neutral
    script, _, _ = translate(_script(f"#$ -t 1-3\n{line}"), "sge", "sge")
    assert f"{line}\n" in script


def test_slurm_tokens_reach_grid_engine_in_the_form_it_expands() -> None:
    script, _, _ = translate(_script("#SBATCH --array=1-3\n#SBATCH -o out_%j_%a_%x.log"),
                             "sge", "slurm")
    assert "#$ -o out_$JOB_ID_$TASK_ID_$JOB_NAME.log\n" in script


def test_a_braced_name_is_kept_in_the_files_name_and_said() -> None:
    """Grid Engine writes `out.${JOB_ID}` as those characters; it was read as the job id (and
    a translation to Slurm wrote %j, another file)."""
    text = _script("#$ -t 1-3\n#$ -o out.${JOB_ID}.${TASK_ID}\n#$ -e $JOB_ID.err")
    spec = get_script_dialect("sge").parse_script(text)
    assert (spec.stdout, spec.stderr) == ("out.${JOB_ID}.${TASK_ID}", "%j.err")
    script, warnings, _ = translate(text, "slurm", "sge")
    assert "#SBATCH --output=out.${JOB_ID}.${TASK_ID}\n" in script
    said = [w for w in warnings if "is not expanded by Grid Engine" in w]
    assert said == [
        "line 3: ${JOB_ID} in -o out.${JOB_ID}.${TASK_ID} is not expanded by Grid Engine (it "
        "expands $JOB_ID, without braces); the file's name holds it as written",
        "line 3: ${TASK_ID} in -o out.${JOB_ID}.${TASK_ID} is not expanded by Grid Engine (it "
        "expands $TASK_ID, without braces); the file's name holds it as written"], warnings
    assert "#$ -o out.${JOB_ID}.${TASK_ID}\n" in translate(text, "sge", "sge")[0]


def test_home_is_matched_as_grid_engine_matches_it() -> None:
    """`$HOME_logs` is the home directory then `_logs` (it was not said); `${HOME}` is no
    home directory to Grid Engine (it was said to be one)."""
    _, warnings, _ = translate(_script("#$ -o $HOME_logs/x.out"), "slurm", "sge")
    assert [w for w in warnings if "$HOME in output path '$HOME_logs/x.out'" in w]
    _, warnings, _ = translate(_script("#SBATCH -o ${HOME}/x.out"), "sge", "slurm")
    assert not [w for w in warnings if "$HOME" in w], warnings


# -- 3. an ssh_config keyword ssh does not know ---------------------------------------------

def _looked_up(tmp_path: Path, text: str) -> str:
    return looked_up(tmp_path, text).hostname


@pytest.mark.parametrize("word", ["XAuthorityMagic", "PreferIPv6", "ForwardGPG"])
def test_a_keyword_near_none_is_refused_naming_file_and_line(tmp_path: Path,
                                                             word: str) -> None:
    with pytest.raises(BadInput) as e:
        _looked_up(tmp_path, f"Host hpc\n  HostName login\n  {word} yes\n")
    assert str(e.value) == (
        f"ssh_config {tmp_path}/ssh_config line 3: {word!r} is not an ssh_config keyword, "
        "and ssh refuses the file too (Bad configuration option); remove the line or, if it "
        "is another ssh's (Apple's, a newer OpenSSH), name it in an IgnoreUnknown line "
        f"above it (IgnoreUnknown {word})")


def test_a_keyword_in_a_block_of_another_host_is_refused_too(tmp_path: Path) -> None:
    # ssh reads every line's keyword, whichever host it is for
    with pytest.raises(BadInput, match=r"line 4: 'FrobnicateHosts' is not an ssh_config"):
        _looked_up(tmp_path, "Host hpc\n  HostName login\nHost other\n  FrobnicateHosts 1\n")


def test_ignore_unknown_above_it_lets_it_pass_and_below_it_does_not(tmp_path: Path) -> None:
    assert _looked_up(tmp_path, "IgnoreUnknown Frob*\nHost hpc\n  FrobnicateHosts 1\n"
                                "  HostName login\n") == "login"
    with pytest.raises(BadInput, match="line 1: 'FrobnicateHosts'"):
        _looked_up(tmp_path, "FrobnicateHosts 1\nIgnoreUnknown FrobnicateHosts\n")


def test_ignore_unknown_holds_in_an_included_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh" / "config.d").mkdir(parents=True)
    (tmp_path / ".ssh" / "config.d" / "hpc").write_text(
        "Host hpc\n  HostName login\n  UseKeyring yes\n")
    assert _looked_up(tmp_path, "IgnoreUnknown UseKeyring\nInclude config.d/*\n") == "login"


@pytest.mark.parametrize("word", ["KeepAlive", "IdentityFile2", "SmartcardDevice",
                                  "ProtocolKeepAlives", "UseKeychain"])
def test_old_keywords_ssh_still_reads_and_apples_pass(tmp_path: Path, word: str) -> None:
    # OpenSSH 9.2 (Debian) takes these without a "Bad configuration option"; UseKeychain
    # is Apple's ssh's, in configs shared with a Mac
    assert _looked_up(tmp_path, f"Host hpc\n  HostName login\n  {word} yes\n") == "login"


# -- 4. a known_hosts file that starts with a byte-order mark -------------------------------

def _spec() -> HostSpec:
    return HostSpec(alias="hpc", hostname="login.example.org", global_known_hosts_files=[])


def test_the_marked_first_line_is_not_read_and_the_refusal_says_why(tmp_path: Path) -> None:
    key = paramiko.ECDSAKey.generate()
    own = tmp_path / "known_hosts"
    own.write_text(f"\ufefflogin.example.org {key.get_name()} {key.get_base64()}\n")
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("alpha", str(own), tofu=False).verify(_spec(), key)
    assert "host login.example.org is not in known_hosts" in str(e.value)
    assert str(e.value).endswith(
        f"; {own} line 1 starts with a byte-order mark (a Windows editor's), so that line "
        "is not read (by ssh either): save the file as UTF-8 without it (OpenSSH reads the "
        "mark as part of the line's host, login.example.org, which then names no host)")
    assert own.read_text().startswith("\ufeff")  # nothing rewritten


def test_the_same_line_without_the_mark_is_read(tmp_path: Path) -> None:
    key = paramiko.ECDSAKey.generate()
    own = tmp_path / "known_hosts"
    own.write_text(f"login.example.org {key.get_name()} {key.get_base64()}\n")
    HostKeyVerifier("alpha", str(own), tofu=False).verify(_spec(), key)


@pytest.mark.parametrize("tofu", [False, True])
def test_a_revocation_on_the_marked_line_is_honoured(tmp_path: Path, tofu: bool) -> None:
    """ssh passes the line over (and would accept the key); a key meant revoked is never
    accepted here, and the refusal says the line is one ssh does not read."""
    key = paramiko.ECDSAKey.generate()
    own = tmp_path / "known_hosts"
    text = f"\ufeff@revoked * {key.get_name()} {key.get_base64()}\n"
    own.write_text(text)
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("alpha", str(own), tofu=tofu).verify(_spec(), key)
    assert "is revoked (@revoked in " in str(e.value)
    assert (f"{own} line 1, which starts with a byte-order mark: ssh passes that line over, "
            "and would accept the key") in str(e.value)
    assert own.read_text() == text


# -- 5. SWF: a short line among full ones, odd think times ----------------------------------

def _swf_line(number: int, think: float = -1, fields: int = 18) -> str:
    full = swf_line(number, 10 * number, run=100, procs=4, req=600, users=1, think=think)
    return " ".join(full.split()[:fields]) + "\n"


def test_a_short_line_among_full_ones_is_named(tmp_path: Path) -> None:
    path = tmp_path / "log.swf"
    path.write_text("; MaxProcs: 16\n" + "".join(
        _swf_line(n, fields=11 if n == 5 else 18) for n in range(1, 10)))
    log = read_swf(path)
    assert len(log.table) == 9  # still read
    [note] = [n for n in log.notes if "fewer than SWF's 18 fields" in n]
    assert note == ("1 job line(s) have fewer than SWF's 18 fields, the other 8 all of them "
                    "(line 6 has 11): each missing field is read as -1 (unknown); check the "
                    "line was not cut short")


def test_a_log_of_short_lines_throughout_says_nothing_of_them(tmp_path: Path) -> None:
    # older conversions stop at 11, 15 or 16 fields (tests/test_trace_unseen7.py)
    path = tmp_path / "log.swf"
    path.write_text("; MaxProcs: 16\n" + "".join(_swf_line(n, fields=16 if n % 2 else 11)
                                                 for n in range(1, 10)))
    assert not [n for n in read_swf(path).notes if "fields" in n]


def test_a_negative_think_time_other_than_minus_one_is_noted(tmp_path: Path) -> None:
    path = tmp_path / "log.swf"
    path.write_text("; MaxProcs: 16\n" + "".join(
        _swf_line(n, think=-30 if n in (4, 7) else -1) for n in range(1, 10)))
    [note] = [n for n in read_swf(path).notes if "think time" in n]
    assert note == ("2 job(s) have a negative think time other than SWF's -1 (line 5, field "
                    "18: -30): read as 0 s, no wait after the preceding job's end")
    path.write_text("; MaxProcs: 16\n" + "".join(_swf_line(n) for n in range(1, 10)))
    assert not [n for n in read_swf(path).notes if "think time" in n]


# -- follow-ups: a one-index PBS Pro array, Grid Engine names in a Slurm path, IgnoreUnknown

def test_only_the_first_ignore_unknown_line_counts_as_in_ssh(tmp_path: Path) -> None:
    """ssh keeps the first IgnoreUnknown's patterns and passes over the later lines (they
    were added together: a keyword ssh refuses passed)."""
    with pytest.raises(BadInput, match="line 3: 'UseKeyring' is not an ssh_config keyword"):
        _looked_up(tmp_path, "IgnoreUnknown UseKeychain\nIgnoreUnknown UseKeyring\n"
                             "UseKeyring yes\nHost hpc\n  HostName login\n")
    assert _looked_up(tmp_path, "IgnoreUnknown UseKeyring,Frob*\nIgnoreUnknown Other\n"
                                "UseKeyring yes\nFrobnicate 1\nHost hpc\n  HostName login\n"
                      ) == "login"


def test_the_first_ignore_unknown_holds_across_an_include(tmp_path: Path,
                                                          monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "extra").write_text("IgnoreUnknown UseKeyring\nUseKeyring yes\n")
    with pytest.raises(BadInput, match="extra line 2: 'UseKeyring'"):
        _looked_up(tmp_path, "IgnoreUnknown UseKeychain\nInclude extra\n")


def _pbs_one_index_said(index: str, written: str, held: str) -> str:
    return (f"line 2: -J {written}: PBS Pro's qsub refuses a range whose end is not past its "
            "start (illegal -J value); it takes X-Y[:STEP][%LIMIT] with X < Y; read as index "
            f"{index} alone, written -J {held} for PBS Pro (the range holding it alone)")


@pytest.mark.parametrize(("written", "index", "held"), [
    ("5", "5", "5-6:2"), ("5-5", "5", "5-6:2"), ("7%2", "7", "7-8:2%2"), ("0-0:3", "0", "0-1:2")])
def test_a_one_index_pbs_pro_array_is_said_when_read_translated_and_rendered(
        written: str, index: str, held: str) -> None:
    """qsub refuses `-J 5` and `-J 5-5`; they were read without a word."""
    text = f"#!/bin/bash\n#PBS -J {written}\n./app\n"
    said = _pbs_one_index_said(index, written, held)
    pbs = get_script_dialect("pbs")
    spec = pbs.parse_script(text)
    assert spec.metadata["parse_notes"] == [said]
    rendered = pbs.render_script(spec)  # what the submit of the script says
    assert f"#PBS -J {held}\n" in rendered.script
    assert rendered.warnings.count(said) == 1, rendered.warnings
    for target in ("pbs", "slurm"):
        warnings = translate(text, target, "pbs")[1]
        assert warnings.count(said) == 1, warnings


def test_a_range_pbs_pro_takes_and_a_torque_index_say_nothing() -> None:
    for text in ("#PBS -J 5-6", "#PBS -J 1-9:2%3", "#PBS -t 5\n#PBS -l nodes=1:ppn=2"):
        script = _script(text)
        assert not [w for w in translate(script, "pbs", "pbs")[1] if "-J" in w]
    # qsub refuses the script for its first -J, but the rendered one has the last alone
    pbs = get_script_dialect("pbs")
    spec = pbs.parse_script(_script("#PBS -J 5\n#PBS -J 1-4"))
    assert [n for n in spec.metadata["parse_notes"] if "-J 5:" in n]
    assert not [w for w in pbs.render_script(spec).warnings if "-J" in w]


def test_a_grid_engine_name_in_a_slurm_path_is_said_naming_line_and_name() -> None:
    """sbatch writes $JOB_ID literally; Grid Engine expands it once translated (only $HOME
    was said). Matched as Grid Engine matches: `$USERNAME` is $USER, `${JOB_NAME}` none."""
    text = _script("#SBATCH --array=1-3\n#SBATCH -o out.$JOB_ID_$TASK_ID.log\n"
                   "#SBATCH --error=logs/$USERNAME.${JOB_NAME}.err")
    script, warnings, _ = translate(text, "sge", "slurm")
    assert "#$ -o out.$JOB_ID_$TASK_ID.log\n" in script
    tail = ("(sbatch writes it literally) is expanded by Grid Engine to {}; the file is named "
            "otherwise (write a name without $ to keep the Slurm file's name)")
    said = [w for w in warnings if "is expanded by Grid Engine" in w]
    assert said == [
        "approximated: line 3: $JOB_ID in --output out.$JOB_ID_$TASK_ID.log "
        + tail.format("the job id (Slurm's %j)"),
        "approximated: line 3: $TASK_ID in --output out.$JOB_ID_$TASK_ID.log "
        + tail.format("the array task's index (Slurm's %a)"),
        "approximated: line 4: $USER in --error logs/$USERNAME.${JOB_NAME}.err "
        + tail.format("the job owner's user name (Slurm's %u)")], warnings
    for target in ("slurm", "pbs"):  # written literally there too: nothing to say
        assert not [w for w in translate(text, target, "slurm")[1] if "Grid Engine" in w]


def test_a_slurm_path_with_its_own_tokens_says_nothing_of_grid_engine() -> None:
    _, warnings, _ = translate(_script("#SBATCH -o out_%j_%a.log\n#SBATCH -e ${JOB_ID}.err"),
                               "sge", "slurm")
    assert not [w for w in warnings if "is expanded by Grid Engine" in w], warnings
