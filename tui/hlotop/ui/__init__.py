"""The hlotop terminal UI (Textual), in layers that import only downwards (an
import-linter contract in pyproject.toml checks it):

* ``apps``: the App classes (one a command: a dump, a directory, a diff, an
  out-of-memory text, a text) and what only they use;
* ``screens``: one screen a module;
* ``widgets``: one pane a module;
* ``view_models``: what the panes show, worked out without Textual;
* ``base``: keys, messages, the selection's path, the app as the screens see it
  (:class:`~hlotop.ui.base.host.HostApp`) and the Textual compatibility shims.

A widget that needs a screen (a dialog) asks its screen with a message.
"""
