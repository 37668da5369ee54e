"""Qt-free orchestration above the numerics, by concern: session (the run specification, the
Session and its typed commands), io (the file formats), report (the solver comparisons, the
verdicts, the figures and the results) and cli (the `marbles-bench` front end)."""
