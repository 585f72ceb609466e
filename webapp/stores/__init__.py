"""Storage adapters for the audit ports: in-memory here, peewee in ``webapp.models``."""
