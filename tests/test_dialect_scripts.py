"""Focused cases for batch-script parsing, rendering and translation (pure, no clusters)."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.flux_script import flux_script, parse_fsd
from diamond_jupyter.dialects.lsf_script import lsf_script
from diamond_jupyter.dialects.pbs_script import pbs_script
from diamond_jupyter.dialects.slurm_script import parse_slurm_time, slurm_script
from diamond_jupyter.dialects.translate import (
    detect_dialect,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.model import BadInput, Directive, JobSpec

SLURM = """#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=4 -t 1:00:00
#SBATCH --job-name=demo   # a trailing comment
##SBATCH --partition=commented
# SBATCH --qos=also-commented
#SBATCH -p batch
#SBATCH --mail-type=END
#SBATCH --mail-user=user@example.org
#SBATCH --hint=nomultithread

module load foo
srun ./a.out
#SBATCH --account=too-late
"""


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 1800), ("5:30", 330), ("1:00:00", 3600), ("2-0", 172800), ("1-2:30", 95400),
     ("1-02:03:04", 93784)],
)
def test_slurm_time_formats(text: str, seconds: int) -> None:
    assert parse_slurm_time(text) == seconds


def test_slurm_basic_parse() -> None:
    spec = slurm_script.parse_script(SLURM)
    r = spec.resources
    assert (r.nodes, r.tasks_per_node, r.walltime_s) == (2, 4, 3600)
    assert spec.name == "demo" and spec.queue == "batch"
    assert spec.mail_events == ["end"] and spec.mail_user == "user@example.org"
    assert spec.account is None  # after the first command: ignored like sbatch does
    assert any("too-late" in n for n in spec.metadata["parse_notes"])
    assert [d.option for d in spec.unknown] == ["--hint"]
    assert spec.script.startswith("##SBATCH --partition=commented")


@pytest.mark.parametrize(
    "line",
    ["#SBATCH --nodes=3", "#SBATCH --nodes 3", "#SBATCH -N3", "#SBATCH -N 3",
     "#SBATCH   -N 3   # three nodes"],
)
def test_slurm_option_forms(line: str) -> None:
    assert slurm_script.parse_script(f"#!/bin/sh\n{line}\necho\n").resources.nodes == 3


def test_slurm_ambiguous_abbreviation_is_bad_input() -> None:
    # sbatch refuses it ("option '--nod=3' is ambiguous"): so does the reader (it was kept)
    with pytest.raises(BadInput, match=r"--nod is ambiguous \(it begins --nodefile, "
                                       r"--nodelist, --nodes\)"):
        slurm_script.parse_script("#!/bin/sh\n#SBATCH --nod=3\necho\n")


def test_slurm_abbreviations_and_gres() -> None:
    spec = slurm_script.parse_script(
        "#!/bin/bash\n#SBATCH --cpus-per-tas=8\n#SBATCH --gres=gpu:v100:2\n"
        "#SBATCH --mem=4G\n#SBATCH --cluster=c1\n#SBATCH --exclusive\n#SBATCH -C a&b\n")
    r = spec.resources
    assert (r.cpus_per_task, r.gpus_per_node, r.gpu_type, r.memory_mb) == (8, 2, "v100", 4096)
    assert spec.constraints.exclusive and spec.constraints.features == ["a", "b"]
    assert [d.raw for d in spec.unknown] == ["#SBATCH --cluster=c1"]


def test_slurm_round_trip_keeps_unknown_verbatim() -> None:
    spec = slurm_script.parse_script(SLURM)
    out = slurm_script.render_script(spec).script
    assert "#SBATCH --hint=nomultithread" in out.splitlines()
    assert out.startswith("#!/bin/bash\n")
    assert out.endswith(spec.script)
    again = slurm_script.parse_script(out)
    assert again.resources == spec.resources and again.unknown == spec.unknown


def test_crlf_and_placeholders() -> None:
    text = "#!/bin/bash\r\n#SBATCH -N 2\r\n#SBATCH --time={{ walltime }}\r\n" \
           "#SBATCH -p ${PART}\r\necho hi\r\n"
    spec = slurm_script.parse_script(text)
    assert spec.resources.nodes == 2 and spec.queue == "${PART}"
    assert spec.unknown[0].raw == "#SBATCH --time={{ walltime }}"
    assert any("placeholder" in n for n in spec.metadata["parse_notes"])
    rendered = slurm_script.render_script(spec)
    assert "\r" not in rendered.script and any("CRLF" in w for w in rendered.warnings)


def test_bad_values_raise_badinput_with_line() -> None:
    with pytest.raises(BadInput, match=r"line 2: bad time '1:2:3:4'"):
        slurm_script.parse_script("#!/bin/bash\n#SBATCH -t 1:2:3:4\n")
    with pytest.raises(BadInput, match="line 2"):
        pbs_script.parse_script("#!/bin/bash\n#PBS -l walltime=abc\n")
    with pytest.raises(BadInput, match="needs a value"):
        pbs_script.parse_script("#!/bin/bash\n#PBS -N\n")


def test_pbs_pro_select() -> None:
    spec = pbs_script.parse_script(
        "#!/bin/bash\n#PBS -l select=2:ncpus=8:mpiprocs=4:ngpus=1:mem=16gb:system=polaris\n"
        "#PBS -l walltime=01:30:00,place=scatter:excl\n#PBS -j oe\n#PBS -J 1-10:2\n"
        "#PBS -W depend=afterok:12:13\n#PBS -m abe\n#PBS -V\ncd $PBS_O_WORKDIR\n")
    r = spec.resources
    assert (r.nodes, r.tasks_per_node, r.cpus_per_task, r.gpus_per_node) == (2, 4, 2, 1)
    assert r.memory_mb == 16384 and r.walltime_s == 5400
    assert spec.constraints.exclusive and spec.join_output and spec.array.expression == "1-10:2"
    assert spec.dependencies[0].job_ids == ["12", "13"]
    assert set(spec.mail_events) == {"fail", "begin", "end"}
    out = pbs_script.render_script(spec).script
    assert "#PBS -l select=2:ncpus=8:mpiprocs=4:ngpus=1:mem=16gb:system=polaris" in out
    assert "#PBS -l place=scatter:excl" in out


def test_pbs_torque_nodes_and_warnings() -> None:
    spec = pbs_script.parse_script(
        "#!/bin/bash\n#PBS -l nodes=2:ppn=12:gpus=1:xk,mem=8gb\n#PBS -t 1-50%5\n#PBS -q batch\n")
    r = spec.resources
    assert (r.nodes, r.tasks_per_node, r.gpus_per_node) == (2, 12, 1)
    assert r.memory_mb == 4096  # Torque mem is per job
    assert spec.constraints.features == ["xk"] and spec.metadata["pbs_flavor"] == "torque"
    torque = pbs_script.render_script(spec).script
    assert "#PBS -l nodes=2:ppn=12:gpus=1:xk" in torque and "#PBS -t 1-50%5" in torque
    script, warnings, _ = translate(pbs_script.render_script(spec).script, "slurm")
    assert "--array=1-50%5" in script
    spec.metadata.pop("pbs_flavor")
    pro = pbs_script.render_script(spec)
    # the running limit as PBS Pro 2020.1+ writes it (-J X-Y%N, max_run_subjobs)
    assert "#PBS -J 1-50%5" in pro.script
    assert not any("array" in w for w in pro.warnings)
    assert any("node feature xk" in w for w in pro.warnings)


def test_pbs_multi_chunk_select_is_a_job_of_two_shapes_and_kept_in_pbs() -> None:
    """A head chunk and worker chunks: a job of two shapes (its totals summed over the
    chunks), a Slurm heterogeneous job; the resources stay a shape no chunk outgrows (what
    placement asks of each node); PBS gets the chunks as written until the request is
    changed."""
    text = ("#!/bin/bash\n#PBS -l select=1:ncpus=16:mem=100gb+4:ncpus=8:mpiprocs=8:ngpus=1\n"
            "#PBS -l walltime=1:00:00\n./a.out\n")
    spec = pbs_script.parse_script(text)
    r = spec.resources
    assert (r.nodes, r.tasks_per_node, r.gpus_per_node, r.memory_mb) == (5, 8, 1, 102400)
    assert r.tasks_per_node * r.cpus_per_task >= 16  # the head chunk's 16 CPUs fit a node
    assert request_totals(spec) == {"nodes": 5, "tasks": 33, "cpus": 48, "gpus": 4,
                                    "memory_mb": 102400}
    script, warnings, _ = translate(text, "slurm")
    assert script.split("#SBATCH hetjob\n")[1].startswith(
        "#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n#SBATCH --cpus-per-task=1\n"
        "#SBATCH --gpus-per-node=1\n")
    # as memory per CPU: a --mem would be carried into the chunks after it (they ask none)
    assert "#SBATCH --cpus-per-task=16\n#SBATCH --mem-per-cpu=6400M" in script
    assert any("(2 chunks) read as a job of 2 shapes" in w for w in warnings)
    kept = pbs_script.render_script(spec).script
    assert "#PBS -l select=1:ncpus=16:mem=100gb+4:ncpus=8:mpiprocs=8:ngpus=1" in kept
    spec.resources.nodes = 2  # changed: rendered from the resources, not the old chunks
    changed = pbs_script.render_script(spec).script
    assert "+" not in changed and "#PBS -l select=2:" in changed
    with pytest.raises(BadInput, match="bad select"):
        pbs_script.parse_script("#!/bin/bash\n#PBS -l select=1:ncpus=4+bad\n")


def test_torque_node_list_with_host_names() -> None:
    text = "#!/bin/bash\n#PBS -l nodes=2:ppn=4+node07:ppn=8:gpus=1\n#PBS -l walltime=1:00:00\n"
    spec = pbs_script.parse_script(text)
    assert (spec.resources.nodes, spec.resources.tasks_per_node) == (3, 8)
    assert spec.metadata["pbs_flavor"] == "torque"
    assert "#PBS -l nodes=2:ppn=4+node07:ppn=8:gpus=1" in pbs_script.render_script(spec).script
    script, warnings, _ = translate(text, "slurm")  # two shapes: a heterogeneous job
    assert "--nodes=2" in script and "#SBATCH hetjob" in script
    assert script.split("#SBATCH hetjob\n")[1].startswith(  # its chunk's host its own
        "#SBATCH --nodelist=node07\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=8\n"
        "#SBATCH --gpus-per-node=1\n")
    assert any("named here: node07" in w for w in warnings)
    one = "#!/bin/bash\n#PBS -l nodes=node01:ppn=4\n"
    assert "#PBS -l nodes=node01:ppn=4" in translate(one, "pbs")[0]
    script, warnings, _ = translate(one, "slurm")
    assert "--nodes=1" in script and "--ntasks-per-node=4" in script
    assert any("named here: node01" in w for w in warnings)


def test_lsf_parse() -> None:
    spec = lsf_script.parse_script(
        '#!/bin/bash\n#BSUB -n 8\n#BSUB -R "span[ptile=4] rusage[mem=2GB] select[gpu32gb]"\n'
        '#BSUB -W 2:30\n#BSUB -J "job[1-4]%2"\n#BSUB -gpu "num=1:mode=exclusive_process"\n'
        "#BSUB -o out.%J.%I\n#BSUB -P proj\n#BSUB -alloc_flags smt4\n#BSUB -w done(5)\nrun\n")
    r = spec.resources
    assert (r.tasks, r.tasks_per_node, r.memory_per_cpu_mb, r.walltime_s) == (8, 4, 2048, 9000)
    assert spec.name == "job" and spec.array.expression == "1-4%2"
    assert r.gpus_per_node == 1 and spec.stdout == "out.%j.%a" and spec.account == "proj"
    assert spec.dependencies[0].kind == "afterok"
    out = lsf_script.render_script(spec).script
    assert '#BSUB -gpu "num=1:mode=exclusive_process"' in out
    assert "#BSUB -alloc_flags smt4" in out and "#BSUB -o out.%J.%I" in out
    assert "span[ptile=4]" in out and "select[gpu32gb]" in out


def test_lsf_summit_nnodes_round_trip() -> None:
    spec = lsf_script.parse_script("#!/bin/bash\n#BSUB -nnodes 4\n#BSUB -W 0:30\njsrun a\n")
    assert spec.resources.nodes == 4
    assert "#BSUB -nnodes 4" in lsf_script.render_script(spec).script


@pytest.mark.parametrize(("text", "secs"), [("30", 1800), ("30m", 1800), ("2h", 7200),
                                            ("1d", 86400), ("90s", 90), ("1.5h", 5400)])
def test_flux_fsd(text: str, secs: int) -> None:
    assert parse_fsd(text) == secs


def test_flux_parse_forms() -> None:
    # one sentinel throughout (flux batch refuses a mix: the seventh sweep)
    text = ("#!/bin/bash\nset -o nounset\n#flux: -N2\n#flux: -n 8 -c 4\n#flux: --time=3h\n"
            "#flux: --exclusive\n#flux: --job-name=x\n#flux: --output=o.{{id}}.log\nflux run a\n")
    spec = flux_script.parse_script(text)
    r = spec.resources
    assert (r.nodes, r.tasks, r.cpus_per_task, r.walltime_s) == (2, 8, 4, 10800)
    assert spec.constraints.exclusive and spec.stdout == "o.%j.log"
    assert detect_dialect(text) == "flux"


def test_cross_dialect_warnings_name_the_directive() -> None:
    script, warnings, _ = translate(SLURM, "lsf")
    assert "#BSUB -n 8" in script and '#BSUB -R "span[ptile=4]"' in script
    assert "#BSUB -N" in script and "#BSUB -W 1:00" in script
    assert any("#SBATCH --hint=nomultithread" in w for w in warnings)
    script, warnings, _ = translate(SLURM, "flux")
    assert any("mail" in w for w in warnings)


def test_nothing_dropped_silently_slurm_to_pbs() -> None:
    text = ("#!/bin/bash\n#SBATCH --qos=high\n#SBATCH --gpu-bind=closest\n#SBATCH --requeue\n"
            "#SBATCH --mail-type=TIME_LIMIT_80\n#SBATCH -t 10\nhostname\n")
    script, warnings, _ = translate(text, "pbs")
    joined = "\n".join(warnings)
    for needle in ("QOS high", "GPU binding closest", "time_limit_80"):
        assert needle in joined
    assert "#PBS -l walltime=00:10:00" in script
    assert "#PBS -r y" in script.splitlines()  # --requeue: rerunnable


@pytest.mark.parametrize(
    ("slurm_bind", "lsf_text", "flux_text"),
    [("cores", "affinity[core(2)]", "cpu-affinity=per-task"),
     ("sockets", "affinity[core(2):cpubind=socket]", None),
     ("threads", "affinity[thread(2)]", None),
     ("none", None, "cpu-affinity=off")],
)
def test_cpu_affinity_mappings(slurm_bind: str, lsf_text, flux_text) -> None:
    text = f"#!/bin/bash\n#SBATCH -n 4 -c 2\n#SBATCH --cpu-bind={slurm_bind}\nsrun a\n"
    to_slurm, _, _ = translate(text, "slurm")
    assert f"export SLURM_CPU_BIND={slurm_bind}" in to_slurm  # sbatch has no --cpu-bind
    assert "--cpu-bind" not in to_slurm
    lsf, _, _ = translate(text, "lsf")
    if lsf_text:
        assert lsf_text in lsf
        back = lsf_script.parse_script(lsf)
        assert back.resources.cpu_bind == slurm_bind and back.resources.cpus_per_task == 2
    flux, fw, _ = translate(text, "flux")
    if flux_text:
        assert f"#flux: --setopt={flux_text}" in flux
        assert flux_script.parse_script(flux).resources.cpu_bind == slurm_bind
    else:
        assert any("CPU binding" in w for w in fw)


def test_gpu_binding_mappings() -> None:
    text = "#!/bin/bash\n#SBATCH -N1 --gpus-per-task=1 -n 4\n#SBATCH --gpu-bind=closest\nsrun\n"
    lsf, lw, _ = translate(text, "lsf")
    assert "num=1/task" in lsf and "aff=yes" in lsf and any("aff=yes" in w for w in lw)
    flux, fw, _ = translate(text, "flux")
    assert "gpu-affinity=per-task" in flux and any("closest" in w for w in fw)
    flux_in = "#!/bin/sh\n#flux: -n4 -g1\n#flux: -o gpu-affinity=per-task\nflux run a\n"
    slurm, _, _ = translate(flux_in, "slurm")
    assert "#SBATCH --gpu-bind=per_task:1" in slurm and "#SBATCH --gpus-per-task=1" in slurm


def test_detect_and_lookup_errors() -> None:
    with pytest.raises(BadInput, match="no batch directives"):
        detect_dialect("#!/bin/bash\necho hi\n")
    with pytest.raises(BadInput, match="ambiguous"):
        detect_dialect("#SBATCH -N1\n#PBS -N x\n")
    with pytest.raises(BadInput, match="unknown dialect"):
        get_script_dialect("loadleveler")
    assert get_script_dialect("Torque").name == "pbs"


def test_output_patterns_translate() -> None:
    text = "#!/bin/bash\n#SBATCH -o log-%x-%j.out\n#SBATCH -e err-%A_%a.txt\nrun\n"
    lsf, _, _ = translate(text, "lsf")
    assert "#BSUB -eo err-%J_%I.txt" in lsf  # -eo: overwritten, as sbatch truncates
    flux, fw, _ = translate(text, "flux")
    assert "log-{{name}}-{{id}}.out" in flux and any("%A" in w for w in fw)


def test_lsf_resource_string_with_quotes_reads_back_whole() -> None:
    text = ('#!/bin/bash\n#BSUB -n 4\n#BSUB -R "select[type==\\"X86_64\\"] rusage[mem=2GB]"\n'
            "run\n")
    spec = lsf_script.parse_script(text)
    kept = [(d.option, d.value) for d in spec.unknown]
    assert kept == [("-R select", 'select[type=="X86_64"]')]
    out = lsf_script.render_script(spec).script
    assert "#BSUB -R 'rusage[mem=2GB] select[type==\"X86_64\"]'" in out
    back = lsf_script.parse_script(out)
    assert [(d.option, d.value) for d in back.unknown] == kept
    assert back.resources.memory_per_cpu_mb == 2048


HAZARDS = ['a b', 'a"b', "a'b", "a\\b", 'a" -x "b', "a' -x 'b", "a # -x", '\\', '"', "'",
           "it's \"x\" \\ -y"]


@pytest.mark.parametrize("dialect", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_rendered_values_read_back_and_add_no_option(dialect: str) -> None:
    """Spaces, quotes, backslashes and `#` in a value stay in that value: the rendered
    directive reads back as the same value and nothing becomes an option of its own."""
    d = get_script_dialect(dialect)
    for value in HAZARDS:
        queue = None if " " in value else value  # a queue name with a blank is refused
        spec = JobSpec(script="run\n", queue=queue, account=value, stdout=value,
                       mail_user=value)
        spec.unknown.append(Directive(dialect="lsf", option="-R select",
                                      value=f"select[{value}]", raw="#BSUB -R x"))
        spec.resources.gpu_type, spec.resources.gpus_per_node = value, 1
        if dialect == "sge":  # qsub splits #$ lines at blanks and deletes quotes: refused
            with pytest.raises(BadInput, match=r"^sge cannot express the (queue|account) "):
                d.render_script(spec)
            continue
        back = d.parse_script(d.render_script(spec).script)
        for field in ("queue", "account", "stdout", "mail_user"):
            same = queue if field == "queue" else value
            assert getattr(back, field) in (same, None), (field, value)
        if dialect == "lsf":
            assert back.resources.gpu_type == value
            assert [(u.option, u.value) for u in back.unknown] == [
                ("-R select", f"select[{value}]")], value
        else:
            assert not back.unknown or {u.option for u in back.unknown} == {"--requires"}


@pytest.mark.parametrize("dialect", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_newline_in_a_value_never_starts_a_directive_line(dialect: str) -> None:
    d = get_script_dialect(dialect)
    spec = lsf_script.parse_script('#!/bin/bash\n#BSUB -R "select[x86]" -alloc_flags smt4\nrun\n')
    spec.unknown[-1].value = "smt4\n#BSUB -q evil"
    with pytest.raises(BadInput, match=r"unknown\[\d\]\.value contains a control character "
                                       r"\(newline.*only printable characters"):
        d.render_script(spec)
    spec = JobSpec(script="run\n")
    spec.name = "job\n#SBATCH --qos=evil"  # set after the model's own check, as a face may
    with pytest.raises(BadInput, match="name contains a control character"):
        d.render_script(spec)


@pytest.mark.parametrize(("options", "cpus_per_task", "memory_mb", "kept"), [
    # 4 GPUs on the node shared by 4 tasks: 16 CPUs each; 4 x 80G on the node
    ("-N 1 --ntasks-per-node=4 --gpus-per-node=4 --cpus-per-gpu=16 --mem-per-gpu=80G",
     16, 4 * 80 * 1024, []),
    # one task per node by default: all 4 GPUs' CPUs on it
    ("-N 2 --gpus-per-node=4 --cpus-per-gpu=8", 32, None, []),
    # tasks per node unknown: a task's GPU memory shared by its 8 CPUs (memory per CPU)
    ("-n 4 --gpus-per-task=1 --cpus-per-gpu=8 --mem-per-gpu=10G", 8, None, []),
    ("--mem-per-gpu=10G -n 4 --gpus-per-node=2", None, 20 * 1024, []),  # any order
    ("-N 2 --ntasks-per-node=3 --gpus-per-node=2 --cpus-per-gpu=1", None, None,
     ["--cpus-per-gpu"]),  # 2 CPUs do not split among 3 tasks
    # --cpus-per-gpu beside -c: sbatch refuses the pair (tests/test_scripts_unseen17.py)
    ("--cpus-per-gpu=4 --mem-per-gpu=1G", None, None, ["--cpus-per-gpu", "--mem-per-gpu"]),
])
def test_slurm_per_gpu_cpus_and_memory(options: str, cpus_per_task: int | None,
                                       memory_mb: int | None, kept: list[str]) -> None:
    spec = slurm_script.parse_script(f"#!/bin/bash\n#SBATCH {options}\nsrun x\n")
    r = spec.resources
    assert (r.cpus_per_task, r.memory_mb) == (cpus_per_task, memory_mb)
    assert [d.option for d in spec.unknown] == kept
    assert "slurm_per_gpu" not in spec.metadata


def test_flux_nodes_without_slots_is_one_slot_per_node_both_ways() -> None:
    spec = flux_script.parse_script("#!/bin/bash\n#flux: -N 2 -c 4\nflux run x\n")
    r = spec.resources
    assert (r.nodes, r.tasks, r.cpus_per_task, spec.constraints.exclusive) == (2, 2, 4, True)
    # and the other way: Slurm's -N 2 -c 4 (one task per node) is not made exclusive in flux
    script, _, _ = translate("#!/bin/bash\n#SBATCH -N 2 -c 4\nsrun x\n", "flux")
    back = flux_script.parse_script(script)
    assert (back.resources.tasks, back.resources.cpus_per_task) == (2, 4)
    assert not back.constraints.exclusive


def test_a_memory_size_beyond_a_float_is_bad_input_not_a_crash() -> None:
    """`#BSUB -M 999...9` (hundreds of digits) read as infinity: BadInput, as for any
    unreadable size (it was an OverflowError)."""
    from diamond_jupyter.dialects.scripts_common import parse_mem_mb

    assert parse_mem_mb("9" * 400) is None and parse_mem_mb("4G") == 4096
    with pytest.raises(BadInput, match="bad memory limit"):
        get_script_dialect("lsf").parse_script(f"#BSUB -M {'9' * 400}\necho hi\n")
