"""French stop words of the lexical analysis (languages/analysis.py): the
Snowball project's list (BSD licence), the one PostgreSQL's ``french``
configuration drops."""

from __future__ import annotations

from languages.base import words

# The list lacks the plural article "les" (the stemmer turns it into "le", which it has).
STOP_WORDS = words(
    """
    au aux avec ce ces dans de des du elle en et eux il je la le leur lui ma mais me même mes moi mon ne
    nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre
    vous c d j l à m n s t y été étée étées étés étant étante étants étantes suis es est sommes êtes
    sont serai seras sera serons serez seront serais serait serions seriez seraient étais était étions
    étiez étaient fus fut fûmes fûtes furent sois soit soyons soyez soient fusse fusses fût fussions
    fussiez fussent ayant ayante ayantes ayants eu eue eues eus ai as avons avez ont aurai auras aura
    aurons aurez auront aurais aurait aurions auriez auraient avais avait avions aviez avaient eut eûmes
    eûtes eurent aie aies ait ayons ayez aient eusse eusses eût eussions eussiez eussent
    """
) | {"les"}
