"""The bundled demo dataset (``webapp/demo/data``, rebuilt by ``make demo-data``)."""
