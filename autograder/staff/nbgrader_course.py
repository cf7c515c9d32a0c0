"""nbgrader autograding with the kit, in a course made from the notebooks of nbgrader_release.py.

`GradeWithKit` (`use_the_kit(c)`) takes the place of
the step of `nbgrader autograde` that executes a notebook, and nbgrader does the rest;
`autograde_course` runs it for a class; `PartsCsvExport` is nbgrader's export, a column per part.
"""

from __future__ import annotations

import contextlib
import csv
import logging
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path

import nbformat
import sqlalchemy.exc
from jupyter_core.paths import jupyter_config_path
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import ExportPlugin
from nbgrader.preprocessors import AssignLatePenalties, Execute, NbGraderPreprocessor
from traitlets import Dict, Unicode
from traitlets.config import Config
from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

from .. import intake
from ..config import KIT_ROOT, Grading, load
from ..escape import csv_cell
from ..notebook import NotebookError, engine_of, grade_id, part_report, score_modules
from ..parts import engines
from .gradebook import Entry
from .official import SOLUTIONS, grader_version
from .outcomes import CoursePenalty, CourseRecord, passed
from .policies import parse_time
from .secret import DEFAULT_SECRET


@contextlib.contextmanager
def quiet_sqlalchemy() -> Iterator[None]:
    """nbgrader's gradebook makes SQLAlchemy warn about objects it adds to a session (its own
    doing, harmless): keep them off the TA's screen while the kit drives it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=sqlalchemy.exc.SAWarning)
        yield


def kit_part(cell: nbformat.NotebookNode, grading: Grading) -> str | None:
    """The part a grading cell of the kit's notebooks grades; None for any other cell."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
        return None
    return {grade_id(part): part for part in grading.parts}.get(meta.get("grade_id"))


def course_test_cells(notebook: nbformat.NotebookNode, grading: Grading) -> bool:
    """Whether a notebook has autograded test cells of the course's own (not the kit's)."""
    return any(cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")
               and not cell.metadata["nbgrader"].get("solution") and kit_part(cell, grading) is None
               for cell in notebook.cells)


def notebook_module(notebook: nbformat.NotebookNode, engine: str) -> str | None:
    """The module the kit grades for one engine of a notebook, made by the same intake as
    `autograder bulk` (so the two can be compared), or None when the notebook defines none."""
    where = f"{engine}.ipynb"  # as intake names it inside submitted/<student>/<assignment>/
    scratch = intake.Submission(where, "notebook", "nbgrader")
    return intake.split_notebook(nbformat.writes(notebook), where, scratch).get(engine)


@dataclass(frozen=True)
class KnownGrade:
    """What the kit has already graded for one engine of one submission: the module it graded,
    and results.json's entries of that engine's parts."""

    module: str
    entries: dict[str, dict]


class GradeWithKit(NbGraderPreprocessor):
    """The step of `nbgrader autograde` that executes a notebook, done by the kit: no student code
    runs in nbgrader's kernel, and each kit grading cell gets its part's verdict as output and the
    score as its result (SaveAutoGrades' partial credit). A notebook with test cells of the
    course's own is executed by nbgrader first."""

    known = Dict(help="student -> engine -> KnownGrade: what the kit has just graded, reused "
                      "when the module made from the notebook is the one graded").tag(config=True)
    secret = Unicode("", help="the course's secret that the questions are drawn from (default: "
                              "grading.secret in the kit, as for autograder bulk)").tag(config=True)

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        """The notebook with the kit's verdicts in its grading cells, and `resources`; raises
        NotebookError when a cell's points are not grading.toml's."""
        grading = load()
        ids = resources["nbgrader"]
        name = ids["notebook"]
        if name not in engines() or course_test_cells(nb, grading):
            nb, resources = Execute(parent=self.parent).preprocess(nb, resources)
        cells = [(cell, kit_part(cell, grading)) for cell in nb.cells]
        cells = [(cell, part) for cell, part in cells if part is not None]
        if not cells:
            return nb, resources
        for cell, part in cells:
            worth = 0 if grading.parts[part].bonus else grading.parts[part].points
            if float(cell.metadata.nbgrader.get("points", 0)) != worth:
                raise NotebookError(
                    f"{ids['assignment']}/{name}.ipynb: the grading cell of {part} is worth "
                    f"{cell.metadata.nbgrader.get('points')} points, grading.toml gives {worth}; build "
                    "the notebooks again with `autograder release nbgrader`, then `nbgrader "
                    "generate_assignment` them")
        entries = self.grade(nb, ids["student"], ids["assignment"], name)
        bonus = {}
        for cell, part in cells:
            entry = entries[part]
            report = part_report(part, entry, grading.parts[part].bonus)
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=report + "\n")]
            if grading.parts[part].bonus:
                bonus[cell.metadata.nbgrader["grade_id"]] = float(entry["score"])
            else:
                cell.outputs.append(nbformat.v4.new_output(
                    "execute_result", data={"text/plain": repr(float(entry["score"]))}, execution_count=None))
        if bonus:
            self.record_bonus(ids, bonus)
        return nb, resources

    def grade(self, nb: nbformat.NotebookNode, student: str, assignment: str, engine: str) -> dict[str, dict]:
        """results.json's entries by part for the notebook: the kit's known grade when it graded
        this very module, else an official grading now. Raises NotebookError."""
        module = notebook_module(nb, engine)
        known = self.known.get(student, {}).get(engine)
        if known is not None and module == known.module:
            return known.entries
        self.log.info("Grading %s/%s/%s.ipynb with the kit", student, assignment, engine)
        options = ["--grading-secret=" + (self.secret or str(DEFAULT_SECRET)), "--grading-context",
                   grader_version(), f"--reference={SOLUTIONS}"]
        return score_modules({engine: module} if module is not None else {}, KIT_ROOT, *options)

    def record_bonus(self, ids: dict, bonus: dict[str, float]) -> None:
        """Write each bonus cell's score as its extra credit, unless a grader has scored the cell."""
        with quiet_sqlalchemy(), Gradebook(ids["db_url"]) as gradebook:
            for cell_id, score in bonus.items():
                grade = gradebook.find_grade(cell_id, ids["notebook"], ids["assignment"], ids["student"])
                if grade.manual_score is None:  # a grader's own score and extra credit stand
                    grade.extra_credit = score
            gradebook.db.commit()


def with_the_kit(preprocessors: list) -> list:
    """Autograde's preprocessors with the kit in place of nbgrader's Execute; raises NotebookError
    when there is no Execute step."""
    def is_execute(step: object) -> bool:
        return step is Execute or step in ("nbgrader.preprocessors.Execute",
                                           "nbgrader.preprocessors.execute.Execute")
    if GradeWithKit in preprocessors:
        return preprocessors
    if not any(is_execute(step) for step in preprocessors):
        raise NotebookError("nbgrader_config.py: Autograde.autograde_preprocessors has no Execute step "
                            "for the kit to take the place of; list nbgrader's default steps")
    return [GradeWithKit if is_execute(step) else step for step in preprocessors]


def grade_with_the_kit(c: Config) -> None:
    """Put the kit in place of Execute among the Autograde steps of a configuration."""
    configured = c.Autograde.get("autograde_preprocessors")
    c.Autograde.autograde_preprocessors = with_the_kit(
        list(configured) if configured is not None else Autograde().autograde_preprocessors)


def use_the_kit(c: Config) -> None:
    """In a course's nbgrader_config.py (`use_the_kit(c)`): `nbgrader autograde` and formgrader's
    Autograde button grade with the kit, and `nbgrader export` writes a column per part."""
    grade_with_the_kit(c)
    c.ExportApp.plugin_class = PartsCsvExport


def course_config(course: Path) -> Config:
    """The configuration nbgrader reads when run in `course`: every nbgrader_config.py of
    Jupyter's configuration folders, then the course's own, which wins."""
    config = Config()
    for folder in [*reversed(jupyter_config_path()), str(course)]:
        with contextlib.suppress(ConfigFileNotFound):
            config.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
    return config


class CollectedLog(logging.Handler):
    """A logging handler that keeps every record as a line, `[LEVEL] message`."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the record as a line."""
        self.lines.append(f"[{record.levelname}] {record.getMessage()}")


def autograde_course(course: Path, db_url: str, assignment: str,
                     known: Mapping[str, Mapping[str, KnownGrade]] | None = None,
                     secret: Path | None = None, log_folder: Path | None = None) -> dict[str, str]:
    """Run nbgrader's own autograde, with the kit in it, on every submission of `assignment` in
    the course folder `course`; return why nbgrader could not autograde each one it could not,
    by its source (`submitted/<student>`; its log is kept in `log_folder` when given). `known`
    holds what the kit has just graded. Raises NotebookError when the gradebook has no such
    assignment."""
    course = course.resolve()
    with quiet_sqlalchemy(), Gradebook(db_url) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            raise NotebookError(f"{db_url}: no assignment {assignment!r}; run `nbgrader generate_assignment "
                                f"{assignment}` on the notebooks of `autograder release nbgrader`") from None
    config = course_config(course)
    grade_with_the_kit(config)  # whatever the course's own configuration says
    config.GradeWithKit.known = dict(known or {})
    config.GradeWithKit.secret = str(secret or "")
    students = sorted(path.parent.name for path in (course / "submitted").glob(f"*/{assignment}")
                      if path.is_dir())
    problems = {}
    for student in students:
        coursedir = CourseDirectory(config=config)
        coursedir.root, coursedir.db_url = str(course), db_url
        coursedir.assignment_id, coursedir.student_id = assignment, student
        converter = Autograde(coursedir=coursedir, config=config)
        converter.force, converter.create_student = True, True
        collected = CollectedLog()
        logger = converter.log
        level = logger.level
        logger.addHandler(collected)
        logger.setLevel(logging.INFO)
        try:
            with quiet_sqlalchemy():
                converter.start()
            failed = any(line.startswith("[ERROR]") for line in collected.lines)
        except Exception:  # noqa: BLE001 - nbgrader raises its own and SQLAlchemy's; all are reported
            failed = True
        finally:
            logger.removeHandler(collected)
            logger.setLevel(level)
        if failed:
            errors = [line for line in collected.lines if line.startswith("[ERROR]")]
            where = ""
            if log_folder is not None:
                log_folder.mkdir(parents=True, exist_ok=True)
                (log_folder / f"nbgrader-{student}.log").write_text("\n".join(collected.lines) + "\n",
                                                                    encoding="utf-8")
                where = f" (log: {log_folder / f'nbgrader-{student}.log'})"
            why = errors[0][8:300] if errors else "see the log"
            problems[f"submitted/{student}"] = f"nbgrader could not autograde it{where}: {why}"
    return problems


def course_grades(db_url: str, assignment: str, course: Path | None = None) -> CourseRecord:
    """nbgrader's grade of every submission of `assignment` that has a grade for every part, the
    course's grade of record, by the source intake gives it (`submitted/<student>`): each part's
    score (a grader's where one was typed in, the kit's otherwise, extra credit included) and
    the late penalty; with `course`, the course's own late penalty for the kit's grade of any
    other (`course_late_penalty`). Raises NotebookError when the gradebook has no such assignment."""
    parts = {grade_id(part): part for part in load().parts}
    found = {}
    with quiet_sqlalchemy(), Gradebook(db_url) as gradebook:
        try:
            submissions = gradebook.find_assignment(assignment).submissions
        except MissingEntry:
            raise NotebookError(f"{db_url}: no assignment {assignment!r}") from None
        for submission in submissions:
            # A cell neither autograded nor scored by hand has no grade (nbgrader shows it as 0).
            scores = {parts[grade.name]: grade.score for notebook in submission.notebooks
                      for grade in notebook.grades if grade.name in parts
                      and (grade.auto_score is not None or grade.manual_score is not None)}
            penalty = submission.late_submission_penalty or 0.0
            if len(scores) == len(parts):
                found[f"submitted/{submission.student.id}"] = (scores, penalty)
    return CourseRecord(found, None if course is None else course_late_penalty(course, db_url, assignment))


def course_late_penalty(course: Path, db_url: str, assignment: str) -> CoursePenalty:
    """The course's own late penalty (the LateSubmissionPlugin its nbgrader_config.py sets), for
    a grade nbgrader holds none of: applied as nbgrader's AssignLatePenalties applies it, to each
    notebook's score (its parts' points, bonus included), never below 0 nor above that score,
    from when the student handed the assignment in (timestamp.txt) and the due date in
    nbgrader's gradebook (with the student's extension). Raises NotebookError."""
    late = AssignLatePenalties(config=course_config(course))
    late.init_plugin()
    with quiet_sqlalchemy(), Gradebook(db_url) as gradebook:
        try:
            found = gradebook.find_assignment(assignment)
        except MissingEntry:
            raise NotebookError(f"{db_url}: no assignment {assignment!r}") from None
        due = found.duedate
        extensions = {s.student.id: s.extension for s in found.submissions if s.extension is not None}

    def penalty(student: str, parts: Mapping[str, float], submitted_at: str) -> tuple[float, str]:
        when = parse_time(submitted_at) if submitted_at else None
        if due is None or when is None:
            return 0.0, ""
        if when.tzinfo is not None:  # nbgrader keeps times in UTC, without a zone
            when = when.astimezone(timezone.utc).replace(tzinfo=None)
        seconds = (when - (due + extensions.get(student, timedelta()))).total_seconds()
        if seconds <= 0:
            return 0.0, ""
        taken = 0.0
        for engine in engines():
            score = sum(points for part, points in parts.items() if engine_of(part) == engine)
            said = late.plugin_inst.late_submission_penalty(student, score, seconds)
            taken += min(max(float(said), 0.0), score) if said is not None else 0.0
        return round(taken, 2), (f"handed in {submitted_at}, {seconds / 3600:.1f} hours late: the "
                                 "course's own penalty (nbgrader_config.py)")
    return penalty


def known_from_bulk(submissions: list[intake.Submission], entries: list[Entry]) -> dict[str, dict]:
    """What `autograder bulk` has just graded in an nbgrader course's submitted/ tree, for
    `autograde_course`: student -> engine -> KnownGrade."""
    graded = {entry.source: entry for entry in entries if entry.status == "graded"}
    known: dict[str, dict] = {}
    for submission in submissions:
        entry = graded.get(submission.source)
        folder, _, student = submission.source.partition("/")
        if entry is None or entry.content_hash != submission.content_hash or folder != "submitted":
            continue
        results = {score.part: {"score": score.points, "max_score": score.max, "output": score.messages,
                                "status": "passed" if passed(score) else "failed"}
                   for score in entry.scores}
        known[student] = {engine: KnownGrade(text, {part: result for part, result in results.items()
                                                    if engine_of(part) == engine})
                          for engine, text in submission.files.items()}
    return known


# -- nbgrader's export, a column per part -----------------------------------------------------------

class PartsCsvExport(ExportPlugin):
    """`nbgrader export`'s CSV, with one column per grading cell after nbgrader's own: the kit's
    parts by their ids (value.mul, ...), any other cell as <notebook>:<grade id>. A part's
    column holds its score (a grader's if one was typed in, the kit's otherwise, with extra
    credit); `score` is the total after the late penalty, as in nbgrader's own export."""

    COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
               "raw_score", "late_submission_penalty", "score", "max_score")

    def export(self, gradebook: Gradebook) -> None:
        """Write the CSV to `self.to` (default grades.csv): a row per student of each assignment."""
        parts = {grade_id(part): part for part in load().parts}
        rows, columns = [], []
        with quiet_sqlalchemy():
            for assignment in gradebook.assignments:
                if self.assignment and assignment.name not in self.assignment:
                    continue
                cells = [(notebook.name, cell.name) for notebook in assignment.notebooks
                         for cell in notebook.grade_cells]
                names = {cell: parts.get(cell[1], f"{cell[0]}:{cell[1]}") for cell in cells}
                kit_order = {part: index for index, part in enumerate(parts.values())}
                for name in sorted(names.values(), key=lambda n: (kit_order.get(n, len(kit_order)), n)):
                    if name not in columns:
                        columns.append(name)
                for student in gradebook.students:
                    if self.student and student.id not in self.student:
                        continue
                    rows.append(self.row(gradebook, assignment, student, names))
        self.log.info("Exporting grades with a column per part to %s", self.to or "grades.csv")
        with open(self.to or "grades.csv", "w", newline="", encoding="utf-8") as table:
            writer = csv.DictWriter(table, fieldnames=[*self.COLUMNS, *columns], restval="")
            writer.writeheader()
            writer.writerows(rows)

    @staticmethod
    def row(gradebook: Gradebook, assignment, student, names: dict) -> dict:
        """One student's row for one assignment; zeros where the student has no submission."""
        # Names as text, never a formula a spreadsheet would run (a student id is a folder's name).
        row = {"assignment": csv_cell(assignment.name), "duedate": assignment.duedate or "",
               "student_id": csv_cell(student.id), "last_name": csv_cell(student.last_name or ""),
               "first_name": csv_cell(student.first_name or ""), "email": csv_cell(student.email or ""),
               "max_score": assignment.max_score}
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
        except MissingEntry:
            row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
            row.update({name: 0.0 for name in names.values()})
            return row
        penalty = submission.late_submission_penalty or 0.0
        row.update(timestamp=submission.timestamp or "", raw_score=submission.score,
                   late_submission_penalty=penalty, score=max(0.0, submission.score - penalty))
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                row[names[(notebook.name, grade.name)]] = grade.score
        return row
