"""`ctxprobe limit`: the advertised, configured, accepted and effective context lengths of an endpoint."""
