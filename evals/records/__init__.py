"""What ctxprobe writes and reads back: one typed, versioned record per sample (`SampleRecord`), one
manifest per run (`RunManifest`, with the engine's typed facts), the run folder on disk (`RunStore`),
`load_run`, one record -> row function, and the versioned outputs of limit, compare and history with
their readers. Everything above it (run, limit, compare, lmeval, report) shares these shapes; this layer
imports only `tasks` and the client's response types."""
