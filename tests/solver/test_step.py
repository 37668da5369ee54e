"""Step plumbing: warm-start matching by contact key."""
import numpy as np
import pytest

from solver.step import carry_over


@pytest.mark.parametrize("seed", range(5))
def test_carry_over_matches_a_dictionary_lookup(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        big = 10 ** int(rng.integers(2, 17))  # small keys collide a lot, huge ones overflow
        prev = np.unique(rng.integers(0, big, size=int(rng.integers(1, 400))))
        rng.shuffle(prev)
        lam = rng.random(prev.size) + 0.5
        keys = np.unique(np.concatenate([rng.choice(prev, size=min(prev.size, 60),
                                                    replace=False),
                                         rng.integers(0, big, size=30)]))
        rng.shuffle(keys)
        out = np.zeros(keys.size)
        carry_over(prev, lam, keys, out)
        lookup = dict(zip(prev.tolist(), lam.tolist()))
        np.testing.assert_array_equal(out, [lookup.get(k, 0.0) for k in keys.tolist()])
