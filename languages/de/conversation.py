"""German: the conversation's rules (chat/services/turn/)."""

from __future__ import annotations

from languages.base import Conversation, pattern, phrases, words

_SMALL_TALK_PHRASES = (
    r"hallo|hi|hey|servus|moin|grüß\s+gott|guten\s+(?:morgen|tag|abend)|"
    r"danke(?:\s+schön|\s+sehr|schön)?|vielen\s+dank|besten\s+dank|herzlichen\s+dank|"
    r"tschüss|tschüs|auf\s+wiedersehen|bis\s+bald|bis\s+später|ok(?:ay)?|alles\s+klar|super|prima|"
    r"toll|perfekt|verstanden|wie\s+geht's|wie\s+geht\s+es\s+(?:dir|ihnen)"
)

CONVERSATION = Conversation(
    anaphora=words(
        """es er ihm ihn ihnen ihr ihre ihrer sein seine seiner dies diese dieser dieses diesem diesen
        dort dasselbe derselbe dieselbe solche solcher solches andere anderen anderes"""
    ),
    continuations=words("und auch also aber oder dann sonst"),
    continuation_phrases=phrases(("und wenn", "und was", "und wie", "und für", "wie steht", "wie wäre")),
    kinds=words(
        """schauspieler schauspielerin sänger sängerin spieler künstler autor autorin schriftsteller
        komponist regisseur person könig königin präsident minister land staat stadt provinz region
        nation insel fluss see berg ozean meer firma unternehmen kette restaurant marke produkt modell
        gerät plattform dienst app sprache tier rasse art pflanze mannschaft team verein band sendung
        serie staffel folge film buch roman lied album spiel stadion krieg schlacht sturm flagge fonds
        karte anleihe aktie konto police plan auto fahrzeug schule universität figur veranstaltung
        festival preis"""
    ),
    plural_suffixes=("en", "es", "er", "e", "n", "s"),
    pointer=pattern(
        r"\b(dieser|diese|dieses|diesem|diesen|jener|jene|jenes|der|die|das|den|dem|des)\s+"
        r"((?:[^\W\d_][\w.'\u2019-]*\s+){0,3}?)([^\W\d_][\w'\u2019-]*?)\b"
    ),
    articles=frozenset({"der", "die", "das", "den", "dem", "des"}),
    pinned=pattern(r"\s+(?:von|vom|aus|in|im|namens|genannt)\s+\S"),
    proper_name=pattern(r"\b[A-ZÄÖÜ][a-zäöüß]+", flags=0),
    question_start=pattern(
        r"^\s*(?:was|welche|welcher|welches|welchen|wer|wen|wem|wessen|wann|wo|woher|wohin|warum|"
        r"wieso|weshalb|wie|ist|sind|war|waren|hat|haben|hatte|kann|können|könnte|soll|sollte|muss|"
        r"darf|gibt|gilt|erkläre|erklären|beschreibe|nenne|sag|sagen)\b"
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:nochmal|euch|allen|zusammen))?[\s!.,;:?)(\-~*^]*)+$"
    ),
    stop_words=words(
        """der die das was war also will man an in so hat als es und ist nicht ein eine einen einem
        einer eines dem des zu mit von für auf wie wer wo
        wann warum welche welcher welches ich sie es im auch sich wird wurde wurden sind haben kann
        können aus bei nach oder über zum zur noch dass als ihr ihre sein seine nur wenn gibt muss sehr
        vom beim durch gegen ohne um unter vor zwischen diese dieser dieses diesem diesen kein keine
        nichts mehr viel viele"""
    ),
    indefinites=frozenset({"ein", "eine", "einen", "einem", "einer", "eines"}),
    qualifiers=words(
        """maximal maximale maximalen maximaler maximales minimal minimale minimalen minimaler höchste
        höchsten höchster niedrigste niedrigsten mindeste mindesten gesamte gesamten durchschnittliche
        durchschnittlichen übliche üblichen normale normalen empfohlene empfohlenen tägliche täglichen
        wöchentliche monatliche jährliche erste ersten letzte letzten nächste nächsten aktuelle
        aktuellen neue neuen genaue genauen richtige richtigen"""
    ),
    comparisons=words(
        """vergleich vergleiche vergleichen unterschied unterschiede beide
        beiden alle jede jeder andere anderen"""
    ),
)
