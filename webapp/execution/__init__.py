"""Where runs execute and how their progress travels.

* :mod:`.jobs` - a run to execute (``RunJob``) and executing one, publishing its events;
* :mod:`.executors` - ``RUN_EXECUTOR=thread`` (an in-process pool) or ``celery`` (workers on
  the Redis broker; the web process only enqueues);
* :mod:`.celery_app` / :mod:`.tasks` - the Celery application and its one thin task;
* :mod:`.events` - each run's events in a capped, expiring Redis Stream (any web worker relays
  any run, clients resume with ``Last-Event-ID``), or in process without Redis;
* :mod:`.streams` - a run's events relayed from its event log to a response as server-sent
  events;
* :mod:`.leases` - heartbeats of the runs a process holds and the reaper of runs whose holder
  died;
* :mod:`.telemetry` - OpenTelemetry spans of each run (``OTEL_EXPORTER_OTLP_ENDPOINT``).
"""
