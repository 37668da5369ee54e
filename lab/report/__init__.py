"""Measurements and what is made of them: the comparison engine, the series of frozen problems
(frictionless and frictional), the exit-status experiment, the verdicts on the sources' claims,
the figures, and results/RESULTS.md with results.json."""
