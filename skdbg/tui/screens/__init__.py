"""The TUI's screens: one module per mode (overview, evidence, log, scope, proposal) plus modals."""
