from __future__ import annotations

import pytest

from journal.metrics import format_number, label_of, metrics_text, objective_is_about

NB = "\u00a0"


@pytest.mark.parametrize(
    ("name", "label"),
    [("score", "score"), ("bestTile", "best tile"), ("pokedexCaught", "pokedex caught"), ("hp_max", "hp max"), ("level2Boss", "level 2 boss")],
)  # fmt: skip
def test_a_metric_reads_as_the_words_of_its_name(name: str, label: str) -> None:
    assert label_of(name) == label


def test_numbers_are_grouped_by_thousands_and_fractions_kept_short() -> None:
    assert [format_number(v) for v in (0, 512, 4520, 1_234_567, -3000, 2.0, 0.5, 1234.125)] == [
        "0", "512", f"4{NB}520", f"1{NB}234{NB}567", f"-3{NB}000", "2", "0.5", f"1{NB}234.12",
    ]  # fmt: skip


def test_metrics_text_in_the_given_order_with_declared_labels_first() -> None:
    assert metrics_text({"score": 4520, "bestTile": 512}) == f"score 4{NB}520 · best tile 512"
    assert metrics_text({"money": 3000}, {"money": "money (¥)"}) == f"money (¥) 3{NB}000"
    assert metrics_text({}) == ""


@pytest.mark.parametrize(
    ("objective", "name", "about"),
    [
        ("Reach the 512 tile", "bestTile", True),
        ("get more tiles together", "bestTile", True),
        ("Reach the best possible position", "bestTile", False),  # "best" alone says nothing
        ("Push the SCORE past 2000", "score", True),
        ("Win a badge in Rustboro", "badges", True),
        ("Fill the Pokédex", "pokedexCaught", True),
        ("Keep merging", "score", False),
        ("scored", "score", False),
    ],
)
def test_which_metrics_an_objective_is_about(objective: str, name: str, about: bool) -> None:
    assert objective_is_about(objective, name) is about
