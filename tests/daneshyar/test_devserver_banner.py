"""``make run``'s banner gives the three variables the documentation's
examples read (docs/README.md), ready to paste."""

from __future__ import annotations

from daneshyar.devserver import _banner


def test_the_banner_prints_the_examples_variables() -> None:
    banner = _banner(
        "http://127.0.0.1:8000",
        {"api_key": "dk_live_example", "admin_password": "pw", "workspace_id": "ws-1"},
    )
    assert "  export BASE=http://127.0.0.1:8000/api/v1\n" in banner
    assert "  export KEY=dk_live_example\n" in banner
    assert "  export WS=ws-1\n" in banner
    assert "docs/quickstart.md" in banner
