"""Re-aggregating a subset of captions (a 0/1 weight row, dense or sparse) gives the subset's own corpus score."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from test_diversity_helpers import HUMAN_CAPTIONS, SPARSE_A, SPARSE_B

from annotator.metrics import REGISTRY


# metrics run by another process (METEOR's JVM) share the Java tests' worker
@pytest.mark.parametrize("key", [pytest.param(cls.key, marks=() if cls.in_process else pytest.mark.java)
                                 for cls in REGISTRY])
def test_subset_weights_score_the_subset(key):
    if key in REGISTRY.unavailable([key]):
        pytest.skip(REGISTRY.unavailable([key])[key])
    metric = REGISTRY.create([key])[0]
    refs = [[HUMAN_CAPTIONS[i], SPARSE_B[i]] for i in range(20)]
    stats = metric.stats(SPARSE_A, refs)
    subsets = [[0, 3, 4], list(range(1, 20, 2)), [7]]
    dense = np.zeros((len(subsets), 20))
    for r, rows in enumerate(subsets):
        dense[r, rows] = 1.0
    for weights in (dense, sparse.csr_matrix(dense)):
        got = metric.resample(stats, weights)
        for r, rows in enumerate(subsets):
            want = metric.aggregate(stats[rows]).values
            assert got[r].tolist() == pytest.approx([want[k] for k in metric.score_keys], rel=1e-12)
