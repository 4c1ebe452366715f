"""Run :func:`skdbg.fleet.signature.scan_rank` over many ranks: a local process pool, or Dask.

Why both: on one machine a process pool uses every core without any extra dependency; once a job's
logs live on shared storage reachable from a cluster, the same function runs where the data is, on an
existing ``dask.distributed`` cluster (``pip install skdbg[dask]``). Dask is imported only on that path,
so the default scan never pays for it (a test checks ``dask`` stays out of ``sys.modules``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from skdbg.fleet.discover import RankSpec
from skdbg.fleet.signature import RankSignature, scan_rank


class DaskUnavailable(RuntimeError):
    """``--dask`` was asked for but ``dask.distributed`` is not installed (the optional extra)."""


class DaskFailed(RuntimeError):
    """The Dask scheduler could not be reached or the cluster failed the scan."""


def default_workers() -> int:
    """The CPUs this process may use (the affinity mask when the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def scan_local(specs: Sequence[RankSpec], workers: int | None = None) -> list[RankSignature]:
    """Signatures in ``specs`` order; ``workers`` processes (1: in this process, no pool)."""
    n = default_workers() if workers is None else workers
    if n < 1:
        raise ValueError(f"--workers must be >= 1, got {n}")
    if n == 1 or len(specs) <= 1:
        return [scan_rank(s) for s in specs]
    n = min(n, len(specs))
    chunk = max(1, len(specs) // (n * 8))  # a few chunks per worker: balance without per-rank IPC
    with ProcessPoolExecutor(max_workers=n) as pool:
        return list(pool.map(scan_rank, specs, chunksize=chunk))


def scan_batch(specs: Sequence[RankSpec]) -> list[RankSignature]:
    """Signatures of a batch of ranks, in order (the unit of work sent to a Dask worker)."""
    return [scan_rank(s) for s in specs]


def scan_dask(specs: Sequence[RankSpec], address: str | Any) -> list[RankSignature]:
    """Signatures computed on a Dask cluster: ``address`` is a scheduler address (``tcp://host:8786``)
    or an existing ``distributed.Client``/``LocalCluster`` (tests). Ranks must be readable by the
    workers under the same paths (shared storage)."""
    try:
        distributed = importlib.import_module("distributed")
    except ImportError as exc:
        raise DaskUnavailable(
            "--dask needs dask.distributed, the optional extra: pip install 'skdbg[dask]'"
        ) from exc
    client_type: Any = distributed.Client
    own = not isinstance(address, client_type)
    client: Any
    try:
        client = client_type(address, timeout="10s") if own else address
    except (OSError, TimeoutError, ValueError) as exc:
        raise DaskFailed(f"cannot reach the Dask scheduler {address}: {exc}") from exc
    try:
        # a few batches per worker thread: one task per rank costs the scheduler more than a rank's scan
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values()) or 1
        size = max(1, -(-len(specs) // (threads * 4)))
        batches = [list(specs[i : i + size]) for i in range(0, len(specs), size)]
        futures = client.map(scan_batch, batches, pure=False)
        return [sig for batch in client.gather(futures) for sig in batch]
    finally:
        if own:
            client.close()


def scan_all(
    specs: Sequence[RankSpec], *, workers: int | None = None, dask: str | Any | None = None
) -> list[RankSignature]:
    """The one entry point: Dask when ``dask`` is given, else the local pool."""
    if dask is not None:
        return scan_dask(specs, dask)
    return scan_local(specs, workers)


Runner = Callable[[Sequence[RankSpec]], list[RankSignature]]

__all__ = ["DaskFailed", "DaskUnavailable", "default_workers", "scan_all", "scan_dask", "scan_local"]
