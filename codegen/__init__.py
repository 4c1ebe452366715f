"""Kernel-source analysis, SK adaptation, SK source generation and scope-marker edits (headless).

Built in its own issue; the package exists so the layout of ``DESIGN.md`` installs as one unit.
"""
