"""make grade against a hostile class (issue 33): no notebook can forge its grade or reach
beyond its sandbox, and the report says where each attempt was made.

Every attacker answers lesson 03's ``scaled_scores`` wrongly (or not at all) and then tries to
be graded "correct" anyway, or to touch what the grader owns: the grader's HOME (a secret
there), ``/tmp``, the output and submissions folders, another student's notebook, a TCP
listener on 127.0.0.1, and the process table (a fork storm). One honest student beside them
must be graded as usual. The class runs once, in the sandbox where bubblewrap can run (CI
installs it); the verdict attacks run once more with ``--no-sandbox``: the grades never depend
on the sandbox.
"""

from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from course_grader.isolation import bubblewrap
from support import class_builder
from support.class_builder import SETUP, SS_CORRECT, SS_STUB, check_cell, notebook

SECRET = "grader-secret-7f3a9c"
OTHER = "another-students-answer-51e2"
WRONG = "def scaled_scores(Q, K):\n    return Q @ np.swapaxes(K, -1, -2)"  # unscaled
CHECK = check_cell("scaled_scores")

# Attacks on the verdict: each ends with the check of a stub or a wrong answer.
VERDICT_ATTACKS = {
    # Every record the checks write says "correct" (and the name each module imported rebound).
    "forged_records": [
        "from helpers.checks import exercise, prediction, record as _record\n"
        "_real = _record.append\n"
        "def _forged(record):\n"
        "    import dataclasses\n"
        "    if isinstance(record, _record.Record):\n"
        "        record = dataclasses.replace(record, passed=True, mistake=None)\n"
        "    _real(record)\n"
        "_record.append = _forged\n"
        "exercise.record = prediction.record = _record",
        SS_STUB,
        CHECK,
    ],
    # The result of every check says "correct".
    "patched_result": [
        "from helpers.checks import exercise\n"
        "exercise.Exercise._result = lambda self, passed, message, mistake=None: "
        "exercise.CheckResult(True, 'ok', self.name, None)\n"
        "exercise.Exercise.verdict = lambda self, answer: self._result(True, 'ok')",
        WRONG,
        CHECK,
    ],
    # The check's grade function replaced; the reference answer offered as the student's.
    "patched_checks": [
        "checks.scaled_scores._grade = lambda call: 'all good'\n"
        "checks.scaled_scores.reference = lambda Q, K: None",
        WRONG,
        CHECK,
    ],
    # Lines appended to the checks' log by hand, for every exercise of the lesson.
    "forged_log": [
        WRONG,
        CHECK,
        "import json, os\n"
        "with open(os.environ['HELPERS_GRADE_LOG'], 'a') as log:\n"
        "    for name in ['scaled_scores', 'unscaled_variance_at_64', 'unscaled_softmax_trend',"
        " 'scale_for_entropy']:\n"
        "        log.write(json.dumps({'exercise': name, 'lesson': '03', 'passed': True,"
        " 'mistake': None, 'message': 'ok', 'phase': 'notebook'}) + '\\n')",
    ],
    # The answer itself patches the checks each time it is called, then returns garbage.
    "patch_at_call_time": [
        "def scaled_scores(Q, K):\n"
        "    import helpers.checks.exercise as c, helpers.checks.compare as cmp\n"
        "    c.Exercise._result = lambda self, passed, message, mistake=None: "
        "c.CheckResult(True, 'ok', self.name, None)\n"
        "    cmp.compare = lambda *a, **k: None\n"
        "    import helpers.checks.wire as w\n"
        "    w.MAX_BYTES = 10**12\n"
        "    return np.zeros((Q.shape[0], K.shape[0]))",
        CHECK,
    ],
}


def _escape_attacks(root: Path, home: Path, listener_port: int) -> dict[str, list[str]]:
    """Attacks on the grader's machine (each cell raises inside the sandbox)."""
    other = root / "submissions" / "honest" / "lesson03.ipynb"
    return {
        "reads_home": [
            WRONG,
            # The secret would reach grades.csv through the check's message if it were read.
            f"secret = open({str(home / 'secret.txt')!r}).read()\n"
            "def scaled_scores(Q, K):\n"
            "    raise ValueError(secret)",
            CHECK,
        ],
        "writes_outside": [
            WRONG,
            CHECK,
            f"open({str(home / 'planted.txt')!r}, 'w').write('x')",
            "open('/tmp/hostile-planted.txt', 'w').write('x')",
            f"open({str(root / 'out' / 'planted.txt')!r}, 'w').write('x')",
            f"open({str(root / 'submissions' / 'planted.txt')!r}, 'w').write('x')",
        ],
        "network": [
            WRONG,
            CHECK,
            f"import socket\nsocket.create_connection(('127.0.0.1', {listener_port}), timeout=3)",
        ],
        "reads_other": [
            WRONG,
            f"stolen = open({str(other)!r}).read()\n"
            "def scaled_scores(Q, K):\n"
            "    raise ValueError(stolen[-3000:])",
            CHECK,
        ],
        "deletes_beside": [
            WRONG,
            CHECK,
            f"import os\nos.remove({str(root / 'keep.txt')!r})",
        ],
        # The checks' log replaced by a link to a file of the grader's that looks like a log
        # (its "exercise" would reach the report if the grader followed the link).
        "links_log": [
            WRONG,
            CHECK,
            "import os\n"
            "os.remove('../checks.jsonl')\n"
            f"os.symlink({str(home / 'secret.jsonl')!r}, '../checks.jsonl')",
        ],
        # The kernel's side of the grader's calls replaced: each reply a link to a secret.
        "links_reply": [
            WRONG,
            CHECK,
            "import os, pickle\n"
            "import helpers.checks.grading as runner\n"
            "def serve(request_path):\n"
            "    request = pickle.load(open(request_path, 'rb'))\n"
            "    for end in ('.json', '.npz'):\n"
            f"        os.symlink({str(home / 'secret.txt')!r}, request['reply'] + end)\n"
            "runner.serve = serve",
        ],
        # The grader's own environment read from the kernel, sent back in a message.
        "reads_env": [
            "import os\n"
            "def scaled_scores(Q, K):\n"
            "    raise ValueError(' '.join(f'{k}={v}' for k, v in os.environ.items()))",
            CHECK,
        ],
        # An answer nested too deep for the similarity step's recursion (it crashed the class).
        "deep_answer": ["def scaled_scores(Q, K):\n    return " + "-" * 600 + "Q", CHECK],
        "fork_storm": [
            WRONG,
            CHECK,
            "import os, time\n"
            "for _ in range(5000):\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(60)\n"
            "        os._exit(0)",
        ],
    }


def _write_class(root: Path, attacks: dict[str, list[str]]) -> None:
    submissions = root / "submissions"
    honest = [SS_CORRECT, CHECK, f"# {OTHER}"]
    for student, cells in {"honest": honest, **attacks}.items():
        folder = submissions / student
        folder.mkdir(parents=True)
        nb = notebook("03", [SETUP, *cells])
        (folder / "lesson03.ipynb").write_text(class_builder.nbformat.writes(nb))
    # Links handed in as notebooks: to another student's (their grades) and to a grader's file.
    (submissions / "links").mkdir()
    (submissions / "links" / "lesson03.ipynb").symlink_to(submissions / "honest" / "lesson03.ipynb")
    (submissions / "links" / "other.ipynb").symlink_to(root / "home" / "secret.txt")


def _grade(root: Path, home: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "GRADER_TOKEN": SECRET}  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "course_grader", "--submissions", str(root / "submissions"),
         "--out", str(root / "out"), "--jobs", "2", "--cell-timeout", "20",
         "--check-time-limit", "2", "--memory-limit", "2G", "--lessons", "03", *extra],
        capture_output=True, text=True, timeout=600, cwd=root, env=env,
    )  # fmt: skip


def _statuses(out: Path) -> dict[str, str]:
    with open(out / "grades.csv", newline="") as f:
        return {r["student"]: r["status"] for r in csv.DictReader(f)
                if r["exercise"] == "scaled_scores"}  # fmt: skip


EXPECTED_VERDICTS = {
    "honest": "correct",
    "forged_records": "not_attempted",
    "patched_result": "not_yet",
    "patched_checks": "not_yet",
    "forged_log": "not_yet",
    "patch_at_call_time": "not_yet",
}


class _Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port, self.accepted, self.running = self.sock.getsockname()[1], 0, True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                connection, _ = self.sock.accept()
                self.accepted += 1
                connection.close()
            except OSError:
                pass

    def close(self):
        self.running = False
        self.thread.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    if bubblewrap.unavailable():
        pytest.skip(f"no sandbox here: {bubblewrap.unavailable()}")
    root = tmp_path_factory.mktemp("hostile")
    home = root / "home"
    home.mkdir()
    (home / "secret.txt").write_text(SECRET)
    (home / "secret.jsonl").write_text(json.dumps({"exercise": SECRET, "lesson": "03"}) + "\n")
    (root / "keep.txt").write_text("keep me")
    Path("/tmp/hostile-planted.txt").unlink(missing_ok=True)
    listener = _Listener()
    try:
        _write_class(root, {**VERDICT_ATTACKS, **_escape_attacks(root, home, listener.port)})
        run = _grade(root, home)
    finally:
        listener.close()
    assert run.returncode == 0, run.stderr[-3000:]
    texts = [p.read_text(errors="replace") for p in (root / "out").rglob("*") if p.is_file()]
    report = (root / "out" / "report.html").read_text()
    return {"root": root, "home": home, "run": run, "accepted": listener.accepted,
            "outputs": "\n".join(texts), "report": report}  # fmt: skip


def test_no_forged_grade_and_the_honest_student_is_unaffected(hostile):
    statuses = _statuses(hostile["root"] / "out")
    for student, expected in EXPECTED_VERDICTS.items():
        assert statuses[student] == expected, (student, statuses[student])
    # The cell that reads fails before its answer (which would raise what it read) is defined:
    # the wrong answer above it is graded.
    for student in ("reads_home", "reads_other", "writes_outside", "network", "deletes_beside",
                    "fork_storm", "links_log"):  # fmt: skip
        assert statuses[student] == "not_yet", (student, statuses[student])
    assert statuses["links_reply"] == "error"  # its replies cannot be read: nothing to grade
    assert statuses["reads_env"] == "error"  # it raises (without the grader's variables)
    assert statuses["deep_answer"] in ("not_yet", "error")  # graded, and the class with it
    assert statuses["links"] == "missing"  # links are not the student's notebooks
    assert "Sandbox: bubblewrap" in hostile["run"].stdout


def test_nothing_escapes_the_sandbox(hostile):
    root, home = hostile["root"], hostile["home"]
    assert SECRET not in hostile["outputs"]  # grades.csv, feedback, report: the secret is not
    assert OTHER not in hostile["outputs"]  # another student's notebook was not read
    assert not (home / "planted.txt").exists()
    assert not Path("/tmp/hostile-planted.txt").exists()
    assert not (root / "out" / "planted.txt").exists()
    assert not (root / "submissions" / "planted.txt").exists()
    assert (root / "keep.txt").read_text() == "keep me"
    assert hostile["accepted"] == 0  # no connection reached the listener


def test_the_report_says_where_each_attack_was_tried(hostile):
    report = hostile["report"]
    for student in [*EXPECTED_VERDICTS][1:]:
        assert f"{student}/lesson03.ipynb: " in report, student
    refused = ["writes_outside", "network", "deletes_beside", "fork_storm", "reads_home",
               "reads_other", "links_reply"]  # fmt: skip
    if os.geteuid() == 0:
        # Run as root, the kernel's work folder is root's: replacing the log there is refused.
        # Run as another user, it is the kernel's own folder: the link is made, and not read.
        refused.append("links_log")
    for student in refused:
        assert f"{student}/lesson03.ipynb: cell " in report, student
    assert "verdicts no check wrote" in report  # a forged record is flagged, not only ignored
    needs_a_look = report.split("Notebooks that need a look")[-1].split("</ul>")[0]
    assert "<li>honest/" not in needs_a_look


def test_the_verdicts_hold_without_the_sandbox(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text(SECRET)
    _write_class(tmp_path, VERDICT_ATTACKS)
    run = _grade(tmp_path, home, "--no-sandbox")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "NO SANDBOX" in run.stdout
    report = (tmp_path / "out" / "report.html").read_text()
    assert '<p class="caveat" role="alert"><strong>WARNING: NO SANDBOX' in report  # at the top
    statuses = _statuses(tmp_path / "out")
    assert statuses == {**statuses, **EXPECTED_VERDICTS}


def test_a_csv_cell_is_never_a_formula():
    from course_grader.outputs.writers import _inert

    assert [_inert(c) for c in ("=HYPERLINK(1)", "+1", "-1", "@x", "ok", 2.5)] == [
        "'=HYPERLINK(1)", "'+1", "'-1", "'@x", "ok", 2.5]  # fmt: skip
