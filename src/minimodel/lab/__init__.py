"""The minimodel learning lab: lessons in order, each with its questions, break and exercise.

One content model (:mod:`.items`): every quiz question, break and exercise is an item with an
id, a kind, texts in English and Spanish and its lesson, and the lessons' front matter
(:mod:`.lessons`) is the one place where a lesson links to its items. On top of it:

* :mod:`.path`: the learning path and what "done" means (``minimodel lab next|status|done``);
* :mod:`.overview`: the one validator (``minimodel lab validate``), whose sections are the
  quiz files, the links, the translations (:mod:`.freshness`), the exercises, the breaks and
  the glossary (:mod:`.terminology`);
* :mod:`.i18n`: the one message catalogue of the lab commands.

Content (YAML, patch files, reference solutions, lessons) lives in ``lab/content/``; learner
progress lives in a plain-file learner folder (see :mod:`minimodel.lab.progress`).
"""
