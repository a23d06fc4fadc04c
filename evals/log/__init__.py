"""What ctxprobe writes and reads back: one typed, versioned record per sample (`SampleRecord`), one
manifest per run (`RunManifest`), the run folder on disk (`RunStore`) and `load_run`. Everything above it
(run, limit, compare, lmeval, report) shares these shapes; this layer imports only `tasks` and the
client's response types."""
