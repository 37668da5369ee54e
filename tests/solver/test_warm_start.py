"""The warm start's matching of last step's impulses by contact key, against a dictionary."""
import numpy as np
import pytest

from solver.warm_start import carry_over, carry_over_rows


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


@pytest.mark.parametrize("parts", [1, 2, 3])
@pytest.mark.parametrize("prev_rows, rows", [(3, 3), (3, 6), (6, 3), (6, 6), (1, 3), (1, 1)])
@pytest.mark.parametrize("seed", range(4))
def test_carry_over_rows_matches_a_dictionary_lookup(seed, prev_rows, rows, parts):
    """The contacts in the previous order with some dropped, added or swapped (the in-order
    pass, its first miss, shifted runs, the hash table), and shuffled; inline (one part) and
    with the lookups in 2-3 shares at once (the step in blocks)."""
    rng = np.random.default_rng(seed)
    for trial in range(40):
        big = 10 ** int(rng.integers(2, 17))
        prev = np.unique(rng.integers(0, big, size=int(rng.integers(1, 300))))
        rng.shuffle(prev)
        lam = rng.random((prev.size, prev_rows)) + 0.5
        keep = prev[rng.random(prev.size) < 0.9]
        new = rng.integers(0, big, size=int(rng.integers(0, 8)))
        keys = np.concatenate([keep[:keep.size // 2], new, keep[keep.size // 2:]])
        keys = keys[np.sort(np.unique(keys, return_index=True)[1])]
        if trial % 4 == 1 and keys.size > 1:
            i, j = rng.integers(0, keys.size, size=2)
            keys[[i, j]] = keys[[j, i]]
        elif trial % 4 == 2:
            rng.shuffle(keys)
        out = np.full((keys.size, rows), -1.0)
        carry_over_rows(prev, lam.ravel(), prev_rows, keys, out.ravel(), rows, parts)
        lookup = dict(zip(prev.tolist(), lam.tolist()))
        common = min(prev_rows, rows)
        want = np.full((keys.size, rows), -1.0)
        for c, k in enumerate(keys.tolist()):
            if k in lookup:
                want[c, :common] = lookup[k][:common]
        np.testing.assert_array_equal(out, want)
