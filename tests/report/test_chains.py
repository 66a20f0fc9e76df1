"""Each fact is explained once per report; later mentions keep their line and say where the rest is."""

from __future__ import annotations

from gpuadvisor.rules.consultation.result import WhyStep
from gpuadvisor.tui.report.chains import ChainBook, ChainLine, lines_of, walk, why_parts
from tests.report import sample


def s(depth: int, fact: int, text: str = "", repeated: bool = False) -> WhyStep:
    return WhyStep(depth=depth, fact=fact, kind="x", text=text or f"fact {fact}", repeated=repeated)


def shape(lines: list[ChainLine]) -> list[tuple[int, int, str | None]]:
    return [(line.depth, line.step.fact, line.see) for line in lines]


def test_second_chain_drops_an_explained_sub_chain() -> None:
    home: dict[int, str] = {}
    first = walk([s(0, 1), s(1, 2), s(2, 3), s(2, 4), s(1, 5)], "option 1", home)
    assert shape(first) == [(0, 1, None), (1, 2, None), (2, 3, None), (2, 4, None), (1, 5, None)]
    second = walk([s(0, 9), s(1, 2), s(2, 3), s(2, 4), s(1, 6)], "warning W5", home)
    assert shape(second) == [(0, 9, None), (1, 2, "option 1"), (1, 6, None)]
    assert home == {1: "option 1", 2: "option 1", 3: "option 1", 4: "option 1", 5: "option 1",
                    9: "warning W5", 6: "warning W5"}


def test_sub_chain_with_something_new_is_kept() -> None:
    home: dict[int, str] = {}
    walk([s(0, 1), s(1, 2), s(2, 3)], "option 1", home)
    # fact 2 is derived here with an extra premise (7): the line stays and so does everything under it
    again = walk([s(0, 8), s(1, 2), s(2, 3), s(2, 7)], "warning W6", home)
    assert shape(again) == [(0, 8, None), (1, 2, None), (2, 3, None), (2, 7, None)]


def test_leaf_mentioned_again_gets_no_pointer() -> None:
    home: dict[int, str] = {}
    walk([s(0, 1), s(1, 4)], "option 1", home)
    assert shape(walk([s(0, 2), s(1, 4)], "option 2", home)) == [(0, 2, None), (1, 4, None)]


def test_repeat_within_one_chain_is_left_out() -> None:
    # the reader has just read fact 2 and what it rests on: no second line, no "explained above"
    lines = lines_of([s(0, 1), s(1, 2), s(2, 3), s(1, 2, repeated=True), s(1, 4), s(2, 3)])
    assert shape(lines) == [(0, 1, None), (1, 2, None), (2, 3, None), (1, 4, None)]
    assert all("above" not in why_parts(line)[1] for line in lines)


def test_fact_of_the_profile_points_to_it() -> None:
    home: dict[int, str] = {}
    walk([s(0, 5), s(1, 6)], "the workload profile", home)
    lines = walk([s(0, 1), s(1, 5, repeated=True)], "finding 1 (W5)", home)
    assert shape(lines) == [(0, 1, None), (1, 5, "the workload profile")]
    assert why_parts(lines[1]) == ("fact 5", "see the workload profile")


def test_book_over_the_sample_prints_fewer_lines_and_loses_no_fact() -> None:
    result = sample()
    book = ChainBook(result)
    chains = [("option", i, r.why) for i, r in enumerate(result.recommendations)]
    chains += [("warning", i, w.why) for i, w in enumerate(result.warnings)]
    chains += [("ruled_out", i, o.why) for i, o in enumerate(result.ruled_out)]
    printed = {line.step.fact for kind, i, _ in chains for line in book.lines(kind, i)}
    assert printed == {step.fact for _, _, why in chains for step in why}
    # the first option is explained in full (11 steps); option 2 points to it for the memory profile
    assert len(book.lines("option", 0)) == 11
    assert [line.see for line in book.lines("option", 1)] == [None, None, "option 1", None, None]
    # W6 (critical) is walked before W5 though it comes second in the consultation
    assert [line.see for line in book.lines("warning", 1)] == [None, "option 1"]
