"""The languages the service knows: every folder of this package that
defines ``LANGUAGE`` (a :class:`~languages.base.Language`), found when the
package is first imported. Adding a language is adding its folder; nothing
lists them elsewhere.

:data:`LANGUAGES` is keyed by code and ordered by precedence (English
first): where the service tries languages in turn, it tries them in this
order; :data:`WRITTEN_IN` holds them by script. :func:`reload` reads the
folders again, so that a folder added to the package's path (a test's
throwaway language) is found; both mappings are updated in place, so every
module that took them sees the change.
"""

from __future__ import annotations

import importlib
import pkgutil

from languages.base import Language
from languages.normalize import COMPARED, FOLDINGS
from languages.scripts import Script

LANGUAGES: dict[str, Language] = {}
# The languages of each script, in the same order (detection reads a text's
# script first, then compares only its languages).
WRITTEN_IN: dict[Script, tuple[Language, ...]] = {}


def reload() -> None:
    """Find every language folder on the package's path (module doc)."""
    found = sorted(_folders(), key=lambda language: (language.precedence, language.code))
    LANGUAGES.clear()
    LANGUAGES.update((language.code, language) for language in found)
    WRITTEN_IN.clear()
    for script in dict.fromkeys(language.script for language in found):
        WRITTEN_IN[script] = tuple(language for language in found if language.script is script)
    FOLDINGS.clear()
    FOLDINGS.update((language.code, language.folding) for language in found if language.folding is not None)
    COMPARED[:] = [first.folding for first, *_ in WRITTEN_IN.values() if first.folding is not None]


def _folders() -> list[Language]:
    # The package by name: importing it here would be an import cycle.
    package = importlib.import_module(__package__ or "languages")
    found = []
    for folder in pkgutil.iter_modules(package.__path__):
        if not folder.ispkg:
            continue
        language = getattr(importlib.import_module(f"{package.__name__}.{folder.name}"), "LANGUAGE", None)
        if not isinstance(language, Language):
            continue
        if language.code != folder.name:
            raise ImportError(f"languages/{folder.name}/ defines the language {language.code!r}")
        found.append(language)
    return found


reload()

# The default: the language a text that tells none is held in, and the one
# the rules and prompts were written in.
ENGLISH = LANGUAGES["en"]


def for_language(code: str) -> Language:
    """The language of ``code`` (ISO 639-1); English for one without a folder."""
    return LANGUAGES.get(code, ENGLISH)
