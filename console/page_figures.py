"""A passage's page as the console shows it: the page's image
(``console:page-image``) with the passage's ``bbox`` outlined over it, a box
placed in percentages of the image, so no script is needed."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.urls import reverse


@dataclass(frozen=True)
class Region:
    """The outlined box, in percent of the image (strings, never localised)."""

    left: str
    top: str
    width: str
    height: str


@dataclass(frozen=True)
class PageFigure:
    url: str
    page: int
    region: Region | None  # None: where on the page is not known (a text layer)


def page_figure(
    *, workspace_id: uuid.UUID, resource_id: uuid.UUID, page: int | None, bbox: Any
) -> PageFigure | None:
    """The figure of a passage on ``page`` (None when it has no page)."""
    if not page:
        return None
    url = reverse("console:page-image", args=[workspace_id, resource_id, page])
    return PageFigure(url=url, page=page, region=region_of(bbox))


def region_of(bbox: Any) -> Region | None:
    """``bbox`` ([x0, y0, x1, y1], page-relative 0 to 1, origin top left) as
    percentages, clamped to the page; None for anything else or an empty box."""
    if not isinstance(bbox, list | tuple) or len(bbox) != 4:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in bbox):
        return None
    x0, y0, x1, y1 = (min(1.0, max(0.0, float(v))) for v in bbox)
    if x1 <= x0 or y1 <= y0:
        return None
    return Region(left=_percent(x0), top=_percent(y0), width=_percent(x1 - x0), height=_percent(y1 - y0))


def _percent(share: float) -> str:
    return f"{share * 100:.2f}"
