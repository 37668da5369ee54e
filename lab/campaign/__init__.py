"""Solver campaigns: collections of frozen FCLIB problems (collect), one task per (problem,
solver, settings) (tasks), run on Dask (run), each finished task one row of a Parquet table
(table). Qt-free, as all of lab/."""
