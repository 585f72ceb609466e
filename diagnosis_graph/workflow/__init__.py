"""The diagnosis workflow built on the engine: topology, routing and trace."""
