"""Known answers for one contact's Coulomb problem u = W λ + q, worked out independently of the
solvers: the definition checked case by case, and every solution of a 3x3 block enumerated
(separation, sticking, and sliding by a dense scan of the slip direction refined by Brent's
method)."""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq


def coulomb_violation(W, q, mu, lam):
    """How far λ is from satisfying Coulomb's law for u = W λ + q, relative to the scale of q
    and of W λ: 0 at a solution. Cases: separate (λ = 0, u_n >= 0), contact (u_n = 0) with
    stick (u_t = 0) or slide (λ_t = -μ λ_n u_t/‖u_t‖)."""
    W, q, lam = np.asarray(W), np.asarray(q), np.asarray(lam)
    u = W @ lam + q
    scale = 1.0 + np.abs(q).max() + np.abs(W @ lam).max()
    lscale = 1.0 + np.abs(lam).max()
    ln, lt, un, ut = lam[0], lam[1:], u[0], u[1:]
    worst = max(0.0, -ln / lscale, (np.linalg.norm(lt) - mu * ln) / lscale)
    if ln <= 1e-12 * lscale:
        return max(worst, -un / scale, np.linalg.norm(lt) / lscale)
    worst = max(worst, abs(un) / scale)
    if np.linalg.norm(lt) < mu * ln * (1 - 1e-9):
        return max(worst, np.linalg.norm(ut) / scale)
    speed = np.linalg.norm(ut)
    if speed <= 1e-12 * scale:
        return worst  # on the cone's edge about to slide: sticking still
    return max(worst, np.linalg.norm(lt + mu * ln * ut / speed) / lscale)


def enumerate_solutions(W, q, mu, scan=20000):
    """Every solution of the local problem (up to the scan's resolution): a list of λ (3,)."""
    W, q = np.asarray(W, dtype=float), np.asarray(q, dtype=float)
    out = []
    if q[0] >= 0.0:
        out.append(np.zeros(3))
    if q[0] >= 0.0 and mu == 0.0:
        return out
    try:
        stick = np.linalg.solve(W, -q)
        if stick[0] > 0 and np.linalg.norm(stick[1:]) <= mu * stick[0]:
            out.append(stick)
    except np.linalg.LinAlgError:
        pass
    if mu == 0.0:
        if q[0] < 0:
            out.append(np.array([-q[0] / W[0, 0], 0.0, 0.0]))
        return out

    def slide(theta):
        s = np.array([np.cos(theta), np.sin(theta)])
        d = np.array([1.0, *(-mu * s)])
        wn = W[0] @ d
        if wn <= 0 or q[0] >= 0:
            return None
        ln = -q[0] / wn
        ut = ln * (W[1:] @ d) + q[1:]
        return s[0] * ut[1] - s[1] * ut[0], s @ ut, ln * d

    thetas = np.linspace(0.0, 2 * np.pi, scan + 1)
    values = [slide(t) for t in thetas]
    for k in range(scan):
        a, b = values[k], values[k + 1]
        if a is None or b is None or np.sign(a[0]) == np.sign(b[0]):
            continue
        root = brentq(lambda t: slide(t)[0], thetas[k], thetas[k + 1], xtol=1e-15, rtol=1e-15)
        _, along, lam = slide(root)
        if along > 0:
            out.append(lam)
    return out


def random_block(rng, coupling):
    """A symmetric positive definite 3x3 block: diag(a, b1, b2) with off-diagonal terms up to
    `coupling` times the geometric mean of their diagonals."""
    d = np.array([rng.uniform(0.2, 3.0), rng.uniform(0.5, 5.0), rng.uniform(0.5, 5.0)])
    while True:  # above coupling 0.5 three such terms can make it indefinite: draw again
        W = np.diag(d)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            W[i, j] = W[j, i] = rng.uniform(-coupling, coupling) * np.sqrt(d[i] * d[j])
        if np.linalg.eigvalsh(W).min() > 1e-3 * d.min():
            return W
