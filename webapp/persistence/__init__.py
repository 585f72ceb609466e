"""Everything a run leaves behind and reads back: models, database binding, run store, audit
store, run records and session history (docs/runs.md says what is committed when)."""
