"""Where runs execute (:mod:`.executors`: a pool here or Celery workers), their events
(:mod:`.events`, relayed as SSE by :mod:`.streams`), their leases and the reaper
(:mod:`.leases`) and their OpenTelemetry spans (:mod:`.telemetry`).
"""
