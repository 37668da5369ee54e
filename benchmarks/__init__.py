"""Measurements, not tests: each module is a script run from the repository root as
`python -m benchmarks.<name> --help`. They time the machine they run on, so their figures go to
docs/benchmarks.md (and the pages it links) with the command behind each, never into assertions.

    step            headless step time of this checkout against other checkouts
    scaling         the step by thread count, and the blocked sweep's convergence
    threshold       the pile size from which two threads pay
    friction_cost   what friction costs a step
    solvers         the frictionless solver laboratory's tables
    friction_solvers  the frictional solvers' cost and convergence
    memory          resident memory of one long headless run
    window          what the window costs the simulation
    campaign        a solver campaign's time with 1 and 2 Dask workers (docs/campaigns.md)
"""
