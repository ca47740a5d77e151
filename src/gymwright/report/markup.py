"""Building HTML that is safe by construction: `Html` is markup already built here; every other
value (spec text, model output, metric names, messages) is escaped where it is inserted."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from typing import Any

VOID = frozenset({"br", "hr", "img", "meta", "link", "wbr"})


class Html(str):
    """A fragment built by these helpers: inserted as is, never escaped twice."""


def esc(value: Any) -> Html:
    """`value` as HTML: markup passes through, anything else is escaped (quotes too)."""
    return value if isinstance(value, Html) else Html(html.escape(str(value), quote=True))


def join(parts: Iterable[Any], sep: str = "") -> Html:
    return Html(sep.join(esc(p) for p in parts))


def tag(name: str, *children: Any, **attrs: Any) -> Html:
    """`<name attrs>children</name>`; `class_=` gives `class=`; None/False attrs are left out."""
    given = "".join(
        f" {k.rstrip('_').replace('_', '-')}" + ("" if v is True else f'="{esc(v)}"')
        for k, v in attrs.items() if v is not None and v is not False
    )
    if name in VOID:
        return Html(f"<{name}{given}>")
    return Html(f"<{name}{given}>{join(children)}</{name}>")


def table(header: list[Any], rows: Iterable[list[Any]], class_: str = "") -> Html:
    head = tag("tr", *(tag("th", h) for h in header))
    body = [tag("tr", *(tag("td", c) for c in row)) for row in rows]
    return tag("table", tag("thead", head), tag("tbody", *body), class_=class_ or None)


def data_uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def img(mime: str, data: bytes, alt: str, class_: str = "") -> Html:
    src = data_uri(mime, data)
    return Html(f'<img src="{src}" alt="{esc(alt)}"' + (f' class="{esc(class_)}"' if class_ else "") + ">")


def num(x: Any, digits: int = 3) -> str:
    """A number for a table: 3 significant digits; blanks for missing values."""
    if x is None:
        return ""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return str(x)
    if x != x:  # nan
        return "n/a"
    return f"{x:.{digits}g}"


def pm(mean: Any, ci: Any) -> str:
    """`mean ± ci95`, or the mean alone without a finite interval."""
    if isinstance(ci, int | float) and ci == ci and not isinstance(ci, bool):
        return f"{num(mean)} ± {num(ci, 2)}"
    return num(mean)
