"""The bottom of the ui's layers (:mod:`hlotop.ui`): what every screen, widget and app
shares at the Textual level: the keys (``bindings``), the messages, the selection's
path, the :class:`~hlotop.ui.base.host.HostApp` the screens reach the app through,
the editor hand-off and the private Textual APIs used (``textual_compat``)."""
