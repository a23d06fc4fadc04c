"""Tables, heatmaps and the summary files of a run folder."""
