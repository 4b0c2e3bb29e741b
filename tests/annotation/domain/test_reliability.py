"""Dawid-Skene: recovery of known annotator accuracies from simulated answers, and hand-checked cases."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.domain.reliability import dawid_skene

# Absolute tolerance on each annotator's accuracy: against the accuracies the simulation was built with, and
# against the accuracies it realised (the share of right answers each simulated annotator actually gave).
NOMINAL_TOLERANCE = 0.05
REALISED_TOLERANCE = 0.02


def test_recovers_known_accuracies_of_simulated_annotators():
    rng = np.random.default_rng(7)
    nominal = np.array([0.95, 0.9, 0.8, 0.7, 0.6, 0.45])
    n_items, classes = 2000, np.array(["A", "B", "tie"])
    truth = rng.integers(0, 3, size=n_items)
    shape = (len(nominal), n_items)
    seen = rng.random(shape) >= 0.2  # each annotator sees about 80% of the items
    right = rng.random(shape) < nominal[:, None]
    wrong = (truth[None, :] + rng.integers(1, 3, size=shape)) % 3  # a wrong class, uniformly
    answer = np.where(right, truth[None, :], wrong)
    who, item = np.nonzero(seen)
    fit = dawid_skene(
        item.tolist(), [f"a{j}" for j in who], classes[answer[who, item]].tolist(), classes=list(classes)
    )
    assert fit.converged
    estimated = np.array([fit.accuracy[f"a{j}"] for j in range(len(nominal))])
    realised = np.array([right[j][seen[j]].mean() for j in range(len(nominal))])
    assert np.abs(estimated - nominal).max() < NOMINAL_TOLERANCE, estimated
    assert np.abs(estimated - realised).max() < REALISED_TOLERANCE, (estimated, realised)
    labels = fit.labels
    ds_right = np.mean([labels[i] == classes[truth[i]] for i in range(n_items)])
    votes = np.zeros((n_items, 3))
    np.add.at(votes, (item, answer[who, item]), 1)
    majority_right = np.mean(votes.argmax(axis=1) == truth)  # ties go to the first class
    assert ds_right > 0.95 and ds_right > majority_right


def test_unanimous_answers_give_the_votes_as_posteriors():
    # Two items, three annotators all agreeing: each item's class is certain; priors are 1/2 and 1/2.
    fit = dawid_skene([1, 1, 1, 2, 2, 2], ["x", "y", "z"] * 2, ["A", "A", "A", "B", "B", "B"])
    assert fit.labels == {1: "A", 2: "B"}
    np.testing.assert_allclose(fit.priors, [0.5, 0.5], atol=1e-6)
    # Each annotator answered one A item "A" and one B item "B": with 0.01 smoothing per cell the diagonal
    # is (1 + 0.01) / (1 + 0.02).
    assert fit.accuracy["x"] == pytest.approx(1.01 / 1.02, abs=1e-6)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="differ in length: 2, 1, 2"):
        dawid_skene([1, 2], ["x"], ["A", "B"])
    with pytest.raises(ValueError, match="row 1: answer 'C' is not one of the classes"):
        dawid_skene([1, 2], ["x", "x"], ["A", "C"], classes=["A", "B"])
