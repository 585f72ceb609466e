"""Everything a run leaves behind and reads back: models, database binding, run store, audit
store, run records and session history.

A run's writes, each committed alone: the session row and the PENDING run (one transaction,
:meth:`.runs.RunStore.open_run`); the claim PENDING -> RUNNING (one conditional UPDATE, so a
redelivered run executes at most once); a step row when its model call returns; the run's tool
invocations in one multi-row INSERT at the end of each node; the graph's checkpoint after each
node that called a model or a tool; the evidence refs and the Finish at the end. A run never
reads its own writes back (its journal holds its counts and invocations).

If its worker dies mid-run, its lease stops being renewed and a reaper in any process puts it
back PENDING and enqueues it again; the worker that claims it resumes after its checkpoint,
its journal restored from its rows. Past ``RUN_MAX_RESUMES`` the reaper fails it
``interrupted: ...`` with the partial trace saved so far: a run never stays RUNNING.
"""
