"""French: the conversation's rules (chat/services/turn/)."""

from __future__ import annotations

from languages.base import Conversation, pattern, phrases, words

_SMALL_TALK_PHRASES = (
    r"bonjour|bonsoir|salut|coucou|allô|merci(?:\s+beaucoup|\s+bien|\s+mille\s+fois)?|mille\s+mercis|"
    r"au\s+revoir|à\s+bientôt|à\s+plus|bonne\s+(?:journée|soirée)|d['\u2019]accord|ok(?:ay)?|parfait|"
    r"super|génial|très\s+bien|compris|ça\s+va|comment\s+(?:ça\s+va|allez-vous|vas-tu)"
)

CONVERSATION = Conversation(
    # Not "le", "la", "les", "en", "y": articles and the commonest words,
    # which every question has.
    anaphora=words(
        """il elle ils elles lui leur leurs eux cela ça ceci celui celle ceux celles là même mêmes
        autre autres tel telle"""
    ),
    continuations=words("et aussi alors mais ou puis donc sinon"),
    continuation_phrases=phrases(("et pour", "et si", "et les", "et le", "et la", "qu en", "quid de")),
    kinds=words(
        """acteur actrice chanteur chanteuse joueur joueuse artiste auteur écrivain compositeur
        réalisateur personne roi reine président ministre pays état ville province région nation île
        fleuve rivière lac montagne océan mer entreprise société chaîne restaurant marque produit
        modèle appareil plateforme service application langue animal race espèce plante équipe club
        groupe émission série saison épisode film livre roman chanson album jeu stade guerre bataille
        ouragan tempête drapeau fonds carte obligation action compte politique plan voiture véhicule
        école université personnage événement festival prix"""
    ),
    plural_suffixes=("s", "x"),
    pointer=pattern(
        r"\b(ce|cet|cette|ces|le|la|les|l)(?:['\u2019]|\s+)"
        r"((?:[^\W\d_][\w.\u2019-]*\s+){0,3}?)([^\W\d_][\w\u2019-]*?)\b"
    ),
    articles=frozenset({"le", "la", "les", "l"}),
    pinned=pattern(r"\s+(?:(?:de|du|des|en|à|appelée?|nommée?)\s+|d['\u2019])\S"),
    proper_name=pattern(r"\b[A-ZÀ-Ý][a-zà-ÿ]+", flags=0),
    question_start=pattern(
        r"^\s*(?:qu['\u2019]|(?:que|quoi|quel|quelle|quels|quelles|qui|quand|où|pourquoi|comment|"
        r"combien|est-ce|est|sont|peut|peuvent|puis|dois|doit|faut|y\s+a|explique|expliquez|décris|"
        r"décrivez|dis|dites)\b)"
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:encore|à\s+tous|tout\s+le\s+monde))?[\s!.,;:?)(\-~*^]*)+$"
    ),
    stop_words=words(
        """on pour son plus a le la les un une du de des et est en que qui quoi quel quelle quels
        quelles où comment
        pourquoi quand combien dans par sur avec pas ne il elle ils elles sont ce cette ces au aux je
        vous nous se sa ses qu été être ont mais ou très leur leurs lui eux y était sera l d"""
    ),
    indefinites=frozenset({"un", "une", "des"}),
    qualifiers=words(
        """maximum maximal maximale maximaux maximales minimum minimal minimale minimaux minimales total
        totale moyen moyenne habituel habituelle normal normale recommandé recommandée quotidien
        quotidienne hebdomadaire mensuel mensuelle annuel annuelle premier première dernier dernière
        prochain prochaine actuel actuelle nouveau nouvelle exact exacte"""
    ),
    comparisons=words(
        """comparer compare comparaison différence différences
        versus tous toutes chaque autre autres"""
    ),
)
