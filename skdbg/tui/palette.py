"""A command-palette provider over a plain list of ``(name, callback, help)`` commands.

Why a base class: each provider of ours (screens and evidence, log bookmarks) only decides *which*
commands make sense where the palette was opened; discovering and fuzzy-matching them is the same
for all, so it lives here once.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

Command = tuple[str, Callable[[], object], str]


class ListedCommands(Provider):
    """Subclasses implement :meth:`commands`; the palette lists them (empty query) or ranks matches."""

    def commands(self) -> list[Command]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for name, callback, help in self.commands():
            yield DiscoveryHit(name, callback, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help)


__all__ = ["Command", "ListedCommands"]
