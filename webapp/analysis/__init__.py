"""Analysis of telemetry and questions, independent of any model or backend.

Time expressions (``timeexpr``), onsets (``onsets``), log templates (``logpatterns``), service
names (``names``), the question's language (``language``), series read through the telemetry
port (``series``), and the raw outputs of the ``detect_anomalies``, ``log_patterns`` and
``triage`` tools (``anomalies``, ``triage``).

Nothing here names a service, metric or phrase of any dataset: thresholds are named constants
with their reasons beside them.
"""
