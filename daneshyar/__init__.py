"""Daneshyar: a multi-tenant RAG chat service."""

from __future__ import annotations

from daneshyar.celery import app as celery_app

__all__ = ["celery_app"]
