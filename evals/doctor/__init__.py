"""`ctxprobe doctor ENDPOINT`: what an endpoint exposes that ctxprobe uses, and how to turn on the rest."""
