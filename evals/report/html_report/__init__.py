"""`ctxprobe report`: run, limit, compare and history folders rendered into one self-contained HTML page."""
