"""French: the conversation's rules and built-in texts."""

from __future__ import annotations

from chat.languages.base import Language, pattern, phrases, words

CODE = "fr"

_SMALL_TALK_PHRASES = (
    r"bonjour|bonsoir|salut|coucou|allô|merci(?:\s+beaucoup|\s+bien|\s+mille\s+fois)?|mille\s+mercis|"
    r"au\s+revoir|à\s+bientôt|à\s+plus|bonne\s+(?:journée|soirée)|d['\u2019]accord|ok(?:ay)?|parfait|"
    r"super|génial|très\s+bien|compris|ça\s+va|comment\s+(?:ça\s+va|allez-vous|vas-tu)"
)

LANGUAGE = Language(
    code=CODE,
    name="French",
    # Not "le", "la", "les", "en", "y": articles and the commonest words,
    # which every question has.
    anaphora=words(
        """il elle ils elles lui leur leurs eux cela ça ceci celui celle ceux celles là même mêmes
        autre autres tel telle""",
        CODE,
    ),
    continuations=words("et aussi alors mais ou puis donc sinon", CODE),
    continuation_phrases=phrases(("et pour", "et si", "et les", "et le", "et la", "qu en", "quid de"), CODE),
    kinds=words(
        """acteur actrice chanteur chanteuse joueur joueuse artiste auteur écrivain compositeur
        réalisateur personne roi reine président ministre pays état ville province région nation île
        fleuve rivière lac montagne océan mer entreprise société chaîne restaurant marque produit
        modèle appareil plateforme service application langue animal race espèce plante équipe club
        groupe émission série saison épisode film livre roman chanson album jeu stade guerre bataille
        ouragan tempête drapeau fonds carte obligation action compte politique plan voiture véhicule
        école université personnage événement festival prix""",
        CODE,
    ),
    plural_suffixes=("s", "x"),
    pointer=pattern(
        r"\b(ce|cet|cette|ces|le|la|les|l)(?:['\u2019]|\s+)"
        r"((?:[^\W\d_][\w.\u2019-]*\s+){0,3}?)([^\W\d_][\w\u2019-]*?)\b",
        CODE,
    ),
    articles=frozenset({"le", "la", "les", "l"}),
    pinned=pattern(r"\s+(?:(?:de|du|des|en|à|appelée?|nommée?)\s+|d['\u2019])\S", CODE),
    proper_name=pattern(r"\b[A-ZÀ-Ý][a-zà-ÿ]+", CODE, 0),
    question_start=pattern(
        r"^\s*(?:qu['\u2019]|(?:que|quoi|quel|quelle|quels|quelles|qui|quand|où|pourquoi|comment|"
        r"combien|est-ce|est|sont|peut|peuvent|puis|dois|doit|faut|y\s+a|explique|expliquez|décris|"
        r"décrivez|dis|dites)\b)",
        CODE,
    ),
    small_talk=pattern(
        rf"^(?:(?:{_SMALL_TALK_PHRASES})(?:\s+(?:encore|à\s+tous|tout\s+le\s+monde))?[\s!.,;:?)(\-~*^]*)+$",
        CODE,
    ),
    stop_words=words(
        """on pour son plus a le la les un une du de des et est en que qui quoi quel quelle quels
        quelles où comment
        pourquoi quand combien dans par sur avec pas ne il elle ils elles sont ce cette ces au aux je
        vous nous se sa ses qu été être ont mais ou très leur leurs lui eux y était sera l d""",
        CODE,
    ),
    no_answer_text=(
        "Les documents de cet espace de travail ne le disent pas. Essayez de reformuler la question, "
        "ou posez-la sur un sujet qu'ils traitent."
    ),
    small_talk_text="Bonjour ! Posez-moi vos questions sur les documents de cet espace de travail.",
    no_documents_text=(
        "Cet espace de travail n'a pas encore de documents : il n'y a donc rien à partir de quoi "
        "répondre. Posez à nouveau la question quand des documents seront téléversés et prêts."
    ),
    not_found_text=(
        "Je n'ai pas trouvé de réponse à cette question dans les documents de cet espace de travail."
    ),
    which_one="Lequel voulez-vous dire ?",
    form_title="Lequel voulez-vous dire ?",
    safe_reply=(
        "Je ne peux pas donner cette réponse ici. Votre question a été transmise à une personne qui "
        "y donnera suite."
    ),
    fallback_text=(
        "Désolé, je n'ai pas pu formuler une réponse correcte cette fois-ci. Veuillez réessayer ou "
        "reformuler la question."
    ),
    indefinites=frozenset({"un", "une", "des"}),
)
