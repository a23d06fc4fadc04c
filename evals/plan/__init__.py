"""Cache and memory budget of a served model, from its config.json alone.

`layers` reads which layer is which kind (full attention, MLA, sliding window, linear attention),
`budget` does the byte arithmetic, `report` renders the table and the JSON record.
"""

from ctxprobe.evals.plan.budget import BudgetOptions, GpuBudget, ModelBudget, plan_budget
from ctxprobe.evals.plan.layers import ModelLayers, read_layers
from ctxprobe.evals.plan.report import PlanReport, build_report, render_table

__all__ = [
    "BudgetOptions",
    "GpuBudget",
    "ModelBudget",
    "ModelLayers",
    "PlanReport",
    "build_report",
    "plan_budget",
    "read_layers",
    "render_table",
]
