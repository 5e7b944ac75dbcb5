"""Stop words of the lexical analysis (retrieval/languages/analysis.py).

English, German and French: the Snowball project's lists (BSD licence), the
ones PostgreSQL's ``english``, ``german`` and ``french`` configurations drop,
so an English passage loses the words it lost before the analysis moved to
Python. stopwordsiso's lists are several times longer: its English one
(1,298 words) holds "research", "information", "value", "results",
"effect" and "significant", words a scientific question is made of
(docs/retrieval.md, "The lexical analysis"). Persian and Arabic have no
Snowball list: stopwordsiso's are used (``analysis.stop_words``).
"""

from __future__ import annotations

ENGLISH = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
    hers herself it its itself they them their theirs themselves what which who whom this that these
    those am is are was were be been being have has had having do does did doing a an the and but if or
    because as until while of at by for with about against between into through during before after
    above below to from up down in out on off over under again further then once here there when where
    why how all any both each few more most other some such no nor not only own same so than too very s
    t can will just don should now
    """.split()  # noqa: SIM905 (a readable block of words)
)

GERMAN = frozenset(
    """
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm
    andern anderr anders auch auf aus bei bin bis bist da damit dann der den des dem die das daß
    derselbe derselben denselben desselben demselben dieselbe dieselben dasselbe dazu dein deine deinem
    deinen deiner deines denn derer dessen dich dir du dies diese diesem diesen dieser dieses doch dort
    durch ein eine einem einen einer eines einig einige einigem einigen einiger einiges einmal er ihn
    ihm es etwas euer eure eurem euren eurer eures für gegen gewesen hab habe haben hat hatte hatten
    hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im in indem ins ist jede jedem
    jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem keinen keiner keines
    können könnte machen man manche manchem manchen mancher manches mein meine meinem meinen meiner
    meines mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen
    seiner seines selbst sich sie ihnen sind so solche solchem solchen solcher solches soll sollte
    sondern sonst über um und uns unse unsem unsen unser unses unter viel vom von vor während war waren
    warst was weg weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will
    wir wird wirst wo wollen wollte würde würden zu zum zur zwar zwischen
    """.split()  # noqa: SIM905 (a readable block of words)
)

# The list lacks the plural article "les" (the stemmer turns it into "le", which it has).
FRENCH = frozenset(
    """
    au aux avec ce ces dans de des du elle en et eux il je la le leur lui ma mais me même mes moi mon ne
    nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre
    vous c d j l à m n s t y été étée étées étés étant étante étants étantes suis es est sommes êtes
    sont serai seras sera serons serez seront serais serait serions seriez seraient étais était étions
    étiez étaient fus fut fûmes fûtes furent sois soit soyons soyez soient fusse fusses fût fussions
    fussiez fussent ayant ayante ayantes ayants eu eue eues eus ai as avons avez ont aurai auras aura
    aurons aurez auront aurais aurait aurions auriez auraient avais avait avions aviez avaient eut eûmes
    eûtes eurent aie aies ait ayons ayez aient eusse eusses eût eussions eussiez eussent
    """.split()  # noqa: SIM905 (a readable block of words)
) | {"les"}
