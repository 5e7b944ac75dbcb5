"""French texts the checks run on (languages/base.py, ``Examples``)."""

from __future__ import annotations

from languages.base import Examples

EXAMPLES = Examples(
    sentences=(
        "Où le café a-t-il été cultivé pour la première fois ?",
        "Comment mesure-t-on habituellement l'inflation ?",
        "Merci beaucoup",
        "Pourquoi le ciel est-il bleu ?",
    ),
    small_talk=("Merci beaucoup !", "Au revoir", "Bonsoir", "Salut à tous"),
    questions=("Quelle est la durée de la garantie", "Combien de temps dure la garantie"),
    statements=("La garantie dure deux ans.",),
    follow_ups=(
        "Et pour les patients de plus de 75 ans atteints d'insuffisance rénale ?",
        "Est-ce que cela convient aussi aux patients avec une maladie rénale chronique ?",
    ),
    pointers=("Quelle est la capitale de ce pays ?", "Dans quels films l'acteur a-t-il joué ?"),
    same_term=("garanties", "garantie"),
)
