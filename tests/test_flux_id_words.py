"""Flux job ids in every spelling flux prints, the words form (mnemonicode) decoded here:
each spelling of one 64-bit id reads as that id and names the same stored job; a
malformed id is refused saying what is wrong and which spellings are accepted."""

from __future__ import annotations

from datetime import timedelta

import mnemonicode
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.flux_ids import (
    flux_id_form,
    flux_id_problem,
    flux_id_value,
    flux_spellings,
    flux_words,
)
from diamond_jupyter.dialects.translate import get_script_dialect
from diamond_jupyter.job_dependencies import dependencies_of, dependency_line
from diamond_jupyter.model import BadInput, Dependency, Job, JobSpec, JobState, utcnow

FLUID = st.integers(min_value=0, max_value=2**64 - 1)
FORMS = ["f58", "f58", "decimal", "hex", "dothex", "kvs", "words"]
T0 = utcnow() - timedelta(hours=1)


@pytest.mark.parametrize(("words", "value"), [
    # flux-core's own test of `flux job id --to=words` at the two ends of the range
    ("academy-academy-academy--academy-academy-academy", 0),
    ("natural-analyze-verbal--natural-analyze-verbal", 2**64 - 1),
])
def test_flux_cores_words_at_both_ends(words: str, value: int) -> None:
    assert flux_id_value(words) == value and flux_words(value) == words


def test_a_words_id_from_flux_docs_reads_as_mnemonicode_decodes_it() -> None:
    """The FAQ's `flux job id --to=words` answer: its number is the id's 8 bytes, little
    endian (as flux encodes them), that the mnemonicode package's own parser gives."""
    words = "airline-alibi-index--tuna-maximum-adam"
    expected = int.from_bytes(mnemonicode.mnparse(words), "little")
    assert flux_id_value(words) == expected and flux_id_form(words) == "words"


@settings(max_examples=300, deadline=None)
@given(FLUID)
def test_every_spelling_of_an_id_reads_as_that_id(value: int) -> None:
    spellings = flux_spellings(value)
    assert [flux_id_value(s) for s in spellings] == [value] * len(FORMS)
    assert [flux_id_form(s) for s in spellings] == FORMS
    # the words, decoded by the mnemonicode package (another implementation than ours)
    assert int.from_bytes(mnemonicode.mnparse(spellings[-1]), "little") == value


def _job(native: str, deps: list[Dependency] = (), state: JobState = JobState.PENDING,
         later_s: int = 0) -> Job:
    return Job(id=f"flx:{native}", site="flx", native_id=native, state=state,
               submitted_at=T0 + timedelta(seconds=later_s),
               spec=JobSpec(command="true", dependencies=list(deps)))


@settings(max_examples=150, deadline=None)
@given(FLUID, st.sampled_from(range(len(FORMS))), st.sampled_from(range(len(FORMS))))
def test_a_dependency_in_any_spelling_names_the_job_stored_in_another(
        value: int, stored_as: int, written_as: int) -> None:
    """A job submitted and stored under one spelling (what its submit printed) is the job a
    dependency written in any other spelling waits for: its state judges it."""
    stored, written = flux_spellings(value)[stored_as], flux_spellings(value)[written_as]
    up = _job(stored, state=JobState.COMPLETED)
    down = _job("the-waiting-job", [Dependency(kind="afterok", job_ids=[written],
                                               scheduler="flux")],
                later_s=5)
    [d] = dependencies_of(down, {up.id: up, down.id: down}.get, scheduler="flux")
    assert (d.job, d.state, d.satisfied) == (up.id, JobState.COMPLETED, True)
    assert dependency_line(d) == f"afterok {up.id} COMPLETED: satisfied"


@pytest.mark.parametrize(("text", "why"), [
    ("airline-alibi-indx--tuna-maximum-adam", "'indx' not in flux's word list"),
    ("airline-alibi-index", "3 words; the words form is six"),
    ("airline-alibi-index-tuna-maximum-adam", "two groups of three words joined by '--'"),
    ("verbal-verbal-verbal--academy-academy-academy", "spells more than 32 bits"),
    ("0x1ffffffffffffffff", "its number passes 64 bits"),
    ("18446744073709551616", "its number passes 64 bits"),
    ("job.0000.0000.0000", "no spelling of a Flux job id"),
    ("x; rm -rf ~", "no spelling of a Flux job id"),
])
def test_a_malformed_id_says_what_and_the_spellings_accepted(text: str, why: str) -> None:
    assert flux_id_value(text) is None and flux_id_form(text) is None
    said = flux_id_problem(text)
    assert said is not None and why in said
    for form in ("F58", "decimal", "hex", "dotted hex", "KVS key", "words"):
        assert form in said
    with pytest.raises(BadInput, match=f"flux: not a job id: {text!r}.*{why}"):
        FluxCommands().cancel_argv([text])


def test_a_script_dependency_on_a_malformed_words_id_names_the_word() -> None:
    text = "#!/bin/bash\n#flux: --dependency=afterok:airline-alibi-indx--tuna-maximum-adam\n"
    with pytest.raises(BadInput, match=r"line 2: .*'indx' not in flux's word list"):
        get_script_dialect("flux").parse_script(text + "./a\n")


def test_a_words_id_reaches_a_flux_command_as_written() -> None:
    words = flux_words(48483451480834048)
    assert FluxCommands().cancel_argv([words]) == ["flux", "cancel", words]
