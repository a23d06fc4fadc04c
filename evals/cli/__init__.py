"""One module per ctxprobe subcommand; each defines register(subparsers)."""
