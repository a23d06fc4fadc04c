"""Running a suite: the per-sample record, the run folder on disk, the manifest and the send loop."""
