"""German texts the checks run on (languages/base.py, ``Examples``)."""

from __future__ import annotations

from languages.base import Examples

EXAMPLES = Examples(
    sentences=(
        "Wo wurde Kaffee zuerst angebaut?",
        "Wie lange gilt die Garantie für den Wasserkocher?",
        "Größe?",
        "Danke!",
        "Vielen Dank!",
        "Wie kommunizieren Ameisen miteinander?",
    ),
    small_talk=("Vielen Dank!", "Guten Morgen", "Tschüss", "Hallo zusammen"),
    questions=("Wie lange gilt die Garantie", "Gibt es eine Garantie auf den Deckel"),
    statements=("Die Garantie gilt zwei Jahre.",),
    follow_ups=(
        "Und für Patienten über 75 Jahre mit eingeschränkter Nierenfunktion?",
        "Ist es auch für Patienten mit chronischer Nierenerkrankung sicher genug?",
    ),
    pointers=("Wie heißt die Hauptstadt dieses Landes?",),
    same_term=("Garantien", "Garantie"),
)
