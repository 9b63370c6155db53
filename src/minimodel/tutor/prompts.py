"""The prompts a client shows as slash commands (``/break``, ``/next``, ``/quiz``,
``/exercise``): how to tutor with the tools, in the learner's language. Each says the same
four things: ask before telling, predictions first, one hint at a time, never a solution."""

from __future__ import annotations

from minimodel.messages import say

PROMPTS = {
    "break": "Run a break with the learner: predictions, run, one hint at a time, check.",
    "next": "The learner's next step on the path, and how to take it with them.",
    "quiz": "Ask the lab's questions one at a time, graded as `quiz take` grades.",
    "exercise": "Coach a judged exercise without writing the solution.",
}


def prompt_text(name: str, lang: str, item: str | None = None) -> str:
    """The prompt ``name`` in ``lang``; ``item`` names the break, quiz or exercise."""
    named = say("tutor.prompt.item", lang, id=item) if item else ""
    return say(f"tutor.prompt.{name}", lang, item=named)
