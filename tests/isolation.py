"""Isolation as a property: a Hypothesis state machine of tenants using the
real API (the Django test client, real PostgreSQL, real embeddings, the
extractive engine).

Two organizations with two workspaces each, an ``admin``, a ``chat`` and a
workspace-limited ``admin`` key per organization, end users whose
``external_user_id`` is the same in both organizations ("ana", "bo"), and
an end-user token of each for the first workspace of its organization. Rules
create, upload (some documents ingested inline, so that chat and search
retrieve them), chat, list, read, search, export and delete, each with a
random actor against a random workspace and object, their own or not; and
the MCP server's search and document list (its tools, with the same
filters and groups); the evaluation wing's test sets, their items and runs
(admin keys: created, imported into — hostile lines too —, listed, read, exported, started,
compared and deleted the same way).

Invariants, after every response:

- **nothing foreign shows**: no id, title or text of an object the actor may
  not see in that workspace appears in the body (another organization's,
  another workspace's, another end user's for a ``chat`` key, a limited
  key's other workspace, anything deleted with its session or workspace),
  unless the request itself carried it;
- **foreign is 404**: the status is what ``tests/test_matrix.py`` expects:
  404 for a workspace or object the key may not see, 403 for a ``chat`` key
  on an admin operation in its own workspace, success otherwise; for a
  token, 401 on any route that is not an end-user route and on any other
  workspace (or its own, deleted), 404 for another user's session.

Within a workspace, who may read what (retrieval/filters.py): each
uploaded document gets random metadata and access groups; the end-user
tokens carry groups (ana's ``g1``, bo's none), and a key's chat, search and
OpenAI-compatible request may send random ``groups`` and ``filters``. Every
cited, searched or sourced passage is of a document the caller may read by
the semantics written again in tests/access_model.py, and no reply shows
the text or title of one it may not. The transcript export (admin keys)
shows only its own workspace's replies, each with the access its turn was
answered within: the filters the request sent, the groups it read with (the
token's, or those the key sent) and no token resources.

``tests/test_isolation_property.py`` runs a few sequences in the suite;
``bench/isolation.py`` runs hundreds and prints the count.
"""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.db import transaction
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule
from rest_framework.test import APIClient

from evaluations.items import test_set_create
from resources.ingestion import resource_ingest
from resources.models import Resource
from retrieval.models import Passage
from tests.access_model import (
    access_strategy,
    filters_strategy,
    groups_strategy,
    matches,
    metadata_strategy,
    opens,
)
from tests.responses import response_body
from workspaces import services, tokens
from workspaces.models import ApiKeyScope, Organization

USERS = ("ana", "bo")
# The groups each end user's token carries.
TOKEN_GROUPS = {"ana": ["g1"], "bo": None}
SCOPES = ("admin", "chat", "limited", "token")
# Lines an import of test items refuses with a 400 naming them (never a
# 500): JSON nested 100,000 deep, a 5,000-digit number, a NUL byte, bytes
# that are not UTF-8 (tests/evaluations/test_import_hostile.py has them all).
HOSTILE_IMPORT_LINES = (
    b'{"question": "q", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"question": "q", "expected_answer": ' + b"7" * 5000 + b"}",
    b'{"question": "a\x00b"}',
    b'{"question": "caf\xe9?"}',
)


def marker(kind: str) -> str:
    """A token that occurs nowhere but in the object it names."""
    return f"{kind}{secrets.token_hex(6)}"


def _coin(data: st.DataObject, label: str) -> bool:
    return data.draw(st.booleans(), label=label)


@dataclass
class Actor:
    org: int
    scope: str  # admin | chat | limited (admin scope, allowed one workspace) | token (an end-user token)
    user: str
    key: str  # the API key, or the end-user token
    # A token's workspace.
    workspace: str | None = None
    # A token's groups (None: the claim is absent, which reads as none).
    groups: list[str] | None = None

    @property
    def admin(self) -> bool:
        return self.scope not in ("chat", "token")

    @property
    def token(self) -> bool:
        return self.scope == "token"

    def __repr__(self) -> str:  # what a failing example prints
        return f"Actor(org{self.org}, {self.scope}, {self.user})"


@dataclass
class Item:
    """A workspace, resource or session, and the tokens that identify it."""

    kind: str
    org: int
    workspace: str  # its workspace's id (a workspace's own id)
    id: str
    user: str | None = None
    tokens: set[str] = field(default_factory=set)
    deleted: bool = False
    # A resource's metadata and access groups (None: open to all).
    metadata: dict[str, Any] = field(default_factory=dict)
    access: list[str] | None = None

    def __repr__(self) -> str:
        return f"Item({self.kind}, org{self.org}, {self.id[:8]}{', deleted' if self.deleted else ''})"


@dataclass
class Tally:
    """Across every sequence of a run (bench/isolation.py prints it)."""

    sequences: int = 0
    steps: int = 0
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    # Replies found in an export and checked against the access they had.
    exported_replies: int = 0
    # Imports of test items into a test set that was found, by status.
    imports: dict[int, int] = field(default_factory=dict)


class IsolationMachine(RuleBasedStateMachine):
    tally: ClassVar[Tally] = Tally()

    def __init__(self) -> None:
        super().__init__()
        # Each sequence runs in a transaction that is rolled back at its end
        # (uploads enqueue their ingestion on commit: never, here).
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.items: list[Item] = []
        self.actors: list[Actor] = []
        self.first_workspace: dict[int, str] = {}
        # Each reply: its workspace and the access it was answered within.
        self.replies: dict[str, tuple[str, dict[str, Any]]] = {}
        for org in (0, 1):
            organization = Organization.objects.create(name=marker("org"))
            for index in range(2):
                name = marker("wsname")
                workspace = services.workspace_create(organization=organization, name=name)
                self.items.append(Item("workspace", org, str(workspace.id), str(workspace.id), tokens={name}))
                if index == 0:
                    self.first_workspace[org] = str(workspace.id)
                    first = workspace
                    # A test set from the start, so that the evaluation rules
                    # (import, run, compare) reach one within a short sequence.
                    set_name = marker("tsname")
                    test_set = test_set_create(workspace=workspace, name=set_name)
                    self.items.append(
                        Item("test_set", org, str(workspace.id), str(test_set.id), tokens={set_name})
                    )
            keys = {
                "admin": services.api_key_create(
                    organization=organization, name="a", scope=ApiKeyScope.ADMIN
                ),
                "chat": services.api_key_create(organization=organization, name="c", scope=ApiKeyScope.CHAT),
                "limited": services.api_key_create(
                    organization=organization,
                    name="l",
                    scope=ApiKeyScope.ADMIN,
                    workspace_ids=[uuid.UUID(self.first_workspace[org])],
                ),
            }
            for scope in SCOPES:
                for user in USERS:
                    if scope == "token":
                        groups = TOKEN_GROUPS[user]
                        token = tokens.end_user_token_mint(
                            workspace=first, external_user_id=user, groups=groups
                        ).token
                        self.actors.append(
                            Actor(org, scope, user, token, workspace=str(first.id), groups=groups)
                        )
                    else:
                        self.actors.append(Actor(org, scope, user, keys[scope].plaintext))
            for item in self.items:
                if item.org == org:
                    item.tokens.add(item.id)
        self.tally.sequences += 1

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    # --- the model ---------------------------------------------------------

    def pick_pair(self, data: st.DataObject, who: int, kind: str) -> tuple[Item, Item]:
        workspace = self.pick_workspace(data, self.actors[who])
        return workspace, self.pick(data, kind, workspace)

    def workspaces(self) -> list[Item]:
        return [i for i in self.items if i.kind == "workspace"]

    def live(self, kind: str) -> list[Item]:
        return [i for i in self.items if i.kind == kind]

    def workspace_item(self, workspace_id: str) -> Item:
        return next(i for i in self.workspaces() if i.id == workspace_id)

    def reaches(self, actor: Actor, workspace_id: str) -> bool:
        """The key may see this workspace (else 404; a token: else 401)."""
        workspace = self.workspace_item(workspace_id)
        if workspace.deleted or workspace.org != actor.org:
            return False
        if actor.token:
            return workspace_id == actor.workspace
        return actor.scope != "limited" or workspace_id == self.first_workspace[actor.org]

    def visible(self, actor: Actor, item: Item, context: str | None) -> bool:
        """May ``item`` appear in a response to ``actor`` about workspace
        ``context`` (None: the organization's workspace list)?"""
        if item.kind == "workspace":
            return not item.deleted and self.reaches(actor, item.id)
        if not self.reaches(actor, item.workspace) or item.workspace != context:
            return False
        if item.kind == "session":
            return not item.deleted and (actor.admin or item.user == actor.user)
        if item.kind in ("test_set", "run"):
            return not item.deleted and actor.admin
        # A resource: still allowed after its deletion, since earlier answers
        # in its workspace's sessions quote its text.
        return True

    # --- requests ----------------------------------------------------------

    def call(
        self,
        actor: Actor,
        method: str,
        path: str,
        context: str | None,
        body: dict[str, Any] | None = None,
        query: dict[str, str] | None = None,
        unreadable: set[str] = frozenset(),  # type: ignore[assignment]
        raw: tuple[bytes, str] | None = None,
    ) -> tuple[int, Any]:
        """``raw``: a body sent as it is, with its content type (an import)."""
        client = APIClient()
        if actor.token:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {actor.key}")
        else:
            client.credentials(HTTP_X_API_KEY=actor.key)
        url = f"/api/v1/{path}"
        if method == "get":
            response = client.get(url, query or {})
        else:
            if query:
                url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
            if raw is not None:
                response = getattr(client, method)(url, raw[0], content_type=raw[1])
            else:
                # The MCP transport answers only a client that accepts both of its response types.
                both = "application/json, text/event-stream"
                accept = {"HTTP_ACCEPT": both} if url.endswith("/mcp/") else {}
                response = getattr(client, method)(url, body, format="json", **accept)
        text = response_body(response).decode()
        self.tally.requests += 1
        self.tally.statuses[response.status_code] = self.tally.statuses.get(response.status_code, 0) + 1
        assert response.status_code < 500, (method, url, response.status_code, text[:500])
        sent = json.dumps(body or {}) + url + (raw[0].decode(errors="replace") if raw else "")
        leaked = [
            (item, token)
            for item in self.items
            if not self.visible(actor, item, context)
            for token in item.tokens
            if token in text and token not in sent
        ]
        assert not leaked, f"{actor} {method.upper()} {url} showed {leaked}: {text[:500]}"
        shown = [token for token in unreadable if token in text and token not in sent]
        assert not shown, f"{actor} {method.upper()} {url} showed unreadable {shown}: {text[:500]}"
        data = json.loads(text) if text and response["Content-Type"].startswith("application/json") else text
        return response.status_code, data

    def expect(
        self,
        status: int,
        actor: Actor,
        workspace: str,
        *,
        admin: bool,
        found: bool = True,
        end_user: bool = False,
    ) -> None:
        """What test_matrix expects: 404 for a workspace the key may not see,
        then 403 for a chat key on an admin operation, then 404 for an object
        it may not see. A token: 401 off the end-user routes and off its
        workspace, then 404 for an object it may not see."""
        if actor.token and not (end_user and self.reaches(actor, workspace)):
            assert status == 401, (actor, status)
        elif not self.reaches(actor, workspace):
            assert status == 404, (actor, status)
        elif admin and not actor.admin:
            assert status == 403, (actor, status)
        elif not found:
            assert status == 404, (actor, status)
        else:
            assert status < 400, (actor, status)

    # --- rules -------------------------------------------------------------

    actor_index = st.integers(0, len(USERS) * len(SCOPES) * 2 - 1)

    def pick(self, data: st.DataObject, kind: str, workspace: Item | None = None) -> Item:
        """Any item of ``kind``; more often one in ``workspace`` (requests
        that reach their handler find something)."""
        items = self.live(kind)
        near = [i for i in items if workspace is not None and i.workspace == workspace.id]
        if near and _coin(data, "near"):
            items = near
        return data.draw(st.sampled_from(items), label=kind)

    def pick_workspace(self, data: st.DataObject, actor: Actor) -> Item:
        """Any workspace; three times in four one that the actor reaches."""
        items = self.workspaces()
        reached = [w for w in items if self.reaches(actor, w.id)]
        if reached and data.draw(st.integers(0, 3), label="reached") > 0:
            items = reached
        return data.draw(st.sampled_from(items), label="workspace")

    @rule(data=st.data(), who=actor_index, ingest=st.booleans())
    def upload(self, data: st.DataObject, who: int, ingest: bool) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        title, text = marker("title"), marker("text")
        status, body = self.call(
            actor,
            "post",
            f"workspaces/{workspace.id}/resources/",
            workspace.id,
            {"title": f"Policy {title}", "text": f"The {text} rule: claims are paid within thirty days."},
        )
        self.expect(status, actor, workspace.id, admin=True)
        if status == 202:
            resource_id = body["data"]["id"]
            metadata = data.draw(metadata_strategy(), label="metadata")
            access = data.draw(access_strategy(), label="access")
            Resource.objects.filter(id=resource_id).update(
                metadata=metadata, access={"groups": access} if access is not None else None
            )
            self.items.append(
                Item(
                    "resource",
                    workspace.org,
                    workspace.id,
                    resource_id,
                    tokens={resource_id, title, text},
                    metadata=metadata,
                    access=access,
                )
            )
            if ingest:
                assert resource_ingest(resource_id=uuid.UUID(resource_id)) == "ready"

    @rule(data=st.data(), who=actor_index, follow_up=st.booleans())
    def chat(self, data: st.DataObject, who: int, follow_up: bool) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        question = marker("question")
        body: dict[str, Any] = {"external_user_id": actor.user, "message": f"How are claims paid? {question}"}
        filters, groups, fields = self.draw_access(data, actor)
        body.update(fields)
        session = None
        if follow_up and self.live("session"):
            session = self.pick(data, "session", workspace)
            body["session_id"] = session.id
        unreadable = self.unreadable(workspace.id, filters, groups)
        status, reply = self.call(
            actor, "post", f"workspaces/{workspace.id}/chat/", workspace.id, body, unreadable=unreadable
        )
        own = session is None or (
            not session.deleted and session.workspace == workspace.id and session.user == actor.user
        )
        self.expect(status, actor, workspace.id, admin=False, found=own, end_user=True)
        if status != 200:
            return
        turn = reply["data"]
        self.replied(turn["assistant_message"]["id"], workspace.id, filters, groups)
        cited = {
            part["source"]["resource_id"]
            for part in turn["assistant_message"]["response"]["parts"]
            if part["source"] is not None
        }
        assert cited <= self.readable(workspace.id, filters, groups), (actor, cited, filters, groups)
        if filters is not None and not self.readable(workspace.id, filters, groups):
            # Fail closed: nothing matching is no answer, never the whole workspace.
            assert turn["assistant_message"]["grounding"] == "none", (actor, filters, groups)
        # The reply's sources, read back by the same caller.
        sources_path = (
            f"workspaces/{workspace.id}/sessions/{turn['session']['id']}/messages/"
            f"{turn['assistant_message']['id']}/sources/"
        )
        status, sources = self.call(
            actor, "get", sources_path, workspace.id, query={"external_user_id": actor.user}
        )
        assert status == 200, (actor, status, sources)
        sourced = {item["resource_id"] for item in sources["data"]["items"]}
        assert sourced <= cited, (actor, sourced, cited)
        ids = {turn["user_message"]["id"], turn["assistant_message"]["id"]}
        if session is None:
            session_id = turn["session"]["id"]
            self.items.append(
                Item(
                    "session",
                    workspace.org,
                    workspace.id,
                    session_id,
                    user=actor.user,
                    tokens={session_id, question, *ids},
                )
            )
        else:
            assert turn["session"]["id"] == session.id
            session.tokens |= {question, *ids}

    @rule(data=st.data(), who=actor_index, all_users=st.booleans())
    def list_sessions(self, data: st.DataObject, who: int, all_users: bool) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        query = {} if all_users and actor.admin else {"external_user_id": actor.user}
        status, body = self.call(
            actor, "get", f"workspaces/{workspace.id}/sessions/", workspace.id, query=query
        )
        self.expect(status, actor, workspace.id, admin=False, end_user=True)
        if status == 200:
            shown = {s["id"] for s in body["data"]["items"]}
            expected = {
                s.id
                for s in self.live("session")
                if self.visible(actor, s, workspace.id)
                and ("external_user_id" not in query or s.user == actor.user)
            }
            assert shown == expected, (actor, shown, expected)

    @rule(data=st.data(), who=actor_index, messages=st.booleans())
    def read_session(self, data: st.DataObject, who: int, messages: bool) -> None:
        self.tally.steps += 1
        if not self.live("session"):
            return
        actor, workspace, session = self.actors[who], *self.pick_pair(data, who, "session")
        path = f"workspaces/{workspace.id}/sessions/{session.id}/" + ("messages/" if messages else "")
        status, _ = self.call(actor, "get", path, workspace.id, query={"external_user_id": actor.user})
        found = not session.deleted and session.workspace == workspace.id and session.user == actor.user
        self.expect(status, actor, workspace.id, admin=False, found=found, end_user=True)

    @rule(data=st.data(), who=actor_index, part=st.sampled_from(["", "passages/"]))
    def read_resource(self, data: st.DataObject, who: int, part: str) -> None:
        self.tally.steps += 1
        if not self.live("resource"):
            return
        actor, workspace, resource = self.actors[who], *self.pick_pair(data, who, "resource")
        path = f"workspaces/{workspace.id}/resources/{resource.id}/{part}"
        status, _ = self.call(actor, "get", path, workspace.id)
        found = not resource.deleted and resource.workspace == workspace.id
        self.expect(status, actor, workspace.id, admin=False, found=found)

    @rule(data=st.data(), who=actor_index)
    def list_resources(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        status, body = self.call(actor, "get", f"workspaces/{workspace.id}/resources/", workspace.id)
        self.expect(status, actor, workspace.id, admin=False)
        if status == 200:
            shown = {r["id"] for r in body["data"]["items"]}
            assert shown == self.retrievable(workspace.id), (actor, shown)

    @rule(data=st.data(), who=actor_index)
    def search(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        filters, groups, fields = self.draw_access(data, actor)
        body = {"query": "How are claims paid?", "top_k": 50, **fields}
        unreadable = self.unreadable(workspace.id, filters, groups)
        status, results = self.call(
            actor, "post", f"workspaces/{workspace.id}/search/", workspace.id, body, unreadable=unreadable
        )
        self.expect(status, actor, workspace.id, admin=False)
        if status == 200:
            # A deleted resource's passages leave retrieval at once; so do
            # those of documents the filters or groups leave out.
            found = {r["resource_id"] for r in results["data"]["items"]}
            assert found <= self.readable(workspace.id, filters, groups), (actor, found, filters, groups)

    @rule(data=st.data(), who=actor_index)
    def completion(self, data: st.DataObject, who: int) -> None:
        """The OpenAI-compatible endpoint, with filters and groups as the SDK's extra_body sends them."""
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        filters, groups, fields = self.draw_access(data, actor)
        body = {
            "model": "extractive",
            "user": actor.user,
            "messages": [{"role": "user", "content": f"How are claims paid? {marker('question')}"}],
            **fields,
        }
        status, reply = self.call(
            actor,
            "post",
            f"workspaces/{workspace.id}/openai/v1/chat/completions",
            workspace.id,
            body,
            unreadable=self.unreadable(workspace.id, filters, groups),
        )
        self.expect(status, actor, workspace.id, admin=False, end_user=True)
        if status != 200:
            return
        extra = reply["daneshyar"]
        self.replied(extra["message_id"], workspace.id, filters, groups)
        parts = (extra.get("response") or {}).get("parts") or []
        cited = {p["source"]["resource_id"] for p in parts if p.get("source")}
        assert cited <= self.readable(workspace.id, filters, groups), (actor, cited, filters, groups)
        session_id = extra["session_id"]
        if not any(s.id == session_id for s in self.items):
            self.items.append(
                Item("session", workspace.org, workspace.id, session_id, user=actor.user, tokens={session_id})
            )

    @rule(
        data=st.data(),
        who=actor_index,
        tool=st.sampled_from(["search", "list_documents", "answer", "read_passage"]),
    )
    def mcp(self, data: st.DataObject, who: int, tool: str) -> None:
        """The MCP server's tools (chat/mcp_server/), with filters and groups
        as tool arguments: what /search/ and /chat/ may read, no more."""
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        if tool == "read_passage":
            self.mcp_read_passage(data, actor, workspace)
            return
        filters, groups, fields = self.draw_access(data, actor)
        by_tool: dict[str, dict[str, Any]] = {
            "search": {"query": "How are claims paid?", "top_k": 50},
            "list_documents": {"limit": 100},
            "answer": {
                "message": f"How are claims paid? {marker('question')}",
                "external_user_id": actor.user,
            },
        }
        arguments = by_tool[tool]
        status, reply = self.mcp_call(
            actor, workspace, tool, {**arguments, **fields}, self.unreadable(workspace.id, filters, groups)
        )
        self.expect(status, actor, workspace.id, admin=False, end_user=True)
        if status != 200:
            return
        result = reply["result"]["structuredContent"]
        readable = self.readable(workspace.id, filters, groups)
        if tool == "answer":
            parts = result["assistant_message"]["response"].get("parts") or []
            found = {p["source"]["resource_id"] for p in parts if p.get("source")}
        else:
            found = {i["resource_id"] if tool == "search" else i["id"] for i in result["items"]}
        assert found <= readable, (actor, tool, found, filters, groups)

    def mcp_read_passage(self, data: st.DataObject, actor: Actor, workspace: Item) -> None:
        """A passage of any document of the workspace, read or not by the
        caller's groups: one it may not read is 404, its text nowhere."""
        candidates = [r for r in self.live("resource") if r.workspace == workspace.id]
        if not candidates:
            return
        resource = data.draw(st.sampled_from(candidates), label="resource")
        passage = Passage.objects.filter(resource_id=resource.id).first()
        if passage is None:
            return
        groups = actor.groups or [] if actor.token else data.draw(groups_strategy(), label="groups")
        fields = {} if actor.token or groups is None else {"groups": groups}
        readable = self.readable(workspace.id, None, groups)
        status, reply = self.mcp_call(
            actor,
            workspace,
            "read_passage",
            {"passage_id": str(passage.id), **fields},
            self.unreadable(workspace.id, None, groups),
        )
        self.expect(status, actor, workspace.id, admin=False, end_user=True, found=resource.id in readable)
        if status == 200:
            result = reply["result"]["structuredContent"]
            around = [result["passage"], *result["before"], *result["after"]]
            assert {p["resource_id"] for p in around} == {resource.id}, (actor, resource, groups)

    def mcp_call(
        self, actor: Actor, workspace: Item, tool: str, arguments: dict[str, Any], unreadable: set[str]
    ) -> tuple[int, Any]:
        """The call's status: the HTTP one, or a tool error's (its REST status)."""
        call = {"name": tool, "arguments": arguments}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        status, reply = self.call(
            actor, "post", f"workspaces/{workspace.id}/mcp/", workspace.id, body, unreadable=unreadable
        )
        result = reply.get("result") if status == 200 and isinstance(reply, dict) else None
        if isinstance(result, dict) and result.get("isError"):
            return int(result["structuredContent"]["error"]["status"]), reply
        return status, reply

    def draw_access(
        self, data: st.DataObject, actor: Actor
    ) -> tuple[dict[str, Any] | None, list[str] | None, dict[str, Any]]:
        """A request's filters (or none), the groups it reads with (a
        token's own, or those a key's request sends, or none) and the body
        fields that say so (a token sends no groups)."""
        filters = data.draw(st.one_of(st.none(), filters_strategy()), label="filters")
        body: dict[str, Any] = {} if filters is None else {"filters": filters}
        if actor.token:
            return filters, actor.groups or [], body
        groups = data.draw(groups_strategy(), label="groups")
        if groups is not None:
            body["groups"] = groups
        return filters, groups, body

    def replied(
        self, message_id: str, workspace_id: str, filters: dict[str, Any] | None, groups: list[str] | None
    ) -> None:
        """A reply, to find in its workspace's export with this access."""
        self.replies[message_id] = (
            workspace_id,
            {"filters": filters, "groups": groups, "resource_ids": None},
        )

    def retrievable(self, workspace_id: str) -> set[str]:
        return {r.id for r in self.live("resource") if not r.deleted and r.workspace == workspace_id}

    def readable(
        self, workspace_id: str, filters: dict[str, Any] | None, groups: list[str] | None
    ) -> set[str]:
        """What a request with ``filters`` and ``groups`` may read (tests/access_model.py)."""
        return {
            r.id
            for r in self.live("resource")
            if not r.deleted
            and r.workspace == workspace_id
            and matches(r.metadata, filters)
            and opens(r.access, groups)
        }

    def unreadable(
        self, workspace_id: str, filters: dict[str, Any] | None, groups: list[str] | None
    ) -> set[str]:
        """The markers of the documents of the workspace such a request may
        not read: none may show in its reply (their ids, titles and texts)."""
        readable = self.readable(workspace_id, filters, groups)
        return {
            token
            for r in self.live("resource")
            if r.workspace == workspace_id and r.id not in readable
            for token in r.tokens
        }

    @rule(data=st.data(), who=actor_index)
    def export(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        status, body = self.call(actor, "get", f"workspaces/{workspace.id}/transcripts/", workspace.id)
        self.expect(status, actor, workspace.id, admin=True)
        if status != 200:
            return
        exported = {
            message["id"]: message["access"]
            for line in map(json.loads, body.splitlines())
            for message in line["messages"]
            if message["role"] == "assistant"
        }
        self.tally.exported_replies += len(exported)
        for message_id, access in exported.items():
            # Every reply shown is one of this workspace's, with the access it had.
            assert message_id in self.replies, (actor, message_id)
            where, expected = self.replies[message_id]
            assert where == workspace.id and access == expected, (actor, access, expected)
        sessions = {s.id for s in self.live("session") if not s.deleted and s.workspace == workspace.id}
        shown = {line["session_id"] for line in map(json.loads, body.splitlines())}
        assert shown <= sessions, (actor, shown - sessions)

    @rule(who=actor_index)
    def list_workspaces(self, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        status, body = self.call(actor, "get", "workspaces/", None)
        if not actor.admin:
            assert status == (401 if actor.token else 403)
            return
        shown = {w["id"] for w in body["data"]["items"]}
        assert shown == {w.id for w in self.workspaces() if self.visible(actor, w, None)}

    @rule(data=st.data(), who=actor_index)
    def delete_resource(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        if not self.live("resource"):
            return
        actor, workspace, resource = self.actors[who], *self.pick_pair(data, who, "resource")
        status, _ = self.call(
            actor, "delete", f"workspaces/{workspace.id}/resources/{resource.id}/", workspace.id
        )
        found = not resource.deleted and resource.workspace == workspace.id
        self.expect(status, actor, workspace.id, admin=True, found=found)
        if status == 204:
            resource.deleted = True

    @rule(data=st.data(), who=actor_index)
    def delete_session(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        if not self.live("session"):
            return
        actor, workspace, session = self.actors[who], *self.pick_pair(data, who, "session")
        status, _ = self.call(
            actor,
            "delete",
            f"workspaces/{workspace.id}/sessions/{session.id}/",
            workspace.id,
            query={"external_user_id": actor.user},
        )
        found = not session.deleted and session.workspace == workspace.id and session.user == actor.user
        self.expect(status, actor, workspace.id, admin=False, found=found, end_user=True)
        if status == 204:
            session.deleted = True

    @rule(data=st.data(), who=actor_index, user=st.sampled_from(USERS))
    def delete_end_user(self, data: st.DataObject, who: int, user: str) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        status, _ = self.call(actor, "delete", f"workspaces/{workspace.id}/end-users/{user}/", workspace.id)
        self.expect(status, actor, workspace.id, admin=True)
        if status == 204:
            for session in self.live("session"):
                if session.workspace == workspace.id and session.user == user:
                    session.deleted = True

    @precondition(lambda self: sum(not w.deleted for w in self.workspaces()) > 2)
    @rule(data=st.data(), who=actor_index)
    def delete_workspace(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        status, _ = self.call(actor, "delete", f"workspaces/{workspace.id}/", workspace.id)
        self.expect(status, actor, workspace.id, admin=True)
        if status == 204:
            for item in self.items:
                if item.workspace == workspace.id:
                    item.deleted = True

    @precondition(lambda self: len(self.workspaces()) < 8)
    @rule(who=actor_index)
    def create_workspace(self, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        name = marker("wsname")
        status, body = self.call(actor, "post", "workspaces/", None, {"name": name})
        if actor.scope != "admin":  # a chat key, or a key limited to some workspaces; a token: 401
            assert status == (401 if actor.token else 403)
            return
        assert status == 201
        workspace_id = body["data"]["id"]
        self.items.append(
            Item("workspace", actor.org, workspace_id, workspace_id, tokens={workspace_id, name})
        )

    # --- evaluation: test sets, their items and runs (admin keys) -----------

    def test_set_path(self, workspace: Item, test_set: Item, part: str = "") -> str:
        return f"workspaces/{workspace.id}/test-sets/{test_set.id}/{part}"

    @rule(data=st.data(), who=actor_index)
    def create_test_set(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        name = marker("tsname")
        status, body = self.call(
            actor, "post", f"workspaces/{workspace.id}/test-sets/", workspace.id, {"name": name}
        )
        self.expect(status, actor, workspace.id, admin=True)
        if status == 201:
            test_set = body["data"]["id"]
            self.items.append(
                Item("test_set", workspace.org, workspace.id, test_set, tokens={test_set, name})
            )

    @rule(data=st.data(), who=actor_index)
    def add_test_item(self, data: st.DataObject, who: int) -> None:
        """An item's question and id count as its test set's (they go with it)."""
        self.tally.steps += 1
        if not self.live("test_set"):
            return
        actor, workspace, test_set = self.actors[who], *self.pick_pair(data, who, "test_set")
        question = marker("tsquestion")
        status, body = self.call(
            actor,
            "post",
            self.test_set_path(workspace, test_set, "items/"),
            workspace.id,
            {"question": f"How are claims paid? {question}", "expected_outcome": "no_answer"},
        )
        found = not test_set.deleted and test_set.workspace == workspace.id
        self.expect(status, actor, workspace.id, admin=True, found=found)
        if status == 201:
            test_set.tokens |= {question, body["data"]["id"]}
            test_set.metadata["items"] = test_set.metadata.get("items", 0) + 1

    def import_into_test_set(self, data: st.DataObject, who: int, hostile: bytes | None) -> None:
        """A JSONL import into a test set (its items' questions count as the
        set's); with a hostile second line, a 400 naming it and nothing
        imported, once the set is found."""
        self.tally.steps += 1
        actor, workspace, test_set = self.actors[who], *self.pick_pair(data, who, "test_set")
        question = marker("tsimport")
        line = json.dumps({"question": f"How are claims paid? {question}", "expected_outcome": "no_answer"})
        body = line.encode() + (b"\n" + hostile if hostile else b"")
        path = self.test_set_path(workspace, test_set, "import/")
        status, answer = self.call(actor, "post", path, workspace.id, raw=(body, "application/x-ndjson"))
        found = not test_set.deleted and test_set.workspace == workspace.id
        if found and self.reaches(actor, workspace.id) and actor.admin:
            self.tally.imports[status] = self.tally.imports.get(status, 0) + 1
        if hostile and found and self.reaches(actor, workspace.id) and actor.admin:
            assert status == 400 and answer["error"]["fields"]["line"] == ["2"], (actor, status, answer)
        else:
            self.expect(status, actor, workspace.id, admin=True, found=found)
        if status == 201:
            test_set.tokens.add(question)
            test_set.metadata["items"] = test_set.metadata.get("items", 0) + 1

    @precondition(lambda self: bool(self.live("test_set")))
    @rule(data=st.data(), who=actor_index)
    def import_test_items(self, data: st.DataObject, who: int) -> None:
        self.import_into_test_set(data, who, None)

    @precondition(lambda self: bool(self.live("test_set")))
    @rule(data=st.data(), who=actor_index, hostile=st.sampled_from(HOSTILE_IMPORT_LINES))
    def import_hostile_test_items(self, data: st.DataObject, who: int, hostile: bytes) -> None:
        self.import_into_test_set(data, who, hostile)

    @rule(data=st.data(), who=actor_index, part=st.sampled_from(["", "items/", "export/"]))
    def read_test_set(self, data: st.DataObject, who: int, part: str) -> None:
        self.tally.steps += 1
        if not self.live("test_set"):
            return
        actor, workspace, test_set = self.actors[who], *self.pick_pair(data, who, "test_set")
        status, _ = self.call(actor, "get", self.test_set_path(workspace, test_set, part), workspace.id)
        found = not test_set.deleted and test_set.workspace == workspace.id
        self.expect(status, actor, workspace.id, admin=True, found=found)

    @rule(data=st.data(), who=actor_index, runs=st.booleans())
    def list_test_sets(self, data: st.DataObject, who: int, runs: bool) -> None:
        self.tally.steps += 1
        actor = self.actors[who]
        workspace = self.pick_workspace(data, actor)
        path = f"workspaces/{workspace.id}/{'evaluations' if runs else 'test-sets'}/"
        status, body = self.call(actor, "get", path, workspace.id)
        self.expect(status, actor, workspace.id, admin=True)
        if status == 200:
            kind = "run" if runs else "test_set"
            shown = {i["id"] for i in body["data"]["items"]}
            expected = {i.id for i in self.live(kind) if not i.deleted and i.workspace == workspace.id}
            assert shown == expected, (actor, shown, expected)

    @rule(data=st.data(), who=actor_index)
    def start_run(self, data: st.DataObject, who: int) -> None:
        """A run of a test set (pending: its task is queued on commit, which
        a sequence never reaches). A set without items is a 400."""
        self.tally.steps += 1
        if not self.live("test_set"):
            return
        actor, workspace, test_set = self.actors[who], *self.pick_pair(data, who, "test_set")
        path = f"workspaces/{workspace.id}/evaluations/"
        status, body = self.call(actor, "post", path, workspace.id, {"test_set_id": test_set.id})
        found = not test_set.deleted and test_set.workspace == workspace.id
        if found and status != 404 and self.reaches(actor, workspace.id) and actor.admin:
            assert status == (202 if test_set.metadata.get("items") else 400), (actor, status)
        else:
            self.expect(status, actor, workspace.id, admin=True, found=found)
        if status == 202:
            run = body["data"]["id"]
            parent = {"test_set": test_set.id}
            self.items.append(Item("run", workspace.org, workspace.id, run, tokens={run}, metadata=parent))

    @rule(data=st.data(), who=actor_index, part=st.sampled_from(["", "items/", "compare"]))
    def read_run(self, data: st.DataObject, who: int, part: str) -> None:
        """A run, its results, or its comparison with another run (both
        pending here: a 400 when both are found, else 404)."""
        self.tally.steps += 1
        if not self.live("run"):
            return
        actor, workspace, run = self.actors[who], *self.pick_pair(data, who, "run")
        found = not run.deleted and run.workspace == workspace.id
        path = f"workspaces/{workspace.id}/evaluations/{run.id}/"
        if part == "compare":
            other = self.pick(data, "run", workspace)
            path += f"compare/{other.id}/"
            found = found and not other.deleted and other.workspace == workspace.id
        else:
            path += part
        status, _ = self.call(actor, "get", path, workspace.id)
        if part == "compare" and found and self.reaches(actor, workspace.id) and actor.admin:
            assert status == 400, (actor, status)
        else:
            self.expect(status, actor, workspace.id, admin=True, found=found)

    @rule(data=st.data(), who=actor_index)
    def delete_test_set(self, data: st.DataObject, who: int) -> None:
        self.tally.steps += 1
        if not self.live("test_set"):
            return
        actor, workspace, test_set = self.actors[who], *self.pick_pair(data, who, "test_set")
        status, _ = self.call(actor, "delete", self.test_set_path(workspace, test_set), workspace.id)
        found = not test_set.deleted and test_set.workspace == workspace.id
        self.expect(status, actor, workspace.id, admin=True, found=found)
        if status == 204:
            test_set.deleted = True
            for run in self.live("run"):
                if run.metadata["test_set"] == test_set.id:
                    run.deleted = True
