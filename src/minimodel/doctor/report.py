"""Run every check on a model and show the findings: a Rich table, or JSON for scripts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minimodel.doctor.check_reach import check_reachability
from minimodel.doctor.check_rows import check_rows
from minimodel.doctor.check_sizes import check_sizes
from minimodel.doctor.check_tie import check_tie
from minimodel.doctor.check_training import check_progress, check_training
from minimodel.doctor.findings import PROBLEM, WARNING, Finding
from minimodel.doctor.memo import remembering
from minimodel.doctor.names import Roles
from minimodel.doctor.subject import Subject, examine
from minimodel.doctor.texts import words
from minimodel.messages import say

CHECKS = (check_progress, check_tie, check_sizes, check_rows, check_reachability, check_training)
STYLES = {"ok": "green", "info": "cyan", "warning": "yellow", "problem": "bold red",
          "skipped": "dim"}


@dataclass
class Report:
    subject: Subject
    findings: list[Finding]

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status == PROBLEM]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.status == WARNING]

    @property
    def healthy(self) -> bool:
        return not self.problems

    def keys(self, status: str | None = None) -> list[str]:
        """The text keys of the findings (of one status), e.g. ``["tie.stored_twice"]``."""
        return [f.key for f in self.findings if status is None or f.status == status]

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        s = self.subject
        return {
            "path": str(s.files.path), "kind": s.files.kind, "note": s.files.note,
            "source": s.roles.source, "transformers_failed": s.arch_failure,
            "embedding": {"name": s.roles.embedding_label, "shape": list(s.E.shape),
                          "found_by_shape": s.roles.by_shape},
            "head": {"name": s.roles.head_name, "stored": s.W is not None,
                     "shape": None if s.W is None else list(s.W.shape)},
            "tokenizer": None if s.vocab is None else {"path": str(s.vocab.source),
                                                      "size": s.vocab.size},
            "healthy": self.healthy,
            "findings": [{"check": f.check, "status": f.status, "key": f.key,
                          **dict(zip(("found", "why", "fix"), words(f.key, f.values, lang))),
                          "data": f.data} for f in self.findings],
        }


# The checks whose numbers are worth computing while transformers is asked (see .memo).
EXPENSIVE = (check_rows, check_reachability)


def diagnose(path: str | Path, tokenizer: str | Path | None = None,
             overlap: bool = True) -> Report:
    """Examine the model at ``path`` and run every check on it. With ``overlap``, a first run
    on a config asks transformers in a child process and rehearses the expensive checks on the
    built-in table's guess meanwhile (:mod:`.background`, :mod:`.memo`); the report is the same
    as without."""
    with remembering():
        subject = examine(path, tokenizer, overlap, while_waiting=_rehearse)
        findings: list[Finding] = []
        for check in CHECKS:
            findings.extend(check(subject))
    return Report(subject, findings)


def _rehearse(guess: Subject) -> None:
    """Run the expensive checks on the guessed subject for their numbers alone (kept by the
    memo); a failure here is left for the real run to report."""
    for check in EXPENSIVE:
        try:
            check(guess)
        except Exception:  # noqa: BLE001, S110 - the real run raises it again, on the real subject
            pass


# The reader's note on how the files were read (kept in English in --json) -> its message.
NOTES = {"sharded safetensors": "sharded",
         "pytorch_model.bin read with torch.load(mmap=True, weights_only=True)": "torch_load",
         "pytorch_model.bin read without torch (tensors only, memory-mapped)": "numpy_pickle"}


def print_report(report: Report, lang: str = "en") -> None:
    from rich.markup import escape

    from minimodel._console import Console

    s = report.subject
    console = Console()
    head = f"{s.roles.head_name} {tuple(s.W.shape)}" if s.W is not None else (
        say("doctor.absent", lang, name=s.roles.head_name))
    note = NOTES.get(s.files.note, s.files.note)
    note = ", " + (say(f"doctor.note.{note}", lang) if note in NOTES.values() else note) \
        if note else ""
    console.print(say("doctor.header", lang, path=f"[bold]{escape(str(s.files.path))}[/]",
                      kind=say(f"doctor.kind.{s.files.kind}", lang), note=escape(note),
                      embedding=escape(s.roles.embedding_label), shape=tuple(s.E.shape),
                      head=escape(head)), highlight=False)
    source = s.roles.source
    if source == Roles.source:  # the default: the doctor's own table, a phrase to translate
        source = say("doctor.source_table", lang)
    console.print(say("doctor.source", lang, source=source), highlight=False)
    if s.arch_failure is not None:
        failure = {k: escape(str(v)) for k, v in s.arch_failure.items()}
        console.print(say(f"doctor.transformers_{failure.pop('kind')}", lang, **failure),
                      highlight=False)
    if console.width >= TABLE_WIDTH:
        console.print(_findings_table(report, lang))
    else:
        _print_findings_stacked(console, report, lang)
    console.print(say("doctor.summary", lang, problems=len(report.problems),
                      warnings=len(report.warnings)), highlight=False)


# Five columns need about this many terminal columns before a tensor name
# (``model.language_model.embed_tokens.weight``) is cut inside a cell; a narrower terminal
# gets one block per finding instead, its texts as wide as the terminal.
TABLE_WIDTH = 120


def _status(status: str, lang: str) -> str:
    return f"[{STYLES[status]}]{say(f'doctor.status.{status}', lang)}[/]"


def _findings_table(report: Report, lang: str):
    """The findings as a table: check, status, found, why it matters, fix."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_lines=True)
    for column in ("check", "status", "found", "why", "fix"):
        table.add_column(say(f"doctor.column.{column}", lang), overflow="fold")
    for f in report.findings:
        found, why, fix = words(f.key, f.values, lang)
        table.add_row(say(f"doctor.check.{f.check}", lang), _status(f.status, lang),
                      escape(found), escape(why), escape(fix))
    return table


def _print_findings_stacked(console, report: Report, lang: str) -> None:
    """The findings one block each (a terminal narrower than :data:`TABLE_WIDTH`)::

        claimed vs stored: ok
          found           Tied, and stored once: token_emb.weight (1024x128) is both ...
          why it matters  A tied model keeps one matrix; ...
          fix             Nothing to do.
    """
    from rich.markup import escape
    from rich.padding import Padding
    from rich.table import Table

    for f in report.findings:
        console.print()
        console.print(f"[bold]{escape(say(f'doctor.check.{f.check}', lang))}[/]: "
                      f"{_status(f.status, lang)}", highlight=False)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column(overflow="fold")  # folds only a word wider than the whole line
        for column, text in zip(("found", "why", "fix"), words(f.key, f.values, lang)):
            grid.add_row(say(f"doctor.column.{column}", lang), escape(text))
        console.print(Padding(grid, (0, 0, 0, 2)))
    console.print()
