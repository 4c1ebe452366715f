"""sk_task_queue.json task entries written by hand (§3.10), for the tests of the plain and checked readings."""

from __future__ import annotations

from typing import Any

#: a member value that removes the member from the entry
DROP = object()


def task_entry(**over: Any) -> dict[str, Any]:
    """A FUNC task entry as sk_task_queue.json prints it, with members replaced, added or (``DROP``)
    removed."""
    task: dict[str, Any] = {
        "nodeIndex": 4,
        "type": "FUNC",
        "numBlocks": 24,
        "entryCnt": 2,
        "args": "0x12c110008000",
        "debugOptions": 5,
        "entries": ["0x124080b80200", "0x124080b80400"],
    }
    task.update(over)
    return {k: v for k, v in task.items() if v is not DROP}
