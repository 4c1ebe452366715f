"""Widgets of the TUI (the plog viewer is :mod:`skdbg.tui.logview`)."""
