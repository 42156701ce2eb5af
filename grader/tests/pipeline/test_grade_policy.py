"""The points policy a term sets (issue 50, item 4): extra credit, predictions for a guess,
partial credit for a named mistake, a late policy; and the points files that are refused.

Each expectation is worked out here from the catalogue's stars, not from the code under test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from course_grader.pipeline.points import Late, PointsError, default_scheme, load_points

from helpers import checks
from helpers.checks import Exercise, Prediction

ITEMS = list(checks.catalogue())
CHALLENGES = [i for i in ITEMS if isinstance(i, Exercise) and i.stars == 3]
PREDICTIONS = [i for i in ITEMS if isinstance(i, Prediction)]
DUE = datetime(2027, 2, 1, 23, 59, tzinfo=UTC)


def _file(tmp_path, text: str):
    path = tmp_path / "points.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_by_default_challenges_are_extra_credit_outside_each_lesson_s_maximum():
    scheme = default_scheme()
    assert len(CHALLENGES) >= 10  # every lesson but 09 has one
    for lesson in sorted({i.lesson for i in ITEMS}):
        counted = [i for i in ITEMS if i.lesson == lesson and i not in CHALLENGES]
        expected = sum(i.stars if isinstance(i, Exercise) else 1 for i in counted)
        assert scheme.lesson_max(lesson) == expected, lesson
    for item in CHALLENGES:
        assert scheme.is_extra(item.name) and scheme.counted(item.name) == 0
        assert scheme.earned(item.name, "correct", "") == 3  # still earned when done


def test_counted_challenges_are_in_the_maximum(tmp_path):
    scheme = load_points(_file(tmp_path, '[policy]\nchallenges = "counted"\n'))
    for lesson in sorted({i.lesson for i in ITEMS}):
        items = [i for i in ITEMS if i.lesson == lesson]
        assert scheme.lesson_max(lesson) == sum(i.stars for i in items), lesson


@pytest.mark.parametrize("prediction", PREDICTIONS, ids=lambda p: p.name)
def test_by_default_a_prediction_earns_its_point_for_any_guess_it_could_read(prediction):
    """The mistake ids come from the prediction's own check, given a wrong guess, not a
    guess that is no choice or number, and no guess."""
    scheme = default_scheme()
    wrong = next(c for c in prediction.choices if c != prediction.answer) if prediction.choices \
        else float(prediction.answer) * 10 + 1  # fmt: skip
    cases = {
        "right": prediction.check(prediction.answer),
        "wrong": prediction.check(wrong),
        "none": prediction.check(None),
        "not a choice": prediction.check("no such choice" if prediction.choices else "7"),
    }
    rows = {k: ("correct" if r.passed else "not_attempted" if r.passed is None else "not_yet",
                r.mistake or "") for k, r in cases.items()}  # fmt: skip
    earned = {k: scheme.earned(prediction.name, *row) for k, row in rows.items()}
    assert earned == {"right": 1.0, "wrong": 1.0, "none": 0.0, "not a choice": 0.0}, rows


def test_predictions_for_a_right_guess_only_or_for_nothing(tmp_path):
    p = PREDICTIONS[0]
    wrong = ("not_yet", f"{p.name}.too_high")
    correct = load_points(_file(tmp_path, '[policy]\npredictions = "correct"\n'))
    assert correct.earned(p.name, "correct", "") == 1 and correct.earned(p.name, *wrong) == 0
    none = load_points(_file(tmp_path, '[policy]\npredictions = "none"\n'))
    assert none.earned(p.name, "correct", "") == 0 and none.counted(p.name) == 0
    lesson = [i for i in ITEMS if i.lesson == p.lesson]
    assert none.lesson_max(p.lesson) == sum(
        i.stars for i in lesson if isinstance(i, Exercise) and i.stars < 3
    )


def test_a_named_mistake_earns_its_fraction_and_no_other_row_does(tmp_path):
    scheme = load_points(_file(tmp_path, '[partial]\n"scaled_scores.unscaled" = 0.5\n'))
    assert scheme.earned("scaled_scores", "not_yet", "scaled_scores.unscaled") == 1.0  # of 2
    assert scheme.earned("scaled_scores", "not_yet", "scaled_scores.wrong_shape") == 0
    assert scheme.earned("scaled_scores", "error", "scaled_scores.unscaled") == 0
    assert scheme.earned("scaled_scores", "correct", "") == 2
    # The key unquoted is a TOML table: read the same.
    same = load_points(_file(tmp_path, "[partial]\nscaled_scores.unscaled = 0.5\n"))
    assert same.partial == scheme.partial


def test_late_work_loses_a_share_per_day_up_to_the_most_with_extensions_and_excuses():
    late = Late(due=DUE, per_day=0.1, most=0.25, extensions={"ben": DUE + timedelta(days=3)},
                excused=("cy",))  # fmt: skip
    assert late.lost(["ada"], DUE, False) == 0
    assert late.lost(["ada"], DUE + timedelta(minutes=1), False) == pytest.approx(0.1)
    assert late.lost(["ada"], DUE + timedelta(days=1, seconds=1), False) == pytest.approx(0.2)
    assert late.lost(["ada"], DUE + timedelta(days=9), False) == 0.25
    assert late.lost(["ben"], DUE + timedelta(days=2), False) == 0  # before their own date
    assert late.lost(["cy"], DUE + timedelta(days=9), True) == 0
    assert late.lost(["ada"], None, True) == pytest.approx(0.1)  # the LMS's mark: one day's
    assert Late(per_day=0.1, marked=0.05).lost(["ada"], None, True) == 0.05
    assert late.lost(["ada"], None, False) == 0


def test_the_late_table_is_read_with_its_time_zones(tmp_path):
    scheme = load_points(_file(tmp_path, "[late]\ndue = 2027-02-01T23:59:00-05:00\n"
                               "per_day = 0.1\nmarked = 0.2\nexcused = ['eli']\n"
                               "[late.extensions]\nben = 2027-02-04T23:59:00-05:00\n"))  # fmt: skip
    assert scheme.late.due == datetime(2027, 2, 2, 4, 59, tzinfo=UTC)
    assert scheme.late.marked == 0.2 and scheme.late.excused == ("eli",)
    assert "late work loses 10% per day" in scheme.describe()


@pytest.mark.parametrize(
    "text, says",
    [
        ("[points]\nsoftmaxx = 2\n", "no exercise named softmaxx"),
        ("softmax = -1\n", "give a number >= 0"),
        ("softmax = nan\n", "give a number >= 0"),
        ('[policy]\nchallenges = "bonus"\n', "give one of 'extra', 'counted'"),
        ('[policy]\npredicitons = "none"\n', "[policy] has no setting predicitons"),
        ('[partial]\n"softmax" = 0.5\n', "give an exercise's mistake id"),
        ('[partial]\n"softmaxx.rows" = 0.5\n', "give an exercise's mistake id"),
        ('[partial]\n"softmax.raised" = 0.5\n', "not a mistake in the answer"),
        ('[partial]\n"softmax.rows" = 1.5\n', "a fraction from 0 to 1"),
        ("[late]\ndue = 2027-02-01T23:59:00\n", "with its time zone"),
        ("[late]\ndue = 2027-02-01\n", "with its time zone"),
        ("[late]\nper_day = 10\n", "a fraction from 0 to 1"),
        ("[late]\nperday = 0.1\n", "[late] has no setting perday"),
        ("[late]\nexcused = 'ada'\n", "excused must be a list"),
        ("late = 3\n", "late must be a table"),
        ("[points\n", "is not TOML"),
    ],
)
def test_a_points_file_it_cannot_use_is_refused_with_what_to_fix(tmp_path, text, says):
    with pytest.raises(PointsError) as refused:
        load_points(_file(tmp_path, text))
    assert says in str(refused.value)
