"""Qt-free orchestration above the numerics: the run specification and the Session (typed
commands applied between steps), snapshots, the solver comparison and its report and figures,
and the `marbles-bench` front end."""
