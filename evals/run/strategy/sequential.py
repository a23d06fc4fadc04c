"""`--stop decided`: the suite planned up to the cap, sent round after round (`evals.run.rounds`) until every
cell is decided or capped; the manifest keeps the rule, the suite's own grid's cost beside it, and why each
cell stopped."""

from __future__ import annotations

import contextlib

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.run.rounds import cell_caps, fixed_grid_tokens, next_round, stop_summary
from ctxprobe.evals.run.send.serving import Served
from ctxprobe.evals.run.strategy.base import Sender, Strategy
from ctxprobe.tasks.build import PromptBuilder
from ctxprobe.tasks.sample import Recipe


class Sequential(Strategy):
    def recipes(self, builder: PromptBuilder, served: Served, stack: contextlib.ExitStack) -> list[Recipe]:
        self.planned = self._suite_recipes(builder, served)
        return self.planned

    def start(self, manifest: RunManifest) -> None:
        manifest.stop = self.plan.rule.model_dump()
        manifest.fixed_grid_prompt_tokens = fixed_grid_tokens(self.plan.suite)

    async def send(self, todo: list[Recipe], sender: Sender) -> None:
        caps, sent = cell_caps(self.planned), set[str]()
        while batch := next_round(self.planned, sender.store.latest_records().values(), self.plan.rule, caps, sent):
            sent.update(r.sample_id() for r in batch)
            await sender.send(batch)

    def close(self, manifest: RunManifest, latest: dict[str, SampleRecord]) -> None:
        manifest.stopped_cells = stop_summary(latest.values(), self.plan.rule, cell_caps(self.planned))
