"""The append-only triage ledger (SQLite), frozen evidence and failure-scene report folders.

Built in its own issue; the package exists so the layout of ``DESIGN.md`` installs as one unit.
"""
