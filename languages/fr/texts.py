"""French's built-in replies."""

from __future__ import annotations

from languages.base import Texts

TEXTS = Texts(
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
    quoting="Voici ce que disent les documents, dans leur propre langue :",
)
