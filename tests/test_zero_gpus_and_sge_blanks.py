"""Two render faults found after the SWF/script sweeps.

- A face's `--gpus 0` (or a JSON spec's `gpus_per_node: 0`) reached sbatch as
  `#SBATCH --gpus-per-node=0` (and `--gpus-per-task=0`, and `gpus_per_node: 0` over
  slurmrestd): 0 GPUs asks for none, so nothing is written.
- Grid Engine values with a blank were written quoted (`#$ -wd "a b"`), but qsub splits
  #$ lines at blanks and tabs and only strips the quotes (parse_script_file), so the job
  ran in `a` with a stray word after it (and every ' and " of a word is deleted). Such a
  value is refused at render time, naming the option and what would work; a variable's
  value of that kind is set by an `export` line before the body instead of `-v` (as a
  value with a comma already was). Diamond's submit runs `qsub -terse SCRIPT` and passes
  no option on the command line, so the script is the only place for these values.
"""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.slurm_rest import job_description
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec, Resources


def _directives(script: str, sentinel: str) -> list[str]:
    return [line for line in script.splitlines() if line.startswith(sentinel)]


@pytest.mark.parametrize("resources", [
    {"gpus_per_node": 0},
    {"gpus_per_task": 0, "tasks": 2},
    {"gpus_per_node": 0, "gpus_per_task": 0, "tasks": 4},
])
def test_slurm_writes_no_gpu_option_for_zero_gpus(resources: dict):
    spec = JobSpec(script="./a\n", resources=Resources(**resources))
    rendered = get_script_dialect("slurm").render_script(spec)
    assert not [x for x in _directives(rendered.script, "#SBATCH") if "gpu" in x]
    assert spec.resources == Resources(**resources)  # the caller's spec is left as it was


def test_zero_gpus_beside_gpus_per_task_keeps_the_per_task_count():
    spec = JobSpec(script="./a\n", resources=Resources(tasks=2, gpus_per_node=0,
                                                       gpus_per_task=1))
    lines = _directives(get_script_dialect("slurm").render_script(spec).script, "#SBATCH")
    assert "#SBATCH --gpus-per-task=1" in lines
    assert not [x for x in lines if "gpus-per-node" in x]


def test_a_gpu_type_with_zero_gpus_is_said_dropped():
    spec = JobSpec(script="./a\n", resources=Resources(gpus_per_node=0, gpu_type="a100"))
    rendered = get_script_dialect("slurm").render_script(spec)
    assert not [x for x in _directives(rendered.script, "#SBATCH") if "gpu" in x]
    assert "dropped: GPU type a100 without a GPU count" in rendered.warnings


def test_a_faces_gpus_0_over_a_scripts_gpus_asks_none():
    """`diamond submit --gpus 0` / `%%diamond submit --gpus 0` on a script asking for 2."""
    text = "#!/bin/bash\n#SBATCH --ntasks=1\n#SBATCH --gpus-per-node=2\n./a\n"
    spec = Federation.spec_from_text(text, overrides={"gpus_per_node": 0})
    script = get_script_dialect("slurm").render_script(spec).script
    assert _directives(script, "#SBATCH") == ["#SBATCH --ntasks=1"]


def test_slurmrestd_is_sent_no_gpu_count_of_zero():
    spec = JobSpec(script="./a\n", working_directory="/home/u",
                   resources=Resources(gpus_per_node=0, gpus_per_task=0))
    job, _ = job_description(spec)
    assert "gpus_per_node" not in job and "gpus_per_task" not in job
    nested, _ = job_description(spec, api_version="v0.0.40")
    assert not {"tres_per_node", "tres_per_task"} & set(nested)


@pytest.mark.parametrize("field, value, option, what", [
    ("working_directory", "/home/u/my runs", "-wd", "working directory"),
    ("stdout", "/scratch/my runs/out.txt", "-o", "stdout path"),
    ("stderr", "/scratch/err\tfile", "-e", "stderr path"),
    ("account", "big project", "-A", "account"),
])
def test_sge_refuses_a_value_with_a_blank_naming_the_option(field, value, option, what):
    spec = JobSpec(script="./a\n", **{field: value})
    with pytest.raises(BadInput) as err:
        get_script_dialect("sge").render_script(spec)
    msg = str(err.value)
    assert msg.startswith(f"sge cannot express the {what} {value!r} (#$ {option})")
    assert f"would read #$ {option} {value.split()[0]!r}" in msg
    assert ("a path without blanks" if option in ("-wd", "-o", "-e")
            else f"{what} without blanks") in msg
    assert "\n" not in msg


@pytest.mark.parametrize("value, read", [("o'brien", "obrien"), ('say"x"', "sayx")])
def test_sge_refuses_a_value_with_a_quote_saying_what_qsub_would_read(value, read):
    """qsub deletes every ' and " of a #$ word: the account would be another."""
    with pytest.raises(BadInput) as err:
        get_script_dialect("sge").render_script(JobSpec(script="./a\n", account=value))
    assert "(#$ -A): qsub splits" in str(err.value)
    assert f"it would read #$ -A {read!r}" in str(err.value)


def test_sge_refuses_a_path_with_a_backslash():
    with pytest.raises(BadInput, match=r"stdout path 'C:\\\\out' \(#\$ -o\).*backslash"):
        get_script_dialect("sge").render_script(JobSpec(script="./a\n", stdout="C:\\out"))


def test_sge_writes_values_without_blanks_as_before():
    spec = JobSpec(script="./a\n", working_directory="/home/u/runs", stdout="/tmp/o.txt")
    lines = _directives(get_script_dialect("sge").render_script(spec).script, "#$")
    assert "#$ -wd /home/u/runs" in lines and "#$ -o /tmp/o.txt" in lines


def test_sge_variable_with_a_blank_is_exported_not_listed_in_v():
    spec = JobSpec(script="./a\n", environment={
        "variables": {"GREETING": "hello world", "PLAIN": "x", "LIST": "a,b",
                      "QUOTED": 'say "hi"'}})
    script = get_script_dialect("sge").render_script(spec).script
    lines = script.splitlines()
    assert _directives(script, "#$ -v") == ["#$ -v PLAIN=x"]
    assert "export GREETING='hello world'" in lines and "export LIST=a,b" in lines
    assert "export QUOTED='say \"hi\"'" in lines
    assert lines.index("export GREETING='hello world'") < lines.index("./a")
    back = get_script_dialect("sge").parse_script(script)
    assert back.environment.variables == {"PLAIN": "x"}


def test_sge_translate_of_a_blank_output_path_is_refused():
    """`diamond translate --to sge` of a Slurm script writing into a directory with a
    blank: one line naming the path, rather than a script qsub would misread."""
    from diamond_jupyter.dialects.translate import translate

    text = '#!/bin/bash\n#SBATCH --output="/scratch/my dir/%j.out"\n./a\n'
    with pytest.raises(BadInput, match=r"stdout path '/scratch/my dir/.*' \(#\$ -o\)"):
        translate(text, "sge", "slurm")


def test_sge_job_name_quotes_become_underscores_said():
    """qsub deletes the quotes of `#$ -N 'a"b"'`: the name is made one qsub keeps, said."""
    rendered = get_script_dialect("sge").render_script(JobSpec(script="./a\n",
                                                               name='a "b" it\'s'))
    assert "#$ -N a__b__it_s" in rendered.script.splitlines()
    assert any(w.startswith("approximated: job name") and "quotes" in w
               for w in rendered.warnings)
