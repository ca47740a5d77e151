"""Runtime helpers behind issue 42, point 8: `others` per copy and agent, and restart rows of a
per-agent start that numpy hands over column-major."""

from __future__ import annotations

import numpy as np

from gymwright.runtime.batch import b_others, b_start_rows
from gymwright.runtime.core import rt_others


def test_b_others_leaves_out_each_agents_own_entry_in_index_order() -> None:
    x = np.arange(2 * 3).reshape(2, 3) * 10            # (B=2, n=3) per copy
    me = np.arange(3)[None, :]                          # (1, A=3)
    out = b_others(x[:, None, :], me, 2, 1)             # (B, A, 2)
    assert out.tolist() == [[[10, 20], [0, 20], [0, 10]], [[40, 50], [30, 50], [30, 40]]]
    assert [rt_others(x[1], i).tolist() for i in range(3)] == out[1].tolist()


def test_start_rows_of_a_column_major_start_are_compared_by_row() -> None:
    x = np.asfortranarray(np.array([[2, 3], [2, 3]]))
    assert b_start_rows(x).tolist() == [[2, 3]]
