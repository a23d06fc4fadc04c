"""`--against BASELINE`: the baseline's samples, sent in paired rounds until every row of the gate is decided
or the baseline's samples are used up (`evals.compare.against`). With `--baseline-endpoint`, the samples the
baseline lacks go to its endpoint in the same rounds (lockstep, `evals.run.lockstep`), into a run folder of
their own inside the candidate's. The manifest keeps the gate's report; the CI outputs follow the run."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ctxprobe.evals.compare.against import (
    PairedRun,
    gate_cases,
    gate_report,
    next_paired_round,
    paired_run,
    pass_reach,
    update,
)
from ctxprobe.evals.records.manifest import RunManifest, RunStatus
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.bookkeeping import count_samples, run_manifest
from ctxprobe.evals.run.lockstep import (
    baseline_endpoint,
    baseline_recorded,
    extension_recipes,
    extension_store,
    missing_on_baseline,
    scored,
)
from ctxprobe.evals.run.result import RunResult
from ctxprobe.evals.run.send.loop import Progress, planned_tokens
from ctxprobe.evals.run.send.options import AgainstOptions
from ctxprobe.evals.run.send.serving import Served, serving
from ctxprobe.evals.run.strategy.base import Sender, Strategy
from ctxprobe.tasks.build import PromptBuilder
from ctxprobe.tasks.sample import Recipe


@dataclass
class Lockstep:
    """The baseline endpoint's side of a lockstep paired run: where it is served, its run folder."""

    served: Served
    store: RunStore
    manifest: RunManifest
    progress: Progress


class Paired(Strategy):
    paired: PairedRun
    lockstep: Lockstep | None = None

    @property
    def gate(self) -> AgainstOptions:
        """The baseline and the gate (`--against`, `--fail-if-drop`, `--metric`, ...)."""
        assert self.plan.against is not None
        return self.plan.against

    def recipes(self, builder: PromptBuilder, served: Served, stack: contextlib.ExitStack) -> list[Recipe]:
        gate = self.gate
        extend = None
        if gate.baseline_endpoint:
            cap = self.plan.rule.cap(self.plan.suite.samples)
            extend = lambda base: extension_recipes(base, cap, builder.recipe_tokenizer)  # noqa: E731
        assert gate.against is not None
        self.paired = paired_run(
            gate.against, gate.fail_if_drop or 0.0, 0.05, builder.tokenizer, extend, gate.metric, gate.kl_margin
        )
        if (short := pass_reach(self.paired)) is not None:
            print(f"ctxprobe: {short}", file=sys.stderr)
        if self.paired.extension:
            self.lockstep = self._open_lockstep(stack, served)
        self.planned = self.paired.recipes
        return self.planned

    def start(self, manifest: RunManifest) -> None:
        # the fixed alternative: the candidate sent every sample the baseline pairs with
        manifest.fixed_grid_prompt_tokens = sum(r.context_tokens for r in self.planned)

    async def send(self, todo: list[Recipe], sender: Sender) -> None:
        """Round after round until every row is decided or used up; a round's samples the baseline lacks go to
        both endpoints at once."""
        paired, lockstep = self.paired, self.lockstep
        base_sender = (
            Sender(lockstep.served, lockstep.store, sender.order, lockstep.progress, None, sender.budget)
            if lockstep is not None
            else None
        )
        sent = set[str]()
        while True:
            if lockstep is not None:
                paired.add_baseline(scored(lockstep.store.latest_records().values()))
            batch = next_paired_round(paired, list(sender.store.latest_records().values()), sent)
            if not batch:
                return
            sent.update(r.sample_id() for r in batch)
            sends = [sender.send(batch)]
            if base_sender is not None and (missing := missing_on_baseline(batch, paired.extension, base_sender.store)):
                base_sender.progress.total += len(missing)
                base_sender.progress.total_tokens += planned_tokens(missing)
                sends.append(base_sender.send(missing))
            await asyncio.gather(*sends)

    def close(self, manifest: RunManifest, latest: dict[str, SampleRecord]) -> None:
        if self.lockstep is not None:
            self._close_lockstep(manifest.status)
        update(self.paired, list(latest.values()))
        manifest.paired_gate = gate_report(self.paired)

    def outputs(self, result: RunResult) -> list[Path]:
        from ctxprobe.evals.compare.sequential.ci_outputs import write_ci_outputs

        report = result.manifest.paired_gate
        if report is None:
            return []
        cases = gate_cases(report, self.plan.outputs.label or result.run_dir.name)
        control = result.manifest.cache_check
        faults = [control.line()] if control is not None and control.fault else []
        return write_ci_outputs(cases, "ctxprobe paired gate", self.gate.junit, self.gate.summary_md, faults)

    def _open_lockstep(self, stack: contextlib.ExitStack, served: Served) -> Lockstep:
        """Serve `--baseline-endpoint` (prompts built with the candidate's counter: the same text and ids) and
        open the extension's run folder, its manifest written as running."""
        plan, urls = self.plan, self.gate.baseline_endpoint
        base_served = stack.enter_context(serving(baseline_endpoint(plan.endpoint, urls), plan.suite, plan.logprobs))
        base_served = dataclasses.replace(base_served, counter=served.counter)
        ext = extension_store(plan.store.dir)
        ext.dir.mkdir(exist_ok=True)
        earlier = ext.load_manifest() if (ext.dir / "manifest.json").is_file() else None
        label = f"{plan.outputs.label}-baseline-extension"
        manifest = run_manifest(
            baseline_recorded(plan.recorded, urls, label),
            label,
            plan.suite,
            base_served,
            self.paired.baseline.manifest.tokenizer,
            earlier,
            len(self.paired.extension),
        )
        ext.write_manifest(manifest)
        stack.callback(ext.close)
        return Lockstep(base_served, ext, manifest, Progress(total=0))

    def _close_lockstep(self, status: RunStatus) -> None:
        """The extension's manifest, final: how many samples it holds, its status the run's."""
        lockstep = self.lockstep
        assert lockstep is not None
        lockstep.store.close()
        latest = lockstep.store.latest_records()
        self.paired.add_baseline(scored(latest.values()))
        manifest = lockstep.manifest
        manifest.status = status
        count_samples(manifest, latest)
        manifest.updated = time.time()
        lockstep.store.write_manifest(manifest)
