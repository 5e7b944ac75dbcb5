"""German: the conversation's rules and built-in texts."""

from __future__ import annotations

from chat.languages.base import Language, pattern, phrases, words

CODE = "de"

_SMALL_TALK_PHRASES = (
    r"hallo|hi|hey|servus|moin|grüß\s+gott|guten\s+(?:morgen|tag|abend)|"
    r"danke(?:\s+schön|\s+sehr|schön)?|vielen\s+dank|besten\s+dank|herzlichen\s+dank|"
    r"tschüss|tschüs|auf\s+wiedersehen|bis\s+bald|bis\s+später|ok(?:ay)?|alles\s+klar|super|prima|"
    r"toll|perfekt|verstanden|wie\s+geht's|wie\s+geht\s+es\s+(?:dir|ihnen)"
)

LANGUAGE = Language(
    code=CODE,
    name="German",
    anaphora=words(
        """es er ihm ihn ihnen ihr ihre ihrer sein seine seiner dies diese dieser dieses diesem diesen
        dort dasselbe derselbe dieselbe solche solcher solches andere anderen anderes""",
        CODE,
    ),
    continuations=words("und auch also aber oder dann sonst", CODE),
    continuation_phrases=phrases(
        ("und wenn", "und was", "und wie", "und für", "wie steht", "wie wäre"), CODE
    ),
    kinds=words(
        """schauspieler schauspielerin sänger sängerin spieler künstler autor autorin schriftsteller
        komponist regisseur person könig königin präsident minister land staat stadt provinz region
        nation insel fluss see berg ozean meer firma unternehmen kette restaurant marke produkt modell
        gerät plattform dienst app sprache tier rasse art pflanze mannschaft team verein band sendung
        serie staffel folge film buch roman lied album spiel stadion krieg schlacht sturm flagge fonds
        karte anleihe aktie konto police plan auto fahrzeug schule universität figur veranstaltung
        festival preis""",
        CODE,
    ),
    plural_suffixes=("en", "es", "er", "e", "n", "s"),
    pointer=pattern(
        r"\b(dieser|diese|dieses|diesem|diesen|jener|jene|jenes|der|die|das|den|dem|des)\s+"
        r"((?:[^\W\d_][\w.'\u2019-]*\s+){0,3}?)([^\W\d_][\w'\u2019-]*?)\b",
        CODE,
    ),
    articles=frozenset({"der", "die", "das", "den", "dem", "des"}),
    pinned=pattern(r"\s+(?:von|vom|aus|in|im|namens|genannt)\s+\S", CODE),
    proper_name=pattern(r"\b[A-ZÄÖÜ][a-zäöüß]+", CODE, 0),
    question_start=pattern(
        r"^\s*(?:was|welche|welcher|welches|welchen|wer|wen|wem|wessen|wann|wo|woher|wohin|warum|"
        r"wieso|weshalb|wie|ist|sind|war|waren|hat|haben|hatte|kann|können|könnte|soll|sollte|muss|"
        r"darf|gibt|gilt|erkläre|erklären|beschreibe|nenne|sag|sagen)\b",
        CODE,
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:nochmal|euch|allen|zusammen))?[\s!.,;:?)(\-~*^]*)+$", CODE
    ),
    stop_words=words(
        """der die das was war also will man an in so hat als es und ist nicht ein eine einen einem
        einer eines dem des zu mit von für auf wie wer wo
        wann warum welche welcher welches ich sie es im auch sich wird wurde wurden sind haben kann
        können aus bei nach oder über zum zur noch dass als ihr ihre sein seine nur wenn gibt muss sehr
        vom beim durch gegen ohne um unter vor zwischen diese dieser dieses diesem diesen kein keine
        nichts mehr viel viele""",
        CODE,
    ),
    no_answer_text=(
        "Die Dokumente dieses Arbeitsbereichs sagen dazu nichts. Fragen Sie mit anderen Worten "
        "oder nach etwas, das sie behandeln."
    ),
    small_talk_text="Hallo! Fragen Sie mich alles zu den Dokumenten dieses Arbeitsbereichs.",
    no_documents_text=(
        "Dieser Arbeitsbereich hat noch keine Dokumente, daher gibt es nichts, woraus ich antworten "
        "könnte. Sobald Dokumente hochgeladen und bereit sind, fragen Sie erneut."
    ),
    not_found_text="Ich habe in den Dokumenten dieses Arbeitsbereichs keine Antwort darauf gefunden.",
    which_one="Welches meinen Sie?",
    form_title="Welches meinen Sie?",
    safe_reply=(
        "Diese Antwort kann ich hier nicht geben. Ihre Frage wurde an eine Person weitergeleitet, "
        "die sich darum kümmert."
    ),
    fallback_text=(
        "Leider konnte ich diesmal keine richtige Antwort zusammenstellen. Bitte versuchen Sie es erneut "
        "oder formulieren Sie die Frage anders."
    ),
    indefinites=frozenset({"ein", "eine", "einen", "einem", "einer", "eines"}),
)
