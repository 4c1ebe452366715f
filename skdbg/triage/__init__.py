"""The triage engine: gate, attribution, confidence, routes, proposal (headless).

Built in its own issue on top of :mod:`skdbg.parsers`.
"""
