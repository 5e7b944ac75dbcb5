"""Seven appliance manuals whose warranty sentences answer "How long is the
warranty?" equally well, so that the question asks which one is meant (the
form tests: tests/chat/test_forms*.py). Two have titles longer than a form's
label (cut at a word boundary); one is uploaded without a title and titled
from its text at ingestion (its first line a date, which is no title)."""

from __future__ import annotations

from dataclasses import dataclass

from resources.ingestion import resource_ingest
from resources.services import Upload, resource_create
from tests.chat.helpers import ingest_text
from tests.conftest import Tenant
from workspaces.models import DEFAULT_ANSWERABILITY_THRESHOLD

QUESTION = "How long is the warranty?"
WARRANTY = "The warranty lasts {} years from the date of purchase and covers parts and labour."
LONG_GRINDER = (
    "Grinder G4 quick reference card, covering assembly, burr adjustment, cleaning, descaling and "
    "resetting the motor"
)
LONG_MIXER = (
    "Mixer M5 quick reference card, covering assembly, speed settings, attachments, cleaning, storage "
    "and resetting"
)
# (title, years, a word of its label no other label has)
TITLED = [
    ("Kettle K1", "three", "kettle"),
    ("Toaster T2", "four", "toaster"),
    ("Blender B3", "five", "blender"),
    (LONG_GRINDER, "six", "grinder"),
    (LONG_MIXER, "seven", "mixer"),
    ("Fryer F7", "nine", "fryer"),
]
JUICER_INTRO = "The Juicer J6 presses fresh juice."
JUICER = f"2024-05-01\n\n{JUICER_INTRO}\n\n{WARRANTY.format('eight')}"


@dataclass(frozen=True)
class Manual:
    resource_id: str
    title: str
    sentence: str
    word: str


def appliance_manuals(tenant: Tenant) -> dict[str, Manual]:
    """The seven manuals in ``tenant``'s workspace, by resource id.

    The workspace keeps the default ``top_k`` (5): a form finds the
    documents it offers by searching the question deeper
    (chat/services/turn/retrieve.py, ``candidate_passages``), so all seven
    are offered though a turn retrieves five passages.
    """
    workspace = tenant.workspace
    assert workspace.top_k == 5
    workspace.answerability_threshold = DEFAULT_ANSWERABILITY_THRESHOLD
    workspace.save()
    manuals = {}
    for title, years, word in TITLED:
        resource = ingest_text(workspace, title, WARRANTY.format(years))
        manuals[str(resource.id)] = Manual(str(resource.id), title, WARRANTY.format(years), word)
    # Uploaded as a file without a title or a name: titled from its text at ingestion.
    juicer = resource_create(
        workspace=workspace, upload=Upload(data=JUICER.encode(), title="", filename="")
    ).resource
    assert resource_ingest(resource_id=juicer.id) == "ready"
    juicer.refresh_from_db()
    manuals[str(juicer.id)] = Manual(str(juicer.id), juicer.title, WARRANTY.format("eight"), "juicer")
    return manuals


def unique_prefix(label: str, labels: list[str]) -> str:
    """The shortest start of ``label``, half of it at least, that no other label has."""
    for end in range(max(3, len(label) // 2), len(label) + 1):
        start = label[:end]
        if not any(other.startswith(start) for other in labels if other != label):
            return start
    raise AssertionError(f"no start of {label!r} is its own")


def answer_check(assistant: dict[str, object], manual: Manual, manuals: dict[str, Manual]) -> None:
    """``assistant`` answers the warranty question from ``manual`` only."""
    response = assistant["response"]
    assert isinstance(response, dict) and response["type"] == "answer", assistant
    parts = response["parts"]
    cited = {p["source"]["resource_id"] for p in parts if p["source"]}
    assert cited == {manual.resource_id}, (manual.title, parts)
    text = " ".join(p["text"] for p in parts)
    assert manual.sentence in text
    others = [m.sentence for m in manuals.values() if m is not manual]
    assert not any(sentence in text for sentence in others)
    assert JUICER_INTRO not in text and manual.title not in text
