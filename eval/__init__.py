"""``make eval``: diagnosis correctness on generated worlds, scored deterministically.

``world``/``series``/``logs``/``telemetry`` generate a world from a seed and write it in the demo
dataset's format; ``questions`` writes its cases; ``runner`` asks them through the product's
chat path; ``scoring`` and ``report`` turn the answers into tables and a JSON line;
``recorded`` replays exported runs as fixtures; ``second`` is an independent generator and
scorer (other domains, mechanisms, log styles and questions). Not product code: nothing under
``webapp`` or ``diagnosis_graph`` imports it.
"""
