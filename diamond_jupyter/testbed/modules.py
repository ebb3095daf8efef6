"""Each test-bed cluster's software as a real Lmod module tree, named as real centers name
theirs (alpha: Spack, beta: EasyBuild, gamma: plain), and its container runtimes.

A loaded module proves itself at run time: it sets `DIAMOND_SW_<NAME>` to its version and
puts `<name>-version` (which prints "<name> <version> <cluster>") on the PATH. Sessions
and jobs see `module` through BASH_ENV (Lmod's bash init) and MODULEPATH, which the
site's sshd sets for every session and `sbatch` passes on to the job.

The container runtime is a stand-in: `apptainer exec IMAGE CMD...` runs CMD with
APPTAINER_CONTAINER=IMAGE (no image is pulled or entered), so a job can verify that the
site offers the runtime it asked for.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .clusters import ClusterDef

LMOD_INIT_CANDIDATES = ("/usr/share/lmod/lmod/init/bash",)


@dataclass(frozen=True)
class Package:
    module: str  # as the site spells it: "GROMACS/2023.3-foss-2023a"
    name: str  # the marker's name: gromacs
    version: str  # the marker's version: 2023.3


SOFTWARE: dict[str, tuple[Package, ...]] = {
    # Spack's Lmod layout: name/version-hash
    "alpha": (Package("gcc/12.2.0-k3x7qzt", "gcc", "12.2.0"),
              Package("openmpi/4.1.5-tq4bzvh", "openmpi", "4.1.5"),
              Package("python/3.11.4-mn2ahcd", "python3", "3.11.4")),
    # EasyBuild's: Name/version-toolchain
    "beta": (Package("GCC/12.3.0", "gcc", "12.3.0"),
             Package("GROMACS/2023.3-foss-2023a", "gromacs", "2023.3"),
             Package("Python/3.11.3-GCCcore-12.3.0", "python3", "3.11.3")),
    # plain name/version
    "gamma": (Package("python3/3.11", "python3", "3.11"),
              Package("cuda/12.2", "cuda", "12.2"),
              Package("pytorch/2.1", "pytorch", "2.1")),
}

RUNTIMES: dict[str, tuple[str, ...]] = {"alpha": ("apptainer",), "beta": (),
                                        "gamma": ("apptainer",)}


def lmod_init() -> str | None:
    """Lmod's bash init file, when Debian's `lmod` is installed."""
    for p in LMOD_INIT_CANDIDATES:
        if Path(p).is_file():
            return p
    return None


def modules_dir(base: Path, c: ClusterDef) -> Path:
    return base / "clusters" / c.name / "modules"  # in the cluster's directory


def module_path(base: Path, c: ClusterDef) -> Path:
    return modules_dir(base, c) / "modulefiles"


def bin_dir(base: Path, c: ClusterDef) -> Path:
    return modules_dir(base, c) / "bin"


def _modulefile(pkg: Package, prefix: Path) -> str:
    var = "DIAMOND_SW_" + "".join(ch if ch.isalnum() else "_" for ch in pkg.name.upper())
    return (f'whatis("{pkg.name} {pkg.version} (diamond test bed)")\n'
            f'setenv("{var}", "{pkg.version}")\n'
            f'prepend_path("PATH", "{prefix / "bin"}")\n')


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    os.chmod(path, 0o755)


def write_tree(base: Path, c: ClusterDef) -> None:
    """(Re)write the cluster's module tree and runtime stand-ins, world-readable."""
    root = modules_dir(base, c)
    if root.exists():
        shutil.rmtree(root)
    for pkg in SOFTWARE.get(c.name, ()):
        name, _, version = pkg.module.partition("/")
        prefix = root / "sw" / name / version
        (prefix / "bin").mkdir(parents=True)
        _executable(prefix / "bin" / f"{pkg.name}-version",
                    f"#!/bin/sh\necho '{pkg.name} {pkg.version} {c.name}'\n")
        mf = module_path(base, c) / name / f"{version}.lua"
        mf.parent.mkdir(parents=True, exist_ok=True)
        mf.write_text(_modulefile(pkg, prefix))
    bindir = bin_dir(base, c)
    bindir.mkdir(parents=True, exist_ok=True)
    for rt in RUNTIMES.get(c.name, ()):
        _executable(bindir / rt, _runtime_shim(rt))
    for d, _, files in os.walk(root):
        os.chmod(d, 0o755)
        for f in files:
            p = Path(d) / f
            os.chmod(p, os.stat(p).st_mode | 0o444)


def _runtime_shim(name: str) -> str:
    var = name.upper() + "_CONTAINER"
    return f"""#!/bin/sh
# {name} stand-in of the diamond test bed: runs the command outside any image
case "$1" in
  --version|version) echo "{name} version 1.2.5-testbed"; exit 0 ;;
  exec|run)
    verb=$1; shift
    while [ $# -gt 0 ]; do case "$1" in --*=*) shift ;; -B|--bind|--env|-e) shift 2 ;;
      -*) shift ;; *) break ;; esac; done
    [ $# -ge 1 ] || {{ echo "{name}: no image given" >&2; exit 255; }}
    image=$1; shift
    export {var}="$image"
    if [ "$verb" = run ] && [ $# -eq 0 ]; then echo "{name}: ran $image"; exit 0; fi
    exec "$@" ;;
  *) echo "{name}: only exec, run and --version in the test bed" >&2; exit 255 ;;
esac
"""


BASHRC = """# diamond test bed: `module` in every bash, as a center's /etc/bashrc gives it (bash
# started by sshd reads this file instead of BASH_ENV)
if ! type module >/dev/null 2>&1 && [ -n "${BASH_ENV:-}" ] && [ -r "$BASH_ENV" ]; then
  . "$BASH_ENV"
fi
"""


def write_bashrc(home: Path, uid: int, gid: int) -> None:
    rc = home / ".bashrc"
    rc.write_text(BASHRC)
    os.chown(rc, uid, gid)
    os.chmod(rc, 0o644)


def session_env(base: Path, c: ClusterDef) -> dict[str, str]:
    """What every SSH session of the site gets (sshd SetEnv): `module` through BASH_ENV,
    the site's module tree, the runtime stand-ins on the PATH. Nothing without Lmod, nor
    for a cluster with no module tree here."""
    if c.name not in SOFTWARE:
        return {}
    init = lmod_init()
    # not /usr/local/bin: this machine's own tools (docker, nvcc) are no site's
    env = {"PATH": f"{bin_dir(base, c)}:/usr/bin:/bin"}
    if init:
        env.update({"BASH_ENV": init, "MODULEPATH": str(module_path(base, c))})
    return env
