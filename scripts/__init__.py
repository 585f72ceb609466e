"""Developer scripts (``make schema``, screenshots, fuzzing, a local model); run as files."""
