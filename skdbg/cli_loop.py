"""The ``skdbg relaunch`` command (see docs/relaunch.md)."""
