"""#$ lines read as qsub reads them (Grid Engine's parse_script_file): each line split at
blanks and tabs, every ' and " of each word deleted, a backslash no escape. Where a shell
would read the line otherwise, a note says what qsub takes; a quoted blank, which qsub
splits into other words, is refused."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.sge_script import SgeScript, qsub_words
from diamond_jupyter.model import BadInput, JobSpec


def _parse(*directives: str) -> JobSpec:
    return SgeScript().parse_script("#!/bin/bash\n" + "".join(f"{d}\n" for d in directives)
                                    + "srun ./a.out\n")


def _notes(spec: JobSpec) -> list[str]:
    return spec.metadata.get("parse_notes", [])


@pytest.mark.parametrize(("payload", "words"), [
    ("-N 'my'job", ["-N", "myjob"]),                # quotes deleted inside a word
    ('-wd "/tmp/a b"', ["-wd", "/tmp/a", "b"]),      # a blank in quotes still splits
    ("-wd /tmp/a\\b", ["-wd", "/tmp/a\\b"]),          # a backslash kept, no escape
    ('-wd "/tmp/x\\"y"', ["-wd", "/tmp/x\\y"]),       # \" is a backslash and a quote
    ("-l\th_rt=1:00:00", ["-l", "h_rt=1:00:00"]),     # a tab splits as a blank does
    ("-N job # comment", ["-N", "job"]),
])
def test_words_as_qsub_splits_them(payload: str, words: list[str]) -> None:
    assert qsub_words(payload) == words


def test_quoted_value_without_blank_is_the_value_unquoted_and_unremarked() -> None:
    spec = _parse("#$ -wd '/scratch/run1'", '#$ -N "fit"')
    assert (spec.working_directory, spec.name) == ("/scratch/run1", "fit")
    assert not any("read as qsub reads it" in n for n in _notes(spec))


def test_backslash_stays_in_the_value_and_the_shell_reading_is_said() -> None:
    spec = _parse('#$ -wd "/scratch/x\\"y"')
    assert spec.working_directory == "/scratch/x\\y"
    said = [n for n in _notes(spec) if "read as qsub reads it" in n]
    assert len(said) == 1 and "line 2" in said[0]
    assert "'/scratch/x\"y'" in said[0]  # what a shell-style reading would have taken


def test_blank_inside_quotes_is_bad_input_saying_what_qsub_would_read() -> None:
    with pytest.raises(BadInput) as err:
        _parse('#$ -wd "/scratch/my run"')
    assert str(err.value) == (
        "line 2: bad working directory '/scratch/my run' in `#$ -wd \"/scratch/my run\"`: "
        "qsub splits #$ lines at blanks and tabs, quoted or not, so it would read the words "
        "['-wd', '/scratch/my', 'run']; give a working directory without blanks, "
        "e.g. /scratch/my_run")
