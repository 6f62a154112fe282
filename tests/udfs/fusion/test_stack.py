import numpy as np
import pytest

from udfs.fusion.stack import stack_runs


def test_items_are_the_union_in_key_order():
    st = stack_runs(
        [0, 0, 0, 1],
        np.array(["a", "b", "b", "a"], dtype=object),
        [1, 0, 1, 0],
        [1, 1, 2, 1],
        [0.9, 0.8, 0.3, 0.5],
        2,
        2,
    )
    assert st.offsets.tolist() == [0, 2, 3] and st.item_key.tolist() == ["a", "b", "a"]
    np.testing.assert_array_equal(st.scores, [[np.nan, 0.9], [0.8, 0.3], [0.5, np.nan]])
    assert st.ranks.tolist() == [[0, 1], [1, 2], [1, 0]] and st.first_row.tolist() == [0, 1, 3]


@pytest.mark.parametrize(
    "args, message",
    [
        (([0, 0], ["a", "a"], [0, 0], [1, 2], [0.5, 0.4], 1, 1), "lists the same document twice"),
        (([1, 0], ["a", "b"], [0, 0], [1, 1], [0.5, 0.4], 2, 1), "sorted by group"),
        (([0, 0], ["b", "a"], [0, 0], [1, 2], [0.5, 0.4], 1, 1), "sorted by document key"),
        (([0], ["a"], [0], [0], [0.5], 1, 1), "ranks be >= 1"),
        (([0], ["a"], [0], [1], [float("nan")], 1, 1), "scores not NaN"),
        (([1], ["a"], [0], [1], [0.5], 2, 1), "group 0 has no rows"),
    ],
)
def test_bad_input_is_an_error(args, message):
    g, key, *rest = args
    with pytest.raises(ValueError, match=message):
        stack_runs(np.array(g), np.array(key, dtype=object), *rest)
