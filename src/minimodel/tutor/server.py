"""The MCP server: the tutor's tools, prompts and resources on the ``mcp`` SDK's ``MCPServer``,
spoken over stdio (``minimodel tutor``).

Every tool is a function of :mod:`.path_tools`, :mod:`.quiz_tools`, :mod:`.break_tools`,
:mod:`.exercise_tools` or :mod:`.model_tools`; this module only names them for the client and
turns the lab's errors (a ValueError or OSError that says what is wrong and how to fix it) into
a tool error with that sentence, instead of a traceback.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource

from minimodel.lab.breaks import WorkspaceError
from minimodel.messages import say
from minimodel.tutor import model_tools, path_tools, resources
from minimodel.tutor.break_tools import BreakDesk
from minimodel.tutor.exercise_tools import ExerciseDesk
from minimodel.tutor.learner import Learner
from minimodel.tutor.prompts import PROMPTS, prompt_text
from minimodel.tutor.quiz_tools import QuizDesk

SERVER_NAME = "minimodel"


def _as_tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the lab's errors turned into tool errors carrying their sentence."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, OSError, KeyError, WorkspaceError) as exc:
            raise ToolError(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args
                            else str(exc)) from None
    call.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return call


def _bound(fn: Callable[..., Any], learner: Learner) -> Callable[..., Any]:
    """A module-level tool function with its first argument (the learner) filled in."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(learner, *args, **kwargs)
    signature = inspect.signature(fn)
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:])
    call.__name__, call.__doc__ = fn.__name__, fn.__doc__
    return call


def tools(learner: Learner) -> dict[str, Callable[..., Any]]:
    """Tool name -> function, every tool of the tutor (the no-leak test walks this table)."""
    quiz, brk, ex = QuizDesk(learner), BreakDesk(learner), ExerciseDesk(learner)
    return {
        "lab_status": _bound(path_tools.lab_status, learner),
        "next_step": _bound(path_tools.next_step, learner),
        "read_lesson": _bound(path_tools.read_lesson, learner),
        "mark_lesson_read": _bound(path_tools.mark_lesson_read, learner),
        "quiz_list": quiz.list, "quiz_question": quiz.question, "quiz_answer": quiz.answer,
        "break_list": brk.list, "break_start": brk.start, "break_predict": brk.predict,
        "break_run": brk.run, "break_hint": brk.hint, "break_check": brk.check,
        "break_give_up": brk.give_up,
        "exercise_list": ex.list, "exercise_show": ex.show, "exercise_hint": ex.hint,
        "exercise_check": ex.check,
        "doctor": _bound(model_tools.doctor, learner),
        "explorer_page": _bound(model_tools.explorer_page, learner),
    }


def build_server(learner: Learner) -> MCPServer:
    """The tutor's MCP server for ``learner``: tools, prompts and resources."""
    server = MCPServer(SERVER_NAME, instructions=say("tutor.instructions", learner.lang),
                       log_level="WARNING")
    for name, fn in tools(learner).items():
        server.add_tool(_as_tool(fn), name=name, description=inspect.getdoc(fn))
    for name, description in PROMPTS.items():
        server.prompt(name=name, description=description)(_prompt(name, learner))
    for entry in resources.lesson_resources():
        lesson, lang = entry["lesson"], entry["lang"]
        server.add_resource(FunctionResource.from_function(
            functools.partial(resources.lesson_markdown, lesson, lang), uri=entry["uri"],
            name=entry["name"], title=entry["title"], mime_type="text/markdown",
            description=f"lesson {lesson.stem} ({lang})"))
    server.add_resource(FunctionResource.from_function(
        resources.glossary_markdown, uri=resources.GLOSSARY_URI, name="glossary",
        title="Glossary / Glosario", mime_type="text/markdown"))
    return server


def _prompt(name: str, learner: Learner) -> Callable[..., str]:
    """The prompt function of ``name``: ``item`` (a break, quiz or exercise; not for next)
    and ``lang`` (default: the server's)."""
    if name == "next":
        def next_prompt(lang: str = "") -> str:
            return prompt_text(name, learner.pick_lang(lang or None))
        return next_prompt

    def item_prompt(item: str = "", lang: str = "") -> str:
        return prompt_text(name, learner.pick_lang(lang or None), item or None)
    return item_prompt


def serve(learner: Learner) -> None:
    """Serve over stdin/stdout until the client closes stdin (or Ctrl-C)."""
    build_server(learner).run("stdio")
