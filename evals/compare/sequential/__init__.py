"""Sequential sampling: when a cell or a paired row has seen enough samples to be decided, with error
rates that stay honest however early it stops (the intervals are `evals.confseq`'s)."""
