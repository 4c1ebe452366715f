"""The Textual UI of skdbg: a thin layer over the headless core (parsers, triage); see DESIGN.md, TUI."""
