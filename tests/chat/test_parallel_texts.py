"""Persian drug leaflets that name their drug in every sentence, asked in
Persian through the chat API on the extractive engine (the English
documents: test_parallel_documents.py).

Persian has no capitals to tell a name by: over leaflets that answer alike,
a word of the question none of them has ("ناپروکسن") names a drug they do
not cover (chat/services/turn/naming.py)."""

from __future__ import annotations

import pytest

from chat.contract import DecisionReason
from tests.chat.helpers import cited_resources as cited
from tests.chat.helpers import ingest_text
from tests.chat.helpers import traced_turn as ask
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# (drug, maximum daily dose, over 70)
DRUGS = (
    ("ایبوپروفن", "۱۲۰۰ میلی‌گرم", "۸۰۰ میلی‌گرم"),
    ("استامینوفن", "۴ گرم", "۳ گرم"),
    ("آسپرین", "۳ گرم", "۱ گرم"),
)
DOSE = "حداکثر دوز روزانه برای بزرگسالان چقدر است؟"


@pytest.fixture
def leaflets(owner: Tenant) -> dict[str, str]:
    owner.workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    owner.workspace.save()
    ids = {}
    for drug, dose, older in DRUGS:
        text = (
            f"{drug} برای تسکین درد و کاهش تب مصرف می‌شود.\n\n"
            f"حداکثر دوز روزانه {drug} برای بزرگسالان {dose} است.\n\n"
            f"برای بیماران بالای ۷۰ سال مصرف {drug} نباید از {older} در روز بیشتر شود."
        )
        ids[drug] = str(ingest_text(owner.workspace, f"بروشور {drug}", text).id)
    return ids


def test_an_unqualified_dose_question_asks_which_leaflet(owner: Tenant, leaflets: dict[str, str]) -> None:
    assistant, trace, _ = ask(owner, DOSE)
    assert trace["decision"] == "clarify" and trace["reason"] == DecisionReason.PARALLEL_CANDIDATES
    [field] = assistant["response"]["form"]["fields"]
    assert field["label"] == "منظورتان کدام است؟"
    assert {choice["value"] for choice in field["choices"]} == set(leaflets.values())


def test_a_question_naming_a_drug_answers_from_its_leaflet(owner: Tenant, leaflets: dict[str, str]) -> None:
    assistant, trace, _ = ask(owner, "حداکثر دوز روزانه استامینوفن برای بزرگسالان چقدر است؟")
    assert trace["decision"] == "answer"
    assert cited(assistant) == {leaflets["استامینوفن"]}


def test_a_drug_no_leaflet_covers_is_not_answered(owner: Tenant, leaflets: dict[str, str]) -> None:
    assistant, trace, _ = ask(owner, "حداکثر دوز روزانه ناپروکسن برای بزرگسالان چقدر است؟")
    assert trace["decision"] == "no_answer" and trace["reason"] == DecisionReason.UNCOVERED_SUBJECT
    assert trace["figures"]["subject_words"] == ["ناپروکسن"]
    assert not cited(assistant)


def test_after_choosing_a_drug_a_follow_up_cites_its_leaflet_only(
    owner: Tenant, leaflets: dict[str, str]
) -> None:
    form, _, session = ask(owner, DOSE)
    [field] = form["response"]["form"]["fields"]
    values = [choice["value"] for choice in field["choices"]]
    chosen, _, _ = ask(owner, str(values.index(leaflets["ایبوپروفن"]) + 1), session)
    assert cited(chosen) == {leaflets["ایبوپروفن"]}
    follow, trace, _ = ask(owner, "و برای بیماران بالای ۷۰ سال؟", session)
    assert cited(follow) == {leaflets["ایبوپروفن"]}, follow
    assert trace["subject"] == {"resource_id": leaflets["ایبوپروفن"], "from": "previous_answer"}
