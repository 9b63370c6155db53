"""MkDocs hooks of the site build (``hooks:`` in mkdocs.yml).

The i18n plugin builds the Spanish half by running the whole build again on the same config,
and sets the theme's language only at the very end of ``on_config``. mkdocstrings reads that
language earlier, so both halves would render the reference pages with the English words
("Parameters", "Source code in"), and each build appends one more mkdocstrings Markdown
extension, the first of which would keep rendering. After every other ``on_config``, this hook
keeps only the newest extension and points its handlers at the language being built (the
Spanish words are ours: site/templates/python/material/languages/es.html.jinja).
"""

from __future__ import annotations

from typing import Any

from mkdocs.plugins import event_priority


@event_priority(-200)    # after i18n's on_config (-100), which sets theme.language
def on_config(config: Any) -> Any:
    ours = [ext for ext in config.markdown_extensions
            if type(ext).__name__ == "MkdocstringsExtension"]
    for stale in ours[:-1]:
        config.markdown_extensions.remove(stale)
    if ours:
        ours[-1]._handlers._locale = str(config.theme.get("language") or "en")
    return config
