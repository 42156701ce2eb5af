"""An LMS's "download all submissions" zip, sorted into one folder per student, and back.

``python -m course_grader --from-canvas submissions.zip --out OUT`` (or ``--from-moodle``;
``make grade CANVAS=submissions.zip OUT=...``) unpacks the zip into
``OUT/submissions/<name>-<LMS id>/`` with a manifest, ``OUT/submissions/.lms.json`` (each
folder's LMS user id, the ids of its files, and the LMS's late mark), grades that folder, and
writes ``OUT/lms/<lms>-feedback.zip``:
each student's feedback as a file the LMS attaches to their submission when it is uploaded
back.

The names, as the LMSs' own code reads them:

* **Canvas** (a flat zip): ``name[_LATE]_userid_fileid_original.ext``; the name is the student's
  sortable name without punctuation (``lovelaceada``), ``_LATE`` marks a submission after its
  due date (the student's own, with Canvas's overrides), and a resubmitted file's original
  name may end in ``-1``. Canvas's re-upload ("Re-upload submissions") reads the first two
  all-digit parts of a file's name as the user's and the submitted file's ids
  (``infer_comment_context_from_filename`` in canvas-lms, app/models/assignment.rb) and
  attaches the file as a comment under that file's display name.
* **Moodle**: ``Full Name_participantid_assignsubmission_file_original.ext``, flat, or the same
  prefix as a folder ("Download submissions in folders", with or without a trailing ``_``);
  its feedback
  import ("Upload multiple feedback files in a zip") reads the participant id as the second
  ``_``-separated part (``assignfeedback_file_zip_importer``).

Nothing is trusted: a name with ``..``, an absolute path or a link is skipped and said;
sizes and counts are bounded before anything is written.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import stat
import unicodedata
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from .roster import Person

LMSS = ("canvas", "moodle")
MANIFEST = ".lms.json"
MAX_FILE_BYTES = 50 * 2**20  # a lesson's notebook with its outputs is well under 5 MB
MAX_TOTAL_BYTES = 4 * 2**30
MAX_FILES = 20_000

_CANVAS = re.compile(
    r"(?P<name>[^_/]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<file>\d+)_(?P<original>[^/]+)",
    re.IGNORECASE,
)
_MOODLE = re.compile(r"(?P<name>[^_/]+)_(?P<user>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?")


class LmsError(ValueError):
    """The zip cannot be used as this LMS's download (says why)."""


@dataclass
class Student:
    """One student's part of the download."""

    folder: str  # under OUT/submissions
    name: str  # as the LMS wrote it (Canvas: lovelaceada; Moodle: Ada Lovelace)
    user: str  # the LMS's user (Canvas) or participant (Moodle) id
    late: bool = False  # Canvas's _LATE
    files: dict[str, str] = field(default_factory=dict)  # file in the folder -> its LMS file id


@dataclass
class Manifest:
    lms: str
    students: list[Student]
    skipped: list[str] = field(default_factory=list)  # entries of the zip not unpacked, and why

    def by_folder(self) -> dict[str, Student]:
        return {s.folder: s for s in self.students}


def _folder_name(name: str) -> str:
    """A folder name from an LMS's name for the student: letters, digits, '-'."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "student"


def _parse(lms: str, entry: str) -> tuple[str, str, bool, str, str] | None:
    """(name, user id, late, file id, file name) for a zip entry, or None if it is not one of
    the LMS's submission files."""
    if lms == "canvas":
        match = _CANVAS.fullmatch(PurePosixPath(entry).name)
        if not match:
            return None
        return (match["name"], match["user"], bool(match["late"]), match["file"],
                match["original"])  # fmt: skip
    parts = PurePosixPath(entry).parts
    match = _MOODLE.match(parts[0])
    if not match:
        return None
    rest = parts[0][match.end() :] if len(parts) == 1 else "/".join(parts[1:])
    if not rest:
        return None
    return match["name"], match["user"], False, "", rest


def unpack(archive: Path, dest: Path, lms: str) -> Manifest:
    """Unpack ``archive``, an LMS's download, into ``dest/<student>/`` (``dest`` is replaced);
    write and return its manifest. :class:`LmsError` when it is not a zip of this LMS's
    submissions."""
    if lms not in LMSS:
        raise LmsError(f"no LMS named {lms!r} (the grader reads {', '.join(LMSS)})")
    try:
        zf = zipfile.ZipFile(archive)
    except FileNotFoundError:
        raise LmsError(f"no such file: {archive}") from None
    except (zipfile.BadZipFile, OSError) as problem:
        raise LmsError(f"{archive} is not a zip file ({problem})") from None
    with zf:
        entries = [i for i in zf.infolist() if not i.is_dir()]
        if len(entries) > MAX_FILES:
            raise LmsError(f"{archive} holds {len(entries)} files; the grader reads at most "
                           f"{MAX_FILES}")  # fmt: skip
        if sum(i.file_size for i in entries) > MAX_TOTAL_BYTES:
            raise LmsError(f"{archive} unpacks to more than {MAX_TOTAL_BYTES // 2**30} GiB")
        students: dict[str, Student] = {}
        placed: list[tuple[zipfile.ZipInfo, Student, str, str]] = []  # ..., file, its id
        skipped = []
        for info in entries:
            why = _unsafe(info)
            parsed = None if why else _parse(lms, info.filename)
            if why or parsed is None:
                why = why or f"not named as {lms} names a submission"
                skipped.append(f"{info.filename}: {why}")
                continue
            name, user, late, file_id, original = parsed
            student = students.get(user)
            if student is None:
                student = students[user] = Student("", name, user)
            student.late = student.late or late
            placed.append((info, student, original, file_id))
        if lms == "canvas" and any(PurePosixPath(i.filename).name.startswith("anon_")
                                   for i in entries):  # fmt: skip
            raise LmsError(f"{archive} is an anonymous-grading download (its names start "
                           "'anon_', with no user ids): the grader cannot tell the students "
                           "apart across downloads or match them to the gradebook; download "
                           "with anonymous grading off, or sort the files into one folder per "
                           "student yourself")  # fmt: skip
        if not students:
            shown = ", ".join(i.filename for i in entries[:3])
            raise LmsError(f"{archive}: no file is named as a {lms} download names a student's "
                           f"submission ({shown or 'it is empty'}); is it {lms}'s "
                           "\"Download all submissions\" zip?")  # fmt: skip
        _name_folders(students.values())
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for info, student, original, file_id in placed:
            path = dest / student.folder / original
            if path.exists():  # the same name twice (a Moodle folder and a flat file)
                skipped.append(f"{info.filename}: a second file named {original} for "
                               f"{student.folder}")  # fmt: skip
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as source, open(path, "wb") as target:
                shutil.copyfileobj(source, target)
            student.files[original] = file_id
    manifest = Manifest(lms, sorted(students.values(), key=lambda s: s.folder), skipped)
    (dest / MANIFEST).write_text(
        json.dumps(asdict(manifest), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return manifest


def _unsafe(info: zipfile.ZipInfo) -> str:
    """Why an entry is not unpacked ("" when it may be)."""
    path = PurePosixPath(info.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or info.filename.startswith("/"):
        return "a path outside the folder"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a link"
    if any(part.startswith(".") for part in path.parts):
        return "a hidden file"
    if info.file_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES // 2**20} MB"
    return ""


def _name_folders(students) -> None:
    """Each student's folder: their LMS name as a folder name and their LMS id, always, so that
    a folder's name (which seeds the checks' draws and keys the cache) is the same in every
    download of the term, whoever else is in it."""
    for student in students:
        student.folder = f"{_folder_name(student.name)}-{student.user}"


def read_manifest(submissions: Path) -> Manifest | None:
    """The manifest an import wrote into ``submissions`` (None when there is none)."""
    path = submissions / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        students = [Student(**s) for s in data["students"]]
        return Manifest(data["lms"], students, data.get("skipped", []))
    except (ValueError, KeyError, TypeError) as problem:
        raise LmsError(f"{path} is not a manifest the grader wrote ({problem})") from None


def late_not_applied(scheme, manifest: Manifest | None) -> str:
    """Why the points file's late policy cannot be applied to this class ("" when it can):
    only Canvas's download says which submissions were late; a folder or a Moodle download
    gives no submission times."""
    if not (scheme.late.per_day or scheme.late.marked):
        return ""
    if manifest is not None and manifest.lms == "canvas":
        return ""
    source = "a Moodle download" if manifest is not None else "a folder of submissions"
    return (
        f"the points file's [late] policy was not applied: {source} does not say when each "
        "notebook was handed in (only a Canvas download's _LATE marks do, or Gradescope)"
    )


def from_download(manifest: Manifest, scheme, people):
    """What an LMS download tells beyond the files: each late-marked student's share lost,
    and, without a roster, one from the LMS's user ids (Canvas's gradebook import matches
    on them)."""
    lms = manifest.lms.capitalize()
    late = {}
    for s in manifest.students:
        lost = scheme.late.lost([s.folder, s.user, s.name], None, s.late)
        if lost:
            late[s.folder] = (lost, f"{lms} marked the submission late")
    if people is None and manifest.lms == "canvas":
        people = [Person(student=s.folder, id=s.user) for s in manifest.students]
    return late, people


def feedback_notebook(text: str) -> bytes:
    """The feedback as a notebook of one Markdown cell: Canvas attaches a re-uploaded file under
    the submitted file's name (a ``.ipynb``), so what it holds opens as a notebook."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(text))
    return nbformat.writes(nb).encode("utf-8")


def feedback_zip(manifest: Manifest, feedback: dict[str, tuple[str, list[str]]]) -> bytes:
    """A zip to upload back to the LMS: each student's feedback (``feedback``: folder → (its
    Markdown, the files graded)) named so that the LMS attaches it to that student's
    submission: on Canvas a one-cell notebook, to the first file graded (whose display name
    the comment's file takes); on Moodle a Markdown text file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for student in manifest.students:
            if student.folder not in feedback:
                continue
            text, graded = feedback[student.folder]
            if manifest.lms == "canvas":
                ids = [student.files[f] for f in graded if student.files.get(f)]
                file_id = (ids or [v for _, v in sorted(student.files.items()) if v] or [""])[0]
                if not file_id:
                    continue
                late = "_LATE" if student.late else ""
                name = f"{student.name}{late}_{student.user}_{file_id}_feedback.ipynb"
                data = feedback_notebook(text)
            else:
                name = f"{student.name}_{student.user}_assignsubmission_file_feedback.md"
                data = text.encode("utf-8")
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()
