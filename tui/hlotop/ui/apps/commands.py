"""Command-palette entries (ctrl+p) for the main actions, taken from :mod:`hlotop.ui.base.bindings`."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from hlotop.ui.base.bindings import keys, palette_keys

_APP_ACTIONS = {key.action for key in keys("app")}


class HlotopCommands(Provider):
    """Every binding that has a palette title, shown with its key."""

    def _entries(self):
        on_main = self.screen.id == "main"
        for key in palette_keys():
            is_app = key.action in _APP_ACTIONS
            if is_app or on_main:
                yield key, partial(self._run, key.action, is_app)

    async def _run(self, action: str, is_app: bool) -> None:
        if is_app:
            await self.app.run_action(action)
        else:
            await self.screen.run_action(action)

    async def discover(self) -> Hits:
        for key, run in self._entries():
            yield DiscoveryHit(
                f"{key.palette}  ({key.display})", run, text=key.palette, help=key.help
            )

    async def search(self, query: str) -> Hits:
        """The entries whose palette title, or whose name in the footer ("Export",
        "Figures"), matches ``query``."""
        matcher = self.matcher(query)
        for key, run in self._entries():
            score = max(matcher.match(key.palette), matcher.match(key.description))
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(key.palette),
                    run,
                    text=key.palette,
                    help=f"{key.help}  (key: {key.display})",
                )
