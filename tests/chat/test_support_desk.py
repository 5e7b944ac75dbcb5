"""The support desk: a kettle's FAQ and a toaster's manual, written as such
documents are (questions as headings in one, sections in the other): a
question that names its product is answered from that product's document
only, whichever document's format scores higher. Real ingestion,
PostgreSQL, pgvector and embedding model; extractive engine."""

from __future__ import annotations

import pytest

from resources.ingestion import resource_ingest
from resources.services import Upload, resource_create
from tests.chat.helpers import chat_data
from tests.conftest import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

FAQ = """# Kettle K1: frequently asked questions

## How long is the warranty?

The Kettle K1 has a two-year warranty from the date of purchase.

## How do I descale the kettle?

Fill the kettle with equal parts water and white vinegar, boil it, and rinse twice.
"""

MANUAL = """# Toaster T2 user manual

## Using the toaster

Turn the browning dial to a setting between 1 and 6 and press the lever down.

## Warranty

The Toaster T2 is covered by a one-year warranty from the date of purchase.
"""


def upload(tenant: Tenant, name: str, text: str) -> str:
    resource = resource_create(
        workspace=tenant.workspace, upload=Upload(data=text.encode(), title="", filename=name)
    ).resource
    assert resource_ingest(resource_id=resource.id) == "ready"
    return str(resource.id)


@pytest.mark.parametrize(
    ("question", "product", "says"),
    [
        ("How long is the kettle's warranty?", "kettle", "two-year"),
        ("How long is the warranty on the Toaster T2?", "toaster", "one-year"),
    ],
)
def test_a_question_that_names_its_product_is_answered_from_it(
    owner: Tenant, question: str, product: str, says: str
) -> None:
    ids = {
        "kettle": upload(owner, "kettle-faq.md", FAQ),
        "toaster": upload(owner, "toaster-manual.md", MANUAL),
    }
    assistant = chat_data(owner, message=question)["assistant_message"]
    parts = [p for p in assistant["response"]["parts"] if p["source"]]
    assert parts, assistant["content"]
    assert {p["source"]["resource_id"] for p in parts} == {ids[product]}
    assert says in assistant["content"]
