"""A fixed grid: every recipe of the suite, sent at once."""

from __future__ import annotations

import contextlib

from ctxprobe.evals.run.send.serving import Served
from ctxprobe.evals.run.strategy.base import Sender, Strategy
from ctxprobe.tasks.build import PromptBuilder
from ctxprobe.tasks.sample import Recipe


class Fixed(Strategy):
    def recipes(self, builder: PromptBuilder, served: Served, stack: contextlib.ExitStack) -> list[Recipe]:
        return self._suite_recipes(builder, served)

    async def send(self, todo: list[Recipe], sender: Sender) -> None:
        await sender.send(todo)
