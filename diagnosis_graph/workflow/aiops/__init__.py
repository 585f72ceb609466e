"""AIOps on the engine: a supervisor StateGraph over per-alert investigations."""
