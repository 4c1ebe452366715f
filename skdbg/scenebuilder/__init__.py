"""Writes failure scenes in the exact upstream formats (plog, sk_meta, JSON, ELF).

Why: no public sample of a real SK failure exists. Tests, the bundled example scene and
benchmarks all build their inputs with these writers, which render every artifact from the
format specification (artifacts.md), so a parser test is a round trip through the spec.
"""
