"""``minimodel tutor``: the lab as a Model Context Protocol server, for an AI assistant beside
the learner.

The server is a thin layer over the lab's own functions: the same learner folder, progress,
content, judge, quiz grader and break workspaces as the ``minimodel`` commands, so a step done
with the tutor is the same step done in the terminal. Its rules are enforced here, on the
server side, not left to the assistant's good manners: predictions before a run, one hint per
call, no reference solution, hidden case, expected value, break cause or fix in any result
(the fix only after the learner gives up, as ``break diff``).

Modules: :mod:`.learner` (the learner folder and language), :mod:`.path_tools`,
:mod:`.quiz_tools`, :mod:`.break_tools`, :mod:`.exercise_tools`, :mod:`.model_tools` (the
tools as plain functions returning dicts); :mod:`.prompts` and :mod:`.resources`;
:mod:`.server` puts them on an MCP server (the ``mcp`` SDK, ``pip install "minimodel[tutor]"``).
"""
