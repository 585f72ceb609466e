"""Everything a run leaves behind and reads back: models, database binding, run store, audit
store, run records and session history.

How a run writes, and what is committed when:

* **Start** (the request): the session row (created or refreshed) and the PENDING run in one
  transaction (:meth:`.runs.RunStore.open_run`): one commit.
* **Claim** (the executor): PENDING -> RUNNING, one conditional UPDATE, committed at once: it
  is what makes a redelivered run execute at most once, and the lease the reaper reads.
* **Steps and invocations** (:class:`.sql_audit.SqlAudit`): a step's row is inserted when its
  model call returns; the run's tool invocations are kept in its journal and inserted in one
  multi-row INSERT at the end of each node (an agent's execution). On MariaDB and PostgreSQL a
  node's rows share one transaction, committed at the node's end - or at once after a model call
  of 100 ms or more (a real model: the call dwarfs a commit), so with a real model every step is
  committed as it returns and with the offline one a run commits once per node instead of once
  per statement. On SQLite every statement commits alone: SQLite has one writer for the whole
  file, and a transaction held across model calls would stall every other run's writes (its
  commits are cheap: WAL, ``synchronous=normal``).
* **Checkpoint** (:class:`.checkpoints.SqlCheckpointer`): after each node that called a model
  or a tool, once its rows are committed, the graph state replaces the run's ``run_checkpoint``
  row (one upsert, committed alone).
* **End**: the evidence refs (one UPDATE), then the Finish (one UPDATE, retried on a fresh
  connection), each committed alone; the partial trace of a long complex run at most once a
  second from its first second on (none for a run shorter than that).

What a reader sees while a run is going: the run RUNNING; every step of a finished node, and on
a real model every step whose call has returned; every invocation of a finished node. A run's
writes are never read back by the run itself (its journal holds its step indexes, counts,
invocations and conversations).

If its worker dies mid-run: the database rolls back the open node transaction (that node's
steps and invocations are lost; earlier nodes' stay), the run's lease stops being renewed and a
reaper in any process puts it back PENDING and enqueues it again; the worker that claims it
resumes it after its checkpoint, its journal restored from its rows. Past ``RUN_MAX_RESUMES``
the reaper fails it ``interrupted: ...`` with the partial trace saved so far
(:meth:`.runs.RunStore.reap`): a run never stays RUNNING.
"""
