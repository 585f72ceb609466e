"""Tools the agents call, the invocation recorder, telemetry backends and the knowledge index."""
