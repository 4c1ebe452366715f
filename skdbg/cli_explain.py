"""``skdbg explain [CODE]``: what a rule id, route, status or finding code means.

Why a command: users never see the specification behind the ids, so every id skdbg prints can be
looked up offline from the packaged glossary (:mod:`skdbg.glossary`). Without CODE it lists every
id with its title; ``--markdown`` prints ``docs/glossary.md`` (a test keeps that file identical).
An unknown code is a usage error (exit 2) that names the closest ids.
"""

from __future__ import annotations

import click

EXIT_USAGE = 2


@click.command("explain")
@click.argument("code", required=False)
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the whole glossary as a Markdown table.")
def explain(code: str | None, as_markdown: bool) -> None:
    """Explain CODE (a rule, route, next step, status, gap or codegen finding id; case-insensitive),
    e.g. `skdbg explain T4`, `skdbg explain R5`, `skdbg explain "§4.4 rule 3"`. Without CODE: list
    every id with its title."""
    # the glossary (JSON package data, importlib.resources, difflib) loads when asked: every other
    # command imports this module to register `explain`
    from skdbg.glossary import AREAS, closest, entries, lookup, markdown

    if as_markdown:
        click.echo(markdown(), nl=False)
        return
    if code is None:
        area = None
        for e in entries():
            if e.area != area:
                area = e.area
                click.echo(f"{AREAS[area][0]}:")
            click.echo(f"  {e.id:<24} {e.title}")
        return
    found = lookup(code)
    if not found:
        near = closest(code)
        hint = f"; closest: {', '.join(near)}" if near else ""
        click.echo(f"skdbg: error: unknown code {code!r}{hint} (`skdbg explain` lists every id)", err=True)
        raise SystemExit(EXIT_USAGE)
    click.echo("\n".join(e.render() for e in found), nl=False)


def register(group: click.Group) -> None:
    """Add ``explain`` to the top-level command group."""
    group.add_command(explain)


if __name__ == "__main__":  # pragma: no cover
    explain()
