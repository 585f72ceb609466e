"""Everything a run leaves behind and reads back: models, database binding, run store, audit
store, run records and session history."""
