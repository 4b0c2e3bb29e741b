from hypothesis import given, settings
from hypothesis import strategies as st

from datasets_app.domain.text_diff import DiffOp, diff_words, tokenize


def test_tokenize_keeps_words_punctuation_and_whitespace():
    assert tokenize("Ba'na entar ka alun-alun,  ya?") == [
        "Ba'na",
        " ",
        "entar",
        " ",
        "ka",
        " ",
        "alun-alun",
        ",",
        "  ",
        "ya",
        "?",
    ]


def test_single_word_replaced():
    diff = diff_words("Kula badhe tindak dhateng peken.", "Kula badhe tindak dhateng pasar.")
    assert diff.ops == (
        DiffOp("equal", "Kula badhe tindak dhateng ", "Kula badhe tindak dhateng "),
        DiffOp("replace", "peken", "pasar"),
        DiffOp("equal", ".", "."),
    )
    assert (diff.words_changed, diff.words_deleted, diff.words_inserted) == (1, 1, 1)
    assert (diff.old_words, diff.new_words) == (5, 5)
    assert not diff.unchanged


def test_changes_separated_by_a_space_merge_into_one_replace():
    diff = diff_words("Abdi badé angkat énjing.", "Abdi rék indit isukan.")
    assert diff.ops == (
        DiffOp("equal", "Abdi ", "Abdi "),
        DiffOp("replace", "badé angkat énjing", "rék indit isukan"),
        DiffOp("equal", ".", "."),
    )
    assert diff.words_changed == 3


def test_insert_and_delete():
    inserted = diff_words("Aku mangan sega.", "Aku mangan sega pecel.")
    assert inserted.ops[1] == DiffOp("insert", "", " pecel")
    assert (inserted.words_inserted, inserted.words_deleted, inserted.words_changed) == (1, 0, 1)
    deleted = diff_words("Ibu membeli dua butir telur ayam.", "Ibu membeli telur ayam.")
    assert [op.op for op in deleted.ops] == ["equal", "delete", "equal"]
    assert deleted.ops[1].old == " dua butir"
    assert (deleted.words_deleted, deleted.words_changed) == (2, 2)


def test_whitespace_and_punctuation_changes_count_no_words():
    diff = diff_words("Sugeng enjing,  Pak.", "Sugeng enjing, Pak!")
    assert diff.words_changed == 0
    assert not diff.unchanged
    assert diff.edited == "Sugeng enjing, Pak!"


def test_identical_and_empty_texts():
    same = diff_words("Wilujeng sumping.", "Wilujeng sumping.")
    assert same.unchanged and same.words_changed == 0
    assert same.as_dicts() == [{"op": "equal", "old": "Wilujeng sumping.", "new": "Wilujeng sumping."}]
    empty = diff_words("", "")
    assert empty.ops == () and empty.unchanged
    from_nothing = diff_words("", "Halo dunia")
    assert from_nothing.ops == (DiffOp("insert", "", "Halo dunia"),)
    assert from_nothing.words_changed == 2


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="ab é,.\n'-", max_size=40),
    st.text(alphabet="ab é,.\n'-", max_size=40),
)
def test_diff_rebuilds_both_texts(original, edited):
    diff = diff_words(original, edited)
    assert diff.original == original
    assert diff.edited == edited
    assert diff.words_changed <= max(diff.old_words, 0) + diff.new_words
    assert diff.unchanged == (original == edited)
