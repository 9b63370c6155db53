"""The tie doctor on a model folder and the embedding explorer's page of a run: the same
functions as ``minimodel doctor --json`` and ``minimodel explore --out``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minimodel.doctor import diagnose
from minimodel.explorer import write_explorer
from minimodel.messages import say
from minimodel.tutor.learner import Learner


def doctor(learner: Learner, path: str, tokenizer: str | None = None,
           lang: str | None = None) -> dict[str, Any]:
    """``doctor PATH --json``: every check of the tie, sizes, rows and reachable tokens."""
    lang = learner.pick_lang(lang)
    report = diagnose(str(Path(path).expanduser()), tokenizer)
    return {**report.to_dict(lang), "healthy": report.healthy}


def explorer_page(learner: Learner, runs: list[str], out: str | None = None,
                  lang: str | None = None) -> dict[str, Any]:
    """Write the explorer's offline HTML page of ``runs`` and return where it is. Default
    place: ``<learner dir>/work/explorer/<first run's folder name>.html`` (replaced)."""
    lang = learner.pick_lang(lang)
    if not runs:
        raise ValueError(say("tutor.explorer.no_runs", lang))
    if out is None:
        name = Path(runs[0]).expanduser().resolve().name or "run"
        target = learner.progress().learner_dir / "work" / "explorer" / f"{name}.html"
    else:
        target = Path(out).expanduser()
    if target.is_dir():
        raise ValueError(say("tutor.explorer.out_is_folder", lang, out=target))
    if target.resolve().suffix.lower() != ".html":
        # the page replaces the file: never a learner's progress, a solution, a package file
        raise ValueError(say("tutor.explorer.out_not_html", lang, out=target))
    target.parent.mkdir(parents=True, exist_ok=True)
    path = write_explorer([str(Path(r).expanduser()) for r in runs], target, lang=lang)
    return {"page": str(path.resolve()), "bytes": path.stat().st_size,
            "say": say("tutor.explorer.written", lang, page=path.resolve())}
