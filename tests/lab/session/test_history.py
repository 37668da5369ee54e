"""The history's ring buffer: consecutive steps, the oldest dropped to stay within the memory
budget (the newest always kept), a future cut off, and its text."""
from __future__ import annotations

import numpy as np
import pytest

from lab.session.history import ENTRY_BYTES, MIB, History, HistorySpan, history_text
from solver.step import Checkpoint


def checkpoint(steps: int, n: int = 10) -> Checkpoint:
    """A checkpoint of n marbles without a problem: 13 n + 2 float64 and one int64 key."""
    return Checkpoint(steps, 0.02 * steps, np.full((n, 3), float(steps)), np.zeros((n, 3)),
                      np.zeros((n, 3)), np.zeros((n, 4)), np.array([steps], np.int64),
                      np.array([1.0 + steps]))


SIZE = checkpoint(0).nbytes + ENTRY_BYTES  # a keyframe's entry


def test_a_checkpoint_counts_the_bytes_of_its_arrays():
    assert checkpoint(0).nbytes == (13 * 10 + 1) * 8 + 8


def test_keyframes_between_steps_without_checkpoints_and_the_oldest_kept_is_one():
    """Steps 0..11 with a checkpoint every 4th: each step finds the keyframe before it; the
    budget drops whole stretches so the oldest step kept can be restored."""
    h = History(budget=SIZE + 6 * ENTRY_BYTES)
    for k in range(12):
        h.add(checkpoint(k) if k % 4 == 0 else None, steps=k)
    assert h.first % 4 == 0 and h.get(h.first).checkpoint is not None
    assert h.last == 11 and h.nbytes <= h.budget
    assert h.keyframe(11).steps == 8 and h.keyframe(8).steps == 8
    with pytest.raises(ValueError, match="the first step kept needs its checkpoint"):
        History().add(None, steps=3)


def test_the_oldest_steps_go_first_and_the_budget_holds():
    h = History(budget=5 * SIZE)
    for k in range(12):
        h.add(checkpoint(k))
    assert (len(h), h.first, h.last, h.dropped) == (5, 7, 11, 7)
    assert h.nbytes == 5 * SIZE and h.capacity() == 5
    assert h.get(9).checkpoint.x[0, 0] == 9.0
    assert h.span(10) == HistorySpan(7, 11, 10, 5, 5 * SIZE) and h.span(10).back == 1


def test_the_newest_step_stays_whatever_the_budget():
    h = History(budget=SIZE // 2)
    for k in range(3):
        h.add(checkpoint(k))
    assert (len(h), h.first, h.last) == (1, 2, 2) and h.capacity() == 1


def test_steps_must_follow_each_other_and_outside_ones_are_one_line():
    h = History()
    h.add(checkpoint(4))
    with pytest.raises(ValueError, match="step 6 does not follow step 4 of the history"):
        h.add(checkpoint(6))
    with pytest.raises(KeyError, match=r"step 3 is not in the history \(it holds steps 4 to 4\)"):
        h.get(3)
    with pytest.raises(ValueError, match="budget must be >= 0"):
        History(-1)
    assert History().span(0) is None and History().capacity() == 0


def test_a_future_is_cut_off_and_the_bytes_follow():
    h = History()
    for k in range(10):
        h.add(checkpoint(k))
    assert h.truncate(6) == 3 and h.last == 6 and h.nbytes == 7 * SIZE
    assert h.truncate(6) == 0
    h.add(checkpoint(7))  # the new future follows the step gone on from
    h.clear()
    assert len(h) == 0 and h.nbytes == 0


def test_the_text_says_where_the_world_is():
    assert history_text(None) == "history: no steps kept yet"
    span = HistorySpan(0, 60, 40, 700, 23 * MIB)
    assert history_text(span) == "step 40 of 0–60 (20 back), ~700 fit (23 MiB)"
    assert "back" not in history_text(HistorySpan(0, 60, 60, 700, 0))
