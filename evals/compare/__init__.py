"""Paired comparison of runs of one suite: which build loses recall, where, and whether it is real.

Two runs of one suite hold the same prompts, so each sample pairs with its twin and the question becomes
one about discordant pairs (exact McNemar), not two independent accuracies."""
