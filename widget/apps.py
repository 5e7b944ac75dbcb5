from __future__ import annotations

from django.apps import AppConfig


class WidgetConfig(AppConfig):
    """The embeddable chat (``static/daneshyar/chat.js``) and its demo page."""

    name = "widget"
