"""Screens, one per module, of the hlotop terminal UI (Textual)."""
