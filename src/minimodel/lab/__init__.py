"""The minimodel learning lab: quizzes, breaks and judged exercises.

Content (YAML, patch files, reference solutions) lives in ``lab/content/``; learner progress
lives in a plain-file learner folder (see :mod:`minimodel.lab.progress`).
"""
