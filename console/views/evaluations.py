"""A workspace's evaluation pages: its test sets (create, import, export,
items edited and deleted), starting a run, a run's page (progress, metrics,
per-item results, the comparison with another run of the set), and a
dashboard reply made a test item (console/evaluations.py; docs/console.md).

Writes go through evaluations/, so the API's checks hold: a bad import
or item is a 400 page naming the problem, and nothing of it is stored.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from console.evaluations import (
    FromReplyForm,
    ImportForm,
    ItemForm,
    TestSetForm,
    comparison,
    document_choices,
    metric_rows,
    retrieved_titles,
)
from console.views.common import EDIT_TEST_SETS, START_RUN, VIEW_EVALUATIONS, page_context, workspace_view
from daneshyar.exceptions import ApplicationError
from evaluations import item_lines, items, promote, runs
from evaluations.models import RunStatus, TestSet
from evaluations.outcomes import first_cited_resource
from workspaces.models import Workspace

# While a run is pending or running its page reloads itself this often (seconds).
RUN_REFRESH_SECONDS = 2


def _problems(exc: ApplicationError) -> list[str]:
    """An error's message and each field's problems, one line each."""
    fields = [f"{name}: {' '.join(map(str, problems))}" for name, problems in (exc.fields or {}).items()]
    return [exc.message, *fields]


def _set_url(workspace: Workspace, test_set: TestSet) -> str:
    return reverse("console:test-set", args=[workspace.id, test_set.id])


@require_http_methods(["GET", "POST"])
@workspace_view(VIEW_EVALUATIONS)
def test_sets(request: HttpRequest, workspace: Workspace) -> HttpResponse:
    form = TestSetForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if not request.user.has_perms(EDIT_TEST_SETS):
            return HttpResponse("You may not change test sets.", status=403)
        try:
            if form.is_valid():
                created = items.test_set_create(workspace=workspace, name=form.cleaned_data["name"])
                return HttpResponseRedirect(_set_url(workspace, created))
        except ApplicationError as exc:
            form.add_error("name", exc.message)
        status = 400
    context = page_context(request, workspace, tab="test-sets", title=f"Test sets: {workspace.name}")
    context["test_sets"] = items.test_set_list(workspace=workspace).order_by("name", "id")
    context["runs"] = runs.run_list(workspace=workspace)[:20]
    context["form"] = form
    context["can_edit"] = request.user.has_perms(EDIT_TEST_SETS)
    return TemplateResponse(request, "console/evaluation_sets.html", context, status=status)


def _set_page(
    request: HttpRequest, workspace: Workspace, test_set: TestSet, *, status: int = 200, **extra: Any
) -> HttpResponse:
    listed = list(test_set.items.all())
    documents = document_choices(workspace, also={d for item in listed for d in item.expected_resource_ids})
    rows = [
        (item, ItemForm(documents=documents, prefix=str(item.id), initial=_initial(item))) for item in listed
    ]
    context = page_context(request, workspace, tab="test-sets", title=f"Test set: {test_set.name}")
    context.update(
        test_set=test_set,
        rows=rows,
        import_form=ImportForm(),
        new_item_form=ItemForm(documents=documents, prefix="new"),
        runs=test_set.runs.all()[:20],
        can_edit=request.user.has_perms(EDIT_TEST_SETS),
        can_run=request.user.has_perms(START_RUN),
        **extra,
    )
    return TemplateResponse(request, "console/evaluation_set.html", context, status=status)


def _initial(item: Any) -> dict[str, Any]:
    return {
        "question": item.question,
        "expected_resource_ids": [str(i) for i in item.expected_resource_ids],
        "expected_outcome": item.expected_outcome,
    }


@require_GET
@workspace_view(VIEW_EVALUATIONS)
def test_set(request: HttpRequest, workspace: Workspace, test_set_id: Any) -> HttpResponse:
    return _set_page(request, workspace, items.test_set_get(workspace=workspace, test_set_id=test_set_id))


@require_POST
@workspace_view(EDIT_TEST_SETS)
def test_set_import(request: HttpRequest, workspace: Workspace, test_set_id: Any) -> HttpResponse:
    """An upload imported all or nothing; a bad line is a 400 page naming it."""
    found = items.test_set_get(workspace=workspace, test_set_id=test_set_id)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _set_page(request, workspace, found, status=400, import_errors=["Choose a file."])
    upload = form.cleaned_data["file"]
    is_csv = (upload.name or "").lower().endswith(".csv") or upload.content_type == "text/csv"
    try:
        # One byte over the bound is enough for the import to refuse it.
        body = upload.read(item_lines.MAX_IMPORT_BYTES + 1)
        count = items.items_import(test_set=found, body=body, csv_format=is_csv)
    except ApplicationError as exc:
        return _set_page(request, workspace, found, status=400, import_errors=_problems(exc))
    messages.success(request, f"Imported {count} item{'s' if count != 1 else ''}.")
    return HttpResponseRedirect(_set_url(workspace, found))


@require_GET
@workspace_view(VIEW_EVALUATIONS)
def test_set_export(request: HttpRequest, workspace: Workspace, test_set_id: Any) -> HttpResponse:
    """The set as JSONL, as the API exports it (at most 5000 items: one body)."""
    found = items.test_set_get(workspace=workspace, test_set_id=test_set_id)
    response = HttpResponse("".join(items.items_export_lines(found)), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="test-set-{found.id}.jsonl"'
    return response


@require_POST
@workspace_view(EDIT_TEST_SETS)
def item_save(request: HttpRequest, workspace: Workspace, test_set_id: Any, item_id: Any) -> HttpResponse:
    """An item edited (``item_id`` an item's) or added (``item_id`` "new")."""
    found = items.test_set_get(workspace=workspace, test_set_id=test_set_id)
    item = None if item_id == "new" else items.item_get(test_set=found, item_id=item_id)
    documents = document_choices(workspace, also=item.expected_resource_ids if item else ())
    form = ItemForm(request.POST, documents=documents, prefix=str(item.id) if item else "new")
    if not form.is_valid():
        problems = [f"{name}: {' '.join(map(str, errors))}" for name, errors in form.errors.items()]
        return _set_page(request, workspace, found, status=400, item_errors=problems)
    conversation = item is not None and item.messages is not None
    if not conversation and not form.cleaned_data["question"].strip():
        return _set_page(
            request, workspace, found, status=400, item_errors=["question: A question is needed."]
        )
    try:
        if item is None:
            items.item_create(test_set=found, data=form.item_data(conversation=False))
        else:
            items.item_update(item=item, data=form.item_data(conversation=conversation))
    except ApplicationError as exc:
        return _set_page(request, workspace, found, status=400, item_errors=_problems(exc))
    messages.success(request, "Item saved.")
    return HttpResponseRedirect(_set_url(workspace, found))


@require_POST
@workspace_view(EDIT_TEST_SETS)
def item_delete(request: HttpRequest, workspace: Workspace, test_set_id: Any, item_id: Any) -> HttpResponse:
    found = items.test_set_get(workspace=workspace, test_set_id=test_set_id)
    items.item_delete(item=items.item_get(test_set=found, item_id=item_id))
    messages.success(request, "Item deleted.")
    return HttpResponseRedirect(_set_url(workspace, found))


@require_POST
@workspace_view(START_RUN)
def run_start(request: HttpRequest, workspace: Workspace, test_set_id: Any) -> HttpResponse:
    """A run of the set queued for the worker (on commit); its page follows it."""
    found = items.test_set_get(workspace=workspace, test_set_id=test_set_id)
    try:
        run = runs.run_create(test_set=found)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return HttpResponseRedirect(_set_url(workspace, found))
    runs.run_enqueue_on_commit(run)
    return HttpResponseRedirect(reverse("console:evaluation-run", args=[workspace.id, run.id]))


@require_GET
@workspace_view(VIEW_EVALUATIONS)
def run_page(request: HttpRequest, workspace: Workspace, run_id: Any) -> HttpResponse:
    """The run: progress while it runs, then its metrics and items; with
    ``?compare=<run id>``, the comparison with that run of the same set."""
    run = runs.run_get(workspace=workspace, run_id=run_id)
    finished = run.status in (RunStatus.COMPLETED, RunStatus.FAILED)
    results = list(run.results.all()) if finished else []
    retrieved = retrieved_titles(workspace, results)
    others = runs.run_list(workspace=workspace).filter(test_set=run.test_set, status=RunStatus.COMPLETED)
    context = page_context(request, workspace, tab="test-sets", title=f"Evaluation run: {run.test_set.name}")
    context.update(
        run=run,
        finished=finished,
        refresh_seconds=None if finished else RUN_REFRESH_SECONDS,
        percent=round(100 * run.done / run.total) if run.total else 0,
        metrics=metric_rows(run.metrics),
        results=[(r, retrieved[r.id]) for r in results],
        others=others.exclude(id=run.id),
    )
    chosen = request.GET.get("compare")
    if chosen and run.status == RunStatus.COMPLETED:
        baseline = runs.run_get(workspace=workspace, run_id=chosen)
        if baseline.test_set_id != run.test_set_id:
            context["compare_error"] = "Only runs of the same test set are compared."
        else:
            try:
                context["comparison"] = comparison(run, baseline)
            except ApplicationError as exc:
                context["compare_error"] = " ".join(_problems(exc))
        if "compare_error" in context:
            return TemplateResponse(request, "console/evaluation_run.html", context, status=400)
    return TemplateResponse(request, "console/evaluation_run.html", context)


@require_http_methods(["GET", "POST"])
@workspace_view(EDIT_TEST_SETS)
def from_reply(request: HttpRequest, workspace: Workspace, message_id: Any) -> HttpResponse:
    """A dashboard reply made a test item: the form (preselected), then the item."""
    reply = promote.reply_get(workspace=workspace, message_id=message_id)
    cited = first_cited_resource(reply)
    initial = {
        "expected_resource_ids": [cited] if cited else [],
        "expected_outcome": promote.reply_default_outcome(reply),
    }
    form = FromReplyForm(request.POST or None, workspace=workspace, cited=cited, initial=initial)
    status = 200
    if request.method == "POST":
        status = 400
        try:
            if form.is_valid():
                return _promote(request, workspace, reply, form)
        except ApplicationError as exc:
            form.add_error(None, " ".join(_problems(exc)))
    context = page_context(request, workspace, tab="dashboard", title="Add a reply to a test set")
    context.update(form=form, reply=reply, conversation=promote.reply_conversation_or_none(reply))
    return TemplateResponse(request, "console/evaluation_from_reply.html", context, status=status)


@transaction.atomic
def _promote(request: HttpRequest, workspace: Workspace, reply: Any, form: FromReplyForm) -> HttpResponse:
    """The item (and the new set it goes to, if named): both or neither."""
    data = form.cleaned_data
    if data["test_set"]:
        target = items.test_set_get(workspace=workspace, test_set_id=data["test_set"])
    else:
        target = items.test_set_create(workspace=workspace, name=data["new_test_set"].strip())
    promote.item_from_reply(
        test_set=target,
        reply=reply,
        expected_resource_ids=data["expected_resource_ids"],
        expected_outcome=data["expected_outcome"],
    )
    messages.success(request, f"Added to the test set {target.name}.")
    return HttpResponseRedirect(_set_url(workspace, target))


SET = "<uuid:workspace_id>/test-sets/<uuid:test_set_id>/"

# Included by console/urls.py.
urlpatterns: list[URLPattern] = [
    path("<uuid:workspace_id>/test-sets/", test_sets, name="test-sets"),
    path(SET, test_set, name="test-set"),
    path(f"{SET}import/", test_set_import, name="test-set-import"),
    path(f"{SET}export/", test_set_export, name="test-set-export"),
    path(f"{SET}run/", run_start, name="test-set-run"),
    path(f"{SET}items/new/", item_save, {"item_id": "new"}, name="test-item-new"),
    path(f"{SET}items/<uuid:item_id>/", item_save, name="test-item-save"),
    path(f"{SET}items/<uuid:item_id>/delete/", item_delete, name="test-item-delete"),
    path("<uuid:workspace_id>/evaluations/<uuid:run_id>/", run_page, name="evaluation-run"),
    path("<uuid:workspace_id>/replies/<uuid:message_id>/test-item/", from_reply, name="from-reply"),
]
