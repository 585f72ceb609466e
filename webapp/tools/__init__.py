"""Tools the agents call, the invocation recorder and the knowledge index."""
