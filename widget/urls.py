"""The widget's demo page, under /widget/ (the widget itself is a static
file: /static/daneshyar/chat.js)."""

from __future__ import annotations

from django.urls import URLPattern, path

from widget import views

urlpatterns: list[URLPattern] = [
    path("demo/", views.demo_page, name="widget-demo"),
    path("demo/token", views.demo_token, name="widget-demo-token"),
]
