"""Analysis of telemetry and questions, independent of any model or backend.

* ``timeexpr`` - ``resolve_window(text, now, default_timezone)``: a question's time
  expression (English and Chinese) as a ``TimeWindow``.
* ``onsets`` - ``detect_onset(points, signal=, kind=, counts=)``: the first significant change
  point of a series, its baseline (before the onset only), incident, change and robust z.
* ``logpatterns`` - ``mine_patterns(records, split)``: log templates counted before and
  after a split (events grouped by ``logevents``); ``named_services(records, services,
  exclude, aliases)``: dependency hints.
* ``names`` - ``resolve_services(text, services, aliases)``: exact, alias, misspelt and partial
  service names, and unknown ones with suggestions; ``described_services(text,
  descriptions)``: the services a business description in English or Chinese points at.
* ``triage`` - the raw output of the ``triage`` tool: every service checked for a change near
  a window, suspects linked by log lines or onset order and grouped into incidents.
* ``language`` - ``question_language(text)``: ``en`` or ``zh``.
* ``series`` - metric points and log counts per bucket read through the ``TelemetryBackend``
  port; ``recent_range(backend)``.
* ``anomalies`` - ``service_anomalies`` / ``service_log_patterns``: the raw outputs of the
  ``detect_anomalies`` and ``log_patterns`` tools.

Nothing here names a service, metric or phrase of any dataset: thresholds are named constants
with their reasons beside them.
"""
