"""Annotator reliability beyond raw agreement: the Dawid-Skene model of categorical answers.

Each annotator j has a confusion matrix pi_j[k, l] = P(answers l | true class k); items have a class prior
p[k]. EM (Dawid & Skene 1979): start from the per-item vote shares, then alternate

- M step: p[k] = mean over items of T[i, k]; pi_j[k, l] = sum of T[i, k] over j's answers l, normalised
  per row (with ``smoothing`` added to every cell so a class an annotator never met stays defined);
- E step: T[i, k] proportional to p[k] * prod over i's answers (j, l) of pi_j[k, l] (in logs),

until the largest change of T is below ``tol``. An annotator's accuracy is sum_k p[k] * pi_j[k, k]: the
chance they give the true class of a random item. Plain arrays in, plain arrays out (numpy only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["DawidSkene", "dawid_skene"]


@dataclass(frozen=True)
class DawidSkene:
    classes: list[object]
    annotators: list[object]
    items: list[object]
    priors: np.ndarray  # (K,)
    confusion: np.ndarray  # (J, K, K): row = true class, column = answer
    posteriors: np.ndarray  # (I, K)
    n_iterations: int
    converged: bool

    @property
    def accuracy(self) -> dict[object, float]:
        """Per annotator: the estimated chance of answering an item's true class."""
        diagonal = np.einsum("jkk->jk", self.confusion)
        return {a: float(diagonal[j] @ self.priors) for j, a in enumerate(self.annotators)}

    @property
    def labels(self) -> dict[object, object]:
        """Per item: the most probable class."""
        best = self.posteriors.argmax(axis=1)
        return {item: self.classes[best[i]] for i, item in enumerate(self.items)}


def _codes(values: Sequence[object]) -> tuple[np.ndarray, list[object]]:
    uniques = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(uniques)}
    return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values)), uniques


def dawid_skene(
    items: Sequence[object],
    annotators: Sequence[object],
    answers: Sequence[object],
    *,
    classes: Sequence[object] | None = None,
    max_iterations: int = 100,
    tol: float = 1e-6,
    smoothing: float = 0.01,
) -> DawidSkene:
    """Fit Dawid-Skene on long answers (one (item, annotator, answer) triple per row).

    ``classes`` fixes the class order (default: order of first appearance); an answer outside it raises
    ``ValueError`` naming the row.
    """
    if not (len(items) == len(annotators) == len(answers)):
        raise ValueError(
            f"items, annotators and answers differ in length: {len(items)}, {len(annotators)}, {len(answers)}"
        )
    if not answers:
        raise ValueError("no answers to fit")
    item_codes, item_list = _codes(items)
    annotator_codes, annotator_list = _codes(annotators)
    class_list = list(dict.fromkeys(answers)) if classes is None else list(classes)
    class_index = {c: k for k, c in enumerate(class_list)}
    for row, answer in enumerate(answers):
        if answer not in class_index:
            raise ValueError(f"row {row}: answer {answer!r} is not one of the classes {class_list}")
    answer_codes = np.fromiter((class_index[a] for a in answers), dtype=np.int64, count=len(answers))
    n_items, n_annotators, n_classes = len(item_list), len(annotator_list), len(class_list)

    # Start from the vote shares of each item.
    posteriors = np.zeros((n_items, n_classes))
    np.add.at(posteriors, (item_codes, answer_codes), 1.0)
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    converged = False
    n_iterations = 0
    priors = np.full(n_classes, 1.0 / n_classes)
    confusion = np.full((n_annotators, n_classes, n_classes), 1.0 / n_classes)
    for _ in range(max_iterations):
        n_iterations += 1
        priors = posteriors.mean(axis=0)
        counts = np.full((n_annotators, n_classes, n_classes), smoothing)
        # counts[j, :, l] += T[i, :] for every answer (i, j, l)
        np.add.at(counts, (annotator_codes, slice(None), answer_codes), posteriors[item_codes])
        confusion = counts / counts.sum(axis=2, keepdims=True)
        log_likelihood = np.tile(np.log(np.clip(priors, 1e-300, None)), (n_items, 1))
        np.add.at(log_likelihood, item_codes, np.log(confusion[annotator_codes, :, answer_codes]))
        log_likelihood -= log_likelihood.max(axis=1, keepdims=True)
        updated = np.exp(log_likelihood)
        updated /= updated.sum(axis=1, keepdims=True)
        change = float(np.abs(updated - posteriors).max())
        posteriors = updated
        if change < tol:
            converged = True
            break
    return DawidSkene(
        classes=class_list,
        annotators=annotator_list,
        items=item_list,
        priors=priors,
        confusion=confusion,
        posteriors=posteriors,
        n_iterations=n_iterations,
        converged=converged,
    )
