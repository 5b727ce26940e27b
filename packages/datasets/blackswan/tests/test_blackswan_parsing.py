"""The official answer parsing (``inference/mcq/test.py`` and ``testdef.py``), case by case, quirks included."""

from __future__ import annotations

import pytest

from abduct_blackswan.parsing import letter_list, parse_choice, parse_yes_no

OPTIONS = ("The man slipped on the ice.", "A dog pulled the sled.", "The rope snapped.")

CHOICES = [
    # exact letters, and the letter forms the script accepts
    ("A", 0), ("B", 1), ("C", 2),
    ("(B)", 1), ("(C) The rope snapped.", 2), ("B. A dog pulled the sled.", 1),
    ("Answer: C", 2), ("Answer:(B)", 1), ("Answer: B.", 1), ("  A  ", 0),
    # "X." anywhere wins, and the letters are tried in the order A, B, C
    ("I think it is B.", 1), ("B. or maybe A.", 0), ("C. Not A", 2),
    ("the U.S.A. team won", 0),  # the quirk: "A." inside an abbreviation is read as A
    # newlines are removed before the tests
    ("Answer:\nB", 1), ("The answer is\nC.", 2),
    # the option's whole text, case ignored, when no letter form matches (its final dot included)
    ("I'd say the rope snapped.", 2), ("Probably: A DOG PULLED THE SLED.", 1), ("the rope snapped", None),
    # nothing: failed (counted wrong)
    ("", None), ("b", None), ("(d)", None), ("none of them", None), ("The answer is B", None),
    ("a", None), ("Answer:", None),
    # a leading "Answer:" keeps split("Answer:")[1]: only the text up to a second "Answer:"
    ("Answer: maybe\nAnswer: C.", None), ("Answer: C. Answer: A.", 2), ("Answer: B Answer:", 1),
    ("answer: C", None),  # the prefix is case-sensitive; "answer: C" has no letter form
    # "\r" is removed as well as "\n", before the letter tests
    ("B\r\n.", 1), ("(\rC)", 2), ("Answer:\r\nB", 1),
]


@pytest.mark.parametrize("output, expected", CHOICES)
def test_choice_is_read_as_the_official_script_reads_it(output: str, expected: int | None) -> None:
    assert parse_choice(output, OPTIONS) == expected


YES_NO = [
    ("yes", True), ("Yes.", True), ("YES, it is still possible", True), ("  yes", True),
    ("no", False), ("No.", False), ("Not sure", False), ("nothing changes", False),  # starts with "no": the quirk
    ("", None), ("I think yes", None), ("Maybe", None), ("y", None),
    # a leading "Answer:" is dropped as testdef.py drops it (the package's test once said otherwise)
    ("Answer: yes", True), ("Answer: No.", False), ("Answer:\nYes", True), ("Answer:no", False),
    ("Answer: maybe Answer: yes", None),  # only the text up to a second "Answer:"
    ("answer: yes", None),  # the prefix is case-sensitive, the lower-casing comes after it
    # line breaks ("\n" and "\r") are removed before yes/no is looked for
    ("y\r\nes", True), ("n\no", False), ("Answer: \r\nno", False),
]


@pytest.mark.parametrize("output, expected", YES_NO)
def test_yes_no_is_read_as_the_official_script_reads_it(output: str, expected: bool | None) -> None:
    assert parse_yes_no(output) is expected


def test_options_are_shown_with_their_letters() -> None:
    assert letter_list(OPTIONS).splitlines() == [f"({k}) {o}" for k, o in zip("ABC", OPTIONS)]
