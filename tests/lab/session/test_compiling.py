"""A Session's compilations: each plan once, said with a kernel count and the time left."""
from __future__ import annotations

import scenes
from lab.session import compiling
from lab.session.compiling import Kernels


def test_progress_counts_kernels_then_finishes(monkeypatch):
    said = []

    def fake_warmup(names, progress, threads, rows, kernels):
        kernels(1, 3, 4.0)
        kernels(3, 3, None)
        kernels(4, 3, None)  # more than measured (another Numba): the bar waits at the end
        return 2.5

    monkeypatch.setattr(compiling, "warmup", fake_warmup)
    k = Kernels(lambda text, done, total: said.append((text, done, total)))
    bowl = scenes.build("bowl", {"mu": 0.5})
    k.ensure(["pgs", "pgs"], bowl, 2)
    assert said[0][1:] == (0, 1) and "compiling Numba kernels for pgs" in said[0][0]
    assert said[1] == ("compiling Numba kernels for pgs: 1 of about 3, about 4 s left", 1, 3)
    assert said[2][1:] == (2, 3) and said[3][1:] == (2, 3) and said[-1] == ("", 0, 0)
    assert k.done == {("pgs", 1, 3)} and k.seconds == 2.5
    said.clear()
    k.ensure(["pgs"], bowl, 2)  # the same plan: nothing to do, nothing said
    assert said == []


def test_an_unmeasured_plan_shows_the_count_on_a_busy_bar(monkeypatch):
    said = []
    monkeypatch.setattr(compiling, "warmup", lambda names, progress, threads, rows, kernels:
                        kernels(5, None, None) or 0.0)
    Kernels(lambda *a: said.append(a)).ensure(["pgs"], scenes.build("bowl", {}), 1)
    assert ("compiling Numba kernels for pgs: 5 compiled", 0, 1) in said
