"""The docstrings' Sphinx cross-reference roles as links of the API reference (a griffe extension, named under
``extensions:`` of the mkdocstrings handler in ``mkdocs.yml``).

The docstrings are written in the Google style with Sphinx's roles for names (``:class:`~schnapsen_env.rules.GameState```,
``:meth:`reset```, ``:func:`GameState.position <schnapsen_env.rules.GameState.position>```), which mkdocstrings
would show as they stand (``:class:`` before the code). Before a docstring is parsed, :func:`roles_to_markdown`
turns each role into an optional cross-reference of mkdocs-autorefs: a link to the name's entry where the reference
renders it, else the name as code (a name the reference leaves out, a private helper). The name is resolved as
Python would resolve it in the docstring's scope (a method's class, its module, the module's imports), the title is
Sphinx's: the name as written, its last part with ``~``, or the explicit ``title <target>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import griffe

#: A Sphinx role of the Python domain: ``:role:`target```, ``:role:`~target``` or ``:role:`title <target>```.
ROLE = re.compile(r":(?:py:)?(?P<role>mod|class|meth|func|attr|data|exc|obj|const):`(?P<body>[^`]+)`")


def roles_to_markdown(text: str, resolve: Callable[[str], str | None]) -> str:
    """``text`` with every role of :data:`ROLE` written as an optional autorefs cross-reference.

    Args:
        text: a docstring.
        resolve: the full path of a name as written in the docstring (its first part looked up in the docstring's
            scope), or None where the name is unknown there (it is then taken as a full path).

    Returns:
        The docstring, each role replaced by ``<autoref identifier="PATH" optional><code>TITLE</code></autoref>``:
        mkdocs-autorefs links it where PATH is rendered and shows the code alone where not.
    """
    def one(m: re.Match) -> str:
        body = m.group("body").strip()
        explicit = re.fullmatch(r"(?P<title>.*?)\s*<(?P<target>[^<>]+)>", body)
        if explicit:
            title, target = explicit.group("title"), explicit.group("target").strip()
        else:
            target = body.lstrip("!")
            title = target.lstrip("~.").rsplit(".", 1)[-1] if target.startswith("~") else target.lstrip(".")
        target = target.lstrip("~.")
        path = resolve(target) or target
        return f'<autoref identifier="{html.escape(path)}" optional><code>{html.escape(title)}</code></autoref>'

    return ROLE.sub(one, text)


def _resolver(obj: Any, packages: Any) -> Callable[[str], str | None]:
    def resolve(target: str) -> str | None:
        first, _, rest = target.partition(".")
        if rest and first in packages:  # a full path (not a member that shares the package's name)
            return target
        try:
            base = obj.resolve(first)
        except (griffe.NameResolutionError, KeyError, AttributeError, ValueError):
            return None
        return f"{base}.{rest}" if rest else base
    return resolve


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring of a loaded package (:func:`roles_to_markdown`)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        packages = loader.modules_collection.members
        seen: set[int] = set()
        todo: list[Any] = [pkg]
        while todo:
            obj = todo.pop()
            if id(obj) in seen or obj.is_alias:
                continue
            seen.add(id(obj))
            if obj.docstring is not None:
                obj.docstring.value = roles_to_markdown(obj.docstring.value, _resolver(obj, packages))
            todo.extend(member for member in obj.members.values() if not member.is_alias)
