"""Cross-site workflows: a DAG of job steps with data edges (see `engine` and `model`)."""

from .model import Step, StepInput, StepView, Workflow, WorkflowView, load_workflow, parse_workflow

__all__ = ["Step", "StepInput", "StepView", "Workflow", "WorkflowView", "load_workflow",
           "parse_workflow"]
