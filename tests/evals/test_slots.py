"""Priority slots: never more than n holders, a lower priority number served first (in arrival order within
one), and a cancelled waiter leaves the queue, or, handed the slot just as it was cancelled, passes it on
instead of losing it."""

from __future__ import annotations

import asyncio

from ctxprobe.evals.run.send.slots import PrioritySlots


def test_at_most_n_holders_and_the_lower_priority_first() -> None:
    async def go() -> tuple[list[str], int]:
        slots, order, live, peak = PrioritySlots(2), [], [0], [0]

        async def holder(name: str, priority: int) -> None:
            async with slots.hold(priority):
                live[0] += 1
                peak[0] = max(peak[0], live[0])
                order.append(name)
                await asyncio.sleep(0.01)
                live[0] -= 1

        tasks = [asyncio.create_task(holder(f"tail{i}", 1)) for i in range(4)]
        await asyncio.sleep(0)  # two tails hold the slots, two wait
        tasks += [asyncio.create_task(holder(f"head{i}", 0)) for i in range(2)]
        await asyncio.gather(*tasks)
        return order, peak[0]

    order, peak = asyncio.run(go())
    assert peak == 2
    assert order == ["tail0", "tail1", "head0", "head1", "tail2", "tail3"]


def test_a_cancelled_waiter_passes_its_slot_on() -> None:
    async def go() -> list[str]:
        slots, got = PrioritySlots(1), []

        async def holder(name: str) -> None:
            async with slots.hold():
                got.append(name)
                await asyncio.sleep(0.01)

        first = asyncio.create_task(holder("first"))
        await asyncio.sleep(0)
        doomed, last = asyncio.create_task(holder("doomed")), asyncio.create_task(holder("last"))
        await asyncio.sleep(0)
        doomed.cancel()
        await asyncio.gather(first, last, return_exceptions=True)
        assert doomed.cancelled()
        async with asyncio.timeout(1):  # the slot is free again
            async with slots.hold():
                got.append("after")
        return got

    assert asyncio.run(go()) == ["first", "last", "after"]


def test_a_waiter_cancelled_just_as_it_was_handed_the_slot_passes_it_on() -> None:
    async def go() -> list[str]:
        slots, got = PrioritySlots(1), []
        doomed: list[asyncio.Task[None]] = []

        async def holder(name: str) -> None:
            async with slots.hold():
                got.append(name)
                await asyncio.sleep(0.01)
            if name == "first":
                doomed[0].cancel()  # its turn was set as "first" let go; it has not run since

        first = asyncio.create_task(holder("first"))
        await asyncio.sleep(0)
        doomed.append(asyncio.create_task(holder("doomed")))
        last = asyncio.create_task(holder("last"))
        async with asyncio.timeout(2):  # a slot lost with the cancelled waiter would leave "last" waiting
            await asyncio.gather(first, last, doomed[0], return_exceptions=True)
        assert doomed[0].cancelled()
        return got

    assert asyncio.run(go()) == ["first", "last"]
