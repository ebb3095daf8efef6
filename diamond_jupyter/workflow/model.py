"""A workflow: a DAG of job steps with data edges, read from YAML (or built in Python).

Validation is pure (no site is contacted) and every problem is a BadInput naming it: a cycle
(with its steps), a step that needs an unknown one, an input from a step that is not
upstream, a site that is not configured, an unknown field, a bad path, a gang whose members
depend on each other, a step script that does not parse.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..model import BadInput, JobSpec, JobState, check_text

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
FAILURE_POLICIES = ("resubmit-elsewhere", "stop")
MAX_RETRIES = 10


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _relative_path(value: str, what: str) -> str:
    """A path inside a step's working directory: relative, no '..', not an option."""
    check_text(what, value)
    if not value.strip():
        raise ValueError(f"{what} is empty")
    if value.startswith(("/", "~", "-")):
        raise ValueError(f"{what} {value!r} must be relative to the step's working directory "
                         "(no leading /, ~ or -)")
    if ".." in posixpath.normpath(value).split("/") or posixpath.normpath(value) == ".":
        raise ValueError(f"{what} {value!r} must name a file inside the step's working "
                         "directory (no '..')")
    return value


class StepInput(_Strict):
    """A file another step wrote, copied into this step's working directory first."""

    from_: str = Field(alias="from")  # the upstream step
    path: str  # relative to that step's working directory
    as_: str | None = Field(default=None, alias="as")  # name here (default: the same path)
    size: int | None = None  # expected bytes (placement counts its transfer time)

    @field_validator("path", "as_")
    @classmethod
    def _path(cls, v: str | None) -> str | None:
        return None if v is None else _relative_path(v, "path")

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: Any) -> Any:
        """Bytes as a number or with a unit: 100M, 2.5 GB, 512k."""
        if isinstance(v, str):
            m = _SIZE.fullmatch(v.strip())
            if m is None:
                raise ValueError(f"size {v!r} is not a number of bytes (e.g. 1048576, 100M, "
                                 "2G)")
            from ..dialects.outputs_common import finite_int

            size = finite_int(m.group(1), _UNITS[m.group(2).lower()])
            if size is None:  # 400 digits: no number of bytes
                raise ValueError(f"size {v!r} is not a number of bytes (e.g. 1048576, "
                                 "100M, 2G)")
            return size
        return v

    @property
    def dest(self) -> str:
        return self.as_ or self.path


class Step(_Strict):
    name: str
    script: str  # a batch script in any dialect, or a plain script
    site: str = "auto"
    needs: list[str] = Field(default_factory=list)
    inputs: list[StepInput] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    gang: str | None = None
    retries: int = Field(default=0, ge=0, le=MAX_RETRIES)
    on_failure: Literal["resubmit-elsewhere", "stop"] = "stop"
    dialect: str | None = None  # the script's dialect (default: detected)

    @field_validator("name", "gang")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not _NAME.fullmatch(v):
            raise ValueError(f"{v!r} is not a valid name (letters, digits, _ . -, starting "
                             "with a letter or digit, at most 63 characters)")
        return v

    @field_validator("outputs")
    @classmethod
    def _outputs(cls, v: list[str]) -> list[str]:
        return [_relative_path(p, "output") for p in v]

    @field_validator("script")
    @classmethod
    def _script(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the script is empty")
        check_text("script", v, multiline=True)
        return v

    def spec(self) -> JobSpec:
        """The step's job, parsed from its script (BadInput naming the step)."""
        from ..dialects import get_script_dialect
        from ..dialects.translate import count_sentinels, detect_dialect

        try:
            if self.dialect is None and not any(count_sentinels(self.script).values()):
                spec = JobSpec(script=self.script)
            else:
                dialect = get_script_dialect(self.dialect or detect_dialect(self.script))
                spec = dialect.parse_script(self.script)
        except BadInput as e:
            raise BadInput(f"step {self.name!r}: {e}") from None
        return spec if spec.name else spec.model_copy(update={"name": self.name})


class Workflow(_Strict):
    name: str
    steps: list[Step] = Field(min_length=1)
    # false: a step is submitted only when every step it needs has ended (no queue-ahead;
    # what a plain script does; kept to compare)
    queue_ahead: bool = True

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.fullmatch(v):
            raise ValueError(f"{v!r} is not a valid name (letters, digits, _ . -)")
        return v

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def upstream(self, name: str) -> set[str]:
        """Every step `name` waits for, directly or through others."""
        seen: set[str] = set()
        todo = list(self.step(name).needs)
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += self.step(n).needs
        return seen

    def downstream(self, name: str) -> set[str]:
        return {s.name for s in self.steps if name in self.upstream(s.name)}

    def order(self) -> list[str]:
        """Step names, every step after the steps it needs (file order among equals)."""
        done: list[str] = []
        left = [s.name for s in self.steps]
        while left:
            ready = [n for n in left if set(self.step(n).needs) <= set(done)]
            done += ready
            left = [n for n in left if n not in ready]
        return done

    def gangs(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in self.steps:
            if s.gang:
                out.setdefault(s.gang, []).append(s.name)
        return out

    def check(self, sites: Iterable[str] | None = None) -> Workflow:
        """The graph's rules (BadInput naming the problem); `sites`: the configured ones."""
        names = [s.name for s in self.steps]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise BadInput(f"workflow {self.name!r}: step name {dup[0]!r} is used twice")
        known = set(names)
        for s in self.steps:
            for n in s.needs:
                if n not in known:
                    raise BadInput(f"step {s.name!r} needs unknown step {n!r} (steps: "
                                   f"{', '.join(names)})")
                if n == s.name:
                    raise BadInput(f"step {s.name!r} needs itself (a cycle)")
        cycle = _find_cycle(self)
        if cycle:
            raise BadInput(f"workflow {self.name!r} has a cycle: {' -> '.join(cycle)}")
        for s in self.steps:
            up = self.upstream(s.name)
            for i, inp in enumerate(s.inputs):
                if inp.from_ not in known:
                    raise BadInput(f"step {s.name!r}: inputs[{i}] is from unknown step "
                                   f"{inp.from_!r} (steps: {', '.join(names)})")
                if inp.from_ not in up:
                    raise BadInput(f"step {s.name!r}: inputs[{i}] is from {inp.from_!r}, which "
                                   f"is not upstream of it (add it to needs; needs: "
                                   f"{', '.join(s.needs) or 'none'})")
            dests = [inp.dest for inp in s.inputs]
            twice = sorted({d for d in dests if dests.count(d) > 1})
            if twice:
                raise BadInput(f"step {s.name!r}: two inputs arrive as {twice[0]!r}; name one "
                               "with `as:`")
        for gang, members in self.gangs().items():
            for m in members:
                inside = self.upstream(m) & set(members)
                if inside:
                    raise BadInput(f"gang {gang!r}: step {m!r} waits for {sorted(inside)[0]!r} "
                                   "of the same gang, but a gang's steps start together")
        if sites is not None:
            allowed = list(sites)
            for s in self.steps:
                if s.site != "auto" and s.site not in allowed:
                    raise BadInput(f"step {s.name!r}: unknown site {s.site!r} (known: "
                                   f"{', '.join(allowed) or 'none'}, or auto)")
        for s in self.steps:
            s.spec()  # each script parses
        return self


def _find_cycle(wf: Workflow) -> list[str] | None:
    """One cycle as a path that ends where it starts, or None."""
    color: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        color[n] = 1
        stack.append(n)
        for m in wf.step(n).needs:
            if color.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if color.get(m) is None and (found := visit(m)):
                return found
        stack.pop()
        color[n] = 2
        return None

    for s in wf.steps:
        if color.get(s.name) is None and (found := visit(s.name)):
            return list(reversed(found))  # in the direction the work flows
    return None


def _where(wf_data: Any, loc: tuple[Any, ...]) -> str:
    """A pydantic error location in the file's own words: steps[train].retries."""
    out = ""
    for i, part in enumerate(loc):
        if isinstance(part, int):
            name = None
            if loc[:i] == ("steps",) and isinstance(wf_data, dict):
                steps = wf_data.get("steps")
                if isinstance(steps, list) and part < len(steps) and \
                        isinstance(steps[part], dict):
                    name = steps[part].get("name")
            out += f"[{name!r}]" if isinstance(name, str) else f"[{part}]"
        else:
            out += ("." if out else "") + {"from_": "from", "as_": "as"}.get(str(part), str(part))
    return out or "the workflow"


def parse_workflow(data: Any, *, sites: Iterable[str] | None = None,
                   source: str = "the workflow") -> Workflow:
    """A Workflow from parsed YAML/JSON data, checked; BadInput naming the first problem."""
    if isinstance(data, Workflow):
        return data.check(sites)
    if not isinstance(data, dict):
        raise BadInput(f"{source}: expected a mapping with `name` and `steps`, got "
                       f"{type(data).__name__}")
    try:
        wf = Workflow.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
            fields = {"steps": Step, "inputs": StepInput}
            parent = next((str(p) for p in reversed(err["loc"][:-1])
                           if str(p) in fields), None)
            model = fields.get(parent or "", Workflow)
            if parent == "steps" and len(err["loc"]) > 3 and err["loc"][2] == "inputs":
                model = StepInput
            accepted = [f.alias or n for n, f in model.model_fields.items()]
            msg += f" (accepted: {', '.join(accepted)})"
        elif err["type"] == "missing":
            msg = "is required"
        raise BadInput(f"{source}: {_where(data, tuple(err['loc']))}: {msg}") from None
    return wf.check(sites)


def load_workflow(text_or_path: str | Path, *, sites: Iterable[str] | None = None) -> Workflow:
    """A workflow from a YAML file (a Path) or YAML text (a str)."""
    import yaml

    source = "the workflow"
    text = str(text_or_path)
    if isinstance(text_or_path, Path):
        path = text_or_path.expanduser()
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
        source = str(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise BadInput(f"{source}: not valid YAML{where}: {problem}") from None
    return parse_workflow(data, sites=sites, source=source)


# -- the view the faces print ----------------------------------------------------------------

WorkflowState = Literal["PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                        "UNKNOWN"]


class StepView(BaseModel):
    """One step as the faces show it: `job` is what `diamond status JOB` takes."""

    name: str
    site: str | None = None
    job: str | None = None
    state: JobState = JobState.PENDING
    needs: list[str] = Field(default_factory=list)
    gang: str | None = None
    attempt: int = 0
    reason: str | None = None


class WorkflowView(BaseModel):
    id: str
    name: str
    state: JobState
    steps: list[StepView]
    reason: str | None = None

    def contract(self) -> dict[str, Any]:
        """The CLI's JSON: {"id", "state", "steps": [{"name", "site", "job", "state"}]}."""
        return {"id": self.id, "state": self.state.value, "name": self.name,
                "reason": self.reason,
                "steps": [{"name": s.name, "site": s.site, "job": s.job,
                           "state": s.state.value, "needs": s.needs, "gang": s.gang,
                           "attempt": s.attempt, "reason": s.reason} for s in self.steps]}
