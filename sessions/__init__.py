"""The append-only triage ledger (SQLite), frozen evidence and failure-scene report folders.

Modules: :mod:`.store` (the ledger: sessions, rounds, attempts, statuses), :mod:`.schema` (tables,
``user_version`` migrations, the forward-only ``transitions`` table), :mod:`.blobs` (content-addressed
evidence), :mod:`.location` (where the ledger lives, WAL vs rollback journal), :mod:`.attempts`
(freeze a scene, R7, tamper checks, revalidation), :mod:`.exchange` (export/import of the §6.2
folder) and :mod:`.views` (read API of the TUI Session screen). Headless: never imports textual.
"""
