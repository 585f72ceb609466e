"""Analysis of telemetry and questions, independent of any model or backend.

Nothing here names a service, metric or phrase of any dataset: thresholds are named constants
with their reasons beside them.
"""
