"""Application services: the run lifecycle, session history and the adapters around them."""
