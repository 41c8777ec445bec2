"""The Textual apps of the hlotop terminal UI, one a module (the top of the ui's layers:
:mod:`hlotop.ui`), and what only the apps use: the background load, the crash guard,
the ending signals, ctrl+c, the command palette and the stylesheet ``hlotop.tcss``."""
