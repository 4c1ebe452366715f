"""Follow-up errors: the plog wording of a rank that failed only because another rank failed first.

Why a table: in a collective job one device fault stops one rank, and every other rank then waits in a
collective until HCCL gives up — each of them logs a communication timeout, an aborted task or a
"cluster exception" about a peer. Such a rank did nothing wrong itself; counting it as a failing rank
would hide the one that did. Each row is wording real CANN/HCCL/torch_npu logs print (the error-code
pages EI0002/EI0006, HCCL's ``task_exception_handler`` and cluster-heartbeat lines, torch_npu's
``ERR02005 DIST internal error``, the runtime's task-abort code 107022). A line matching a row makes its
rank a *follower* candidate; the row's id and the line's ``file:line`` are reported as the reason.

Every pattern has a plain substring (≥ 4 bytes) that the fast plog scan looks for, and a regex that must
then match the line, so a noise line that merely mentions HCCL never counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FollowerPattern:
    """One kind of follow-up error: its id, the scan marker, the confirming regex and the error code."""

    id: str
    marker: bytes
    regex: re.Pattern[str]
    code: str
    what: str


def _p(id: str, marker: str, regex: str, code: str, what: str) -> FollowerPattern:
    return FollowerPattern(id, marker.encode(), re.compile(regex), code, what)


#: the follow-up wordings, most specific first (the first row that matches names the line)
FOLLOWER_PATTERNS: tuple[FollowerPattern, ...] = (
    _p(
        "hccl_notify_timeout",
        "Notify register times out",
        r"(?:EI0002\b.*)?[Tt]he wait execution of the Notify register times out",
        "EI0002",
        "HCCL waited for a peer's notify record until HCCL_EXEC_TIMEOUT",
    ),
    _p(
        "hccl_socket_timeout",
        "Getting socket times out",
        r"Getting socket times out",
        "EI0006",
        "HCCL could not get a socket from a peer rank in time",
    ),
    _p(
        "hccl_task_timeout",
        "Task run failed",
        r"\[TaskExecStage\]\[Timeout\].*Task run failed",
        "EI0002",
        "an HCCL communication task timed out (task_exception_handler)",
    ),
    _p(
        "hccl_cluster_exception",
        "Cluster Exception Location",
        r"Cluster Exception Location\[IP/ID\]",
        "EI0002",
        "HCCL's heartbeat names another rank as the one that failed",
    ),
    _p(
        "hccl_heartbeat_lost",
        "Heartbeat Lost Occurred",
        r"Heartbeat Lost Occurred",
        "EI0002",
        "HCCL lost the heartbeat of a peer (its process exited)",
    ),
    _p(
        "hccl_cluster_slow",
        "is too slow to complete a communication",
        r"execution speed on some NPU in the cluster is too slow",
        "EI0002",
        "HCCL's timeout explanation: some other NPU was too slow or failed",
    ),
    _p(
        "dist_internal_error",
        "ERR02005",
        r"ERR02005\s+DIST internal error",
        "ERR02005",
        "torch_npu's distributed module failed after a collective error",
    ),
    _p(
        "task_abort",
        "ErrCode=107022",
        r"ErrCode=107022\b|\[task abort\]",
        "107022",
        "the runtime aborted this rank's task because the job is being torn down",
    ),
)

#: the extra scan markers (the plog scan's own fault markers are added by the caller)
FOLLOWER_MARKERS: tuple[bytes, ...] = tuple(dict.fromkeys(p.marker for p in FOLLOWER_PATTERNS))


def follower_pattern(text: str) -> FollowerPattern | None:
    """The follow-up pattern ``text`` matches, if any (confirmed by the row's regex, not the marker)."""
    for p in FOLLOWER_PATTERNS:
        if p.regex.search(text):
            return p
    return None


__all__ = ["FOLLOWER_MARKERS", "FOLLOWER_PATTERNS", "FollowerPattern", "follower_pattern"]
