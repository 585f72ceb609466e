"""The second world generator and scorer, written without reading the analyser or the first one.

``systems`` hold four domains (streaming video, parcels, food delivery, card banking) as
service catalogs; ``mechanisms`` thirteen ways they fail (``faults`` says how a fault is
described and bound to services); ``world`` picks a system, four incidents and the noise for a
seed; ``signals`` and ``metric_catalog`` make the metrics, ``chatter``, ``incident_logs``,
``logs``, ``styles`` and ``templates`` the logs in eight real formats; ``writer`` writes it all
as a user would point the product at it (``TELEMETRY_DIR`` and ``LOG_DIR``);
``truth`` reads the ground truth back from the telemetry; ``questions``/``cases`` ask it in
English and Chinese; ``reading`` and ``scoring`` judge the answers; ``run`` and ``report``
run them through the product's chat path and print the tables.
"""
