"""Pictures where they beat tables: the core × task timeline and the scope graph (issue 16 item 3).

Why a package of its own, above triage and below the UI: the pictures are built from the same
records the analysis JSON is made of (fault cores, task queues, the fused-node list, the proposal),
rendered with Rich cells so the TUI, the report folder (SVG) and tests all draw the same thing,
and never import Textual. The TUI wraps the renderables in widgets; ``skdbg report`` exports them.
"""
