"""The Flask application wiring real adapters to the diagnosis workflow (SPEC sections 6-10)."""
