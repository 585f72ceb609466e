"""The generator of the demo dataset and its questions, the first world the eval uses."""
