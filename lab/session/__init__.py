"""A simulation run and what steers it: the run specification (spec), the Session and the typed
commands it applies between steps, what it shows of itself (state, colours, network), its files,
and headless runs (run)."""
