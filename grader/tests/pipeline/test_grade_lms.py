"""An LMS's download zip graded and sent back (issue 50, item 5): ``--from-canvas`` and
``--from-moodle``.

The term class (tests/support/term_class.py) is packed as each LMS packs a download:

* **Canvas**, flat: ``name[_LATE]_userid_fileid_original``; dee's files carry ``_LATE``; ada
  resubmitted lesson 01 (``01_input_Z-1.ipynb``); beside them a PDF, an entry that climbs out
  of the folder (``../escape.ipynb``), a link, and a file not named as Canvas names one;
* **Moodle**, both layouts: ``Full Name_id_assignsubmission_file_original`` flat (ada, ben) and
  as folders, Moodle 4.1's (cy, dee, eli).

What is checked, each against what the LMS's own code reads (course_grader.pipeline.lms):
each file lands in its student's folder and nothing escapes; the Canvas late mark costs dee
the points file's ``marked`` share in scores.csv and in the feedback; without a roster,
Canvas's user ids fill the LMS file's ID column; the feedback zip's names give back, read as
Canvas's re-upload or Moodle's feedback import reads them, each student's user and file ids.
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import stat
import zipfile
from pathlib import Path

import nbformat
import pytest
from course_grader import main
from course_grader.pipeline.lms import LmsError, unpack
from support import term_class

LIMITS = ["--jobs", "2", "--cell-timeout", "30", "--check-time-limit", "2"]
USERS = {"ada": 101, "ben": 102, "cy": 103, "dee": 104, "eli": 105}
FULL = {"ada": "Ada Lovelace", "ben": "Ben Okafor", "cy": "Cy Young", "dee": "Dee Dee",
        "eli": "Eli Jones"}  # fmt: skip
POINTS = "[late]\nmarked = 0.25\n"
FOLDER = {s: f"{s}-{u}" for s, u in USERS.items()}


def _grade(*args) -> str:
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        code = main([*LIMITS, *map(str, args)])
    assert code == 0
    return stdout.getvalue()


def _csv(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def _class_files(root: Path) -> dict[str, dict[str, bytes]]:
    subs = term_class.build_term_class(root)["submissions"]
    return {
        s.name: {p.name: p.read_bytes() for p in sorted(s.glob("*.ipynb"))}
        for s in sorted(subs.iterdir())
    }


def _link(archive: zipfile.ZipFile, name: str, target: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive.writestr(info, target)


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    root = tmp_path_factory.mktemp("canvas")
    files = _class_files(root / "class")
    download = root / "submissions.zip"
    file_id = iter(range(5001, 6000))
    ids = {}
    with zipfile.ZipFile(download, "w") as archive:
        for student, notebooks in files.items():
            late = "_LATE" if student == "dee" else ""
            for name, data in notebooks.items():
                if student == "ada" and name.startswith("01"):
                    name = name.replace(".ipynb", "-1.ipynb")  # a resubmission
                fid = next(file_id)
                ids.setdefault(student, {})[name] = str(fid)
                archive.writestr(f"{student}{late}_{USERS[student]}_{fid}_{name}", data)
        archive.writestr("ben_102_6001_notes.pdf", b"%PDF-1.4")
        archive.writestr("../escape.ipynb", b"{}")
        archive.writestr("readme.txt", b"not a submission")
        _link(archive, "cy_103_6002_link.ipynb", "/etc/passwd")
    points = root / "points.toml"
    points.write_text(POINTS)
    out = root / "out"
    printed = _grade("--from-canvas", download, "--out", out, "--points", points)
    return {"out": out, "ids": ids, "printed": printed, "files": files, "root": root}


def test_a_canvas_download_lands_in_one_folder_per_student_and_nothing_escapes(canvas):
    subs = canvas["out"] / "submissions"
    # Each folder: the LMS's name and id, whoever else is in the download (the draws are
    # seeded from it, so it must not change from one download to the next).
    assert sorted(p.name for p in subs.iterdir() if p.is_dir()) == sorted(FOLDER.values())
    for student, ids in canvas["ids"].items():
        assert sorted(p.name for p in (subs / FOLDER[student]).glob("*.ipynb")) == sorted(ids)
    assert (subs / FOLDER["ben"] / "notes.pdf").exists()
    assert not (canvas["root"] / "escape.ipynb").exists()
    assert not (canvas["out"] / "escape.ipynb").exists()
    assert not list(subs.rglob("link.ipynb"))  # the link: not unpacked
    assert "5 students" in canvas["printed"] and "3 file(s) skipped" in canvas["printed"]
    report = (canvas["out"] / "report.html").read_text()
    assert "a path outside the folder" in report and "a link" in report


def test_canvas_s_late_mark_costs_the_points_file_s_share(canvas):
    scores = {(r[0], r[1]): float(r[2]) for r in _csv(canvas["out"] / "scores.csv")[1:]}
    grades = _csv(canvas["out"] / "grades.csv")[1:]
    statuses = {s: [r[3] for r in grades if r[0] == FOLDER[s] and r[1] == "01"]
                for s in ("dee", "eli")}  # fmt: skip
    # dee's and eli's lesson 01 rows are the same (two correct answers, a right guess): eli
    # keeps the points, dee loses a quarter of them.
    assert statuses["dee"] == statuses["eli"] and "correct" in statuses["eli"]
    dee, eli = FOLDER["dee"], FOLDER["eli"]
    assert scores[(eli, "01")] > 0
    assert scores[(dee, "01")] == pytest.approx(scores[(eli, "01")] * 0.75)
    feedback = (canvas["out"] / "feedback" / f"{dee}.txt").read_text()
    assert "25% of your points were taken off: Canvas marked the submission late." in feedback
    assert "taken off" not in (canvas["out"] / "feedback" / f"{eli}.txt").read_text()


def test_without_a_roster_canvas_s_user_ids_key_the_gradebook_file(canvas):
    rows = _csv(canvas["out"] / "lms" / "canvas.csv")
    header = rows[0]
    by_id = {r[header.index("ID")]: r for r in rows[1:] if r[header.index("ID")]}
    assert set(by_id) == {str(u) for u in USERS.values()}


def test_the_canvas_feedback_zip_names_each_student_s_user_and_graded_file(canvas):
    """Canvas's re-upload: the first two all-digit '_' parts of a name are the user's id and the
    submitted file's (infer_comment_context_from_filename, canvas-lms)."""
    with zipfile.ZipFile(canvas["out"] / "lms" / "canvas-feedback.zip") as archive:
        names = archive.namelist()
        texts = {n: nbformat.reads(archive.read(n).decode(), as_version=4) for n in names}
    assert len(names) == len(USERS)
    for name in names:
        user, file_id = [p for p in name.split("_") if re.fullmatch(r"\d+", p)][:2]
        student = next(s for s, u in USERS.items() if str(u) == user)
        assert file_id in canvas["ids"][student].values()
        # A notebook of one Markdown cell: Canvas names it as the submitted notebook.
        (cell,) = texts[name].cells
        assert cell.cell_type == "markdown" and cell.source.startswith(
            f"# Feedback for {FOLDER[student]}"
        )
        assert name.endswith(".ipynb") and ("_LATE_" in name) == (student == "dee")


@pytest.fixture(scope="module")
def moodle(tmp_path_factory):
    root = tmp_path_factory.mktemp("moodle")
    files = _class_files(root / "class")
    download = root / "moodle.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for student, notebooks in files.items():
            prefix = f"{FULL[student]}_{USERS[student]}_assignsubmission_file"
            for name, data in notebooks.items():
                flat = student in ("ada", "ben")
                archive.writestr(f"{prefix}_{name}" if flat else f"{prefix}/{name}", data)
    points = root / "points.toml"
    points.write_text("[late]\nper_day = 0.1\n")
    out = root / "out"
    printed = _grade("--from-moodle", download, "--out", out, "--points", points)
    return {"out": out, "files": files, "printed": printed}


def test_a_moodle_download_of_either_layout_lands_in_one_folder_per_student(moodle):
    subs = moodle["out"] / "submissions"
    folders = {p.name for p in subs.iterdir() if p.is_dir()}
    assert folders == {f"{FULL[s].lower().replace(' ', '-')}-{USERS[s]}" for s in USERS}
    for student, notebooks in moodle["files"].items():
        folder = subs / f"{FULL[student].lower().replace(' ', '-')}-{USERS[student]}"
        assert sorted(p.name for p in folder.glob("*.ipynb")) == sorted(notebooks)


def test_the_moodle_feedback_zip_names_each_participant_as_its_import_reads_them(moodle):
    """Moodle's feedback import: the second '_' part is the participant id, the third and
    fourth the plugin (assignfeedback_file_zip_importer)."""
    with zipfile.ZipFile(moodle["out"] / "lms" / "moodle-feedback.zip") as archive:
        names = archive.namelist()
    users = sorted(name.split("_", 4)[1] for name in names)
    assert users == sorted(str(u) for u in USERS.values())
    assert all(name.split("_", 4)[2:4] == ["assignsubmission", "file"] for name in names)


@pytest.mark.parametrize(
    "entries, says",
    [
        ({}, "no file is named as a canvas download names"),
        ({"ada.ipynb": b"{}", "notes.txt": b""}, "no file is named as a canvas download names"),
        ({"anon_k3b9x_462_03.ipynb": b"{}"}, "an anonymous-grading download"),
    ],
)
def test_a_zip_that_is_no_canvas_download_is_refused_and_writes_nothing(tmp_path, entries, says):
    download = tmp_path / "d.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    with pytest.raises(LmsError, match=says):
        unpack(download, tmp_path / "subs", "canvas")
    assert not (tmp_path / "subs").exists()


def test_a_file_that_is_no_zip_is_refused(tmp_path):
    (tmp_path / "d.zip").write_text("not a zip")
    with pytest.raises(LmsError, match="is not a zip file"):
        unpack(tmp_path / "d.zip", tmp_path / "subs", "canvas")
    with pytest.raises(SystemExit, match="no such file"):
        main(["--from-canvas", str(tmp_path / "none.zip"), "--out", str(tmp_path / "out")])


def test_a_late_policy_a_moodle_download_cannot_apply_is_said_not_claimed(moodle):
    """Moodle's download holds no submission times: the [late] policy is not applied, the
    instructor is told, and no student's feedback says late work loses anything."""
    assert "[late] policy was not applied: a Moodle download" in moodle["printed"]
    assert "[late] policy was not applied" in (moodle["out"] / "report.html").read_text()
    for path in (moodle["out"] / "feedback").glob("*.txt"):
        text = path.read_text()
        assert "late work" not in text and "taken off" not in text, path.name


def test_a_download_writes_a_roster_to_complete(moodle):
    rows = _csv(moodle["out"] / "lms" / "roster-from-download.csv")
    assert rows[0] == ["student", "name", "id", "sis_user_id", "sis_login_id", "section", "email"]
    assert sorted((r[1], r[2]) for r in rows[1:]) == sorted(
        (FULL[s], str(u)) for s, u in USERS.items()
    )
