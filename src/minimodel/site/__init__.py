"""The documentation site and the lessons' notebooks, built from the sources the lab ships.

One module per concern: :mod:`~minimodel.site.stage` (the staging folder and the pages it
generates), :mod:`~minimodel.site.lesson_pages` (lessons whose code has run, with their
figures), :mod:`~minimodel.lab.pages` (breaks, exercises, quiz, lab index),
:mod:`~minimodel.site.results_page` and :mod:`~minimodel.site.figures`,
:mod:`~minimodel.site.build` (MkDocs), :mod:`~minimodel.site.serve` (a local server) and
:mod:`~minimodel.site.notebooks` (a lesson as a Jupyter notebook). It sits above the lab in the
import layers and below the commands; nothing in the library imports it.
"""
