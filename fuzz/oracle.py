"""The oracle: what counts as a failure, the time and memory bounds, and where failing inputs go."""

from __future__ import annotations

import hashlib
import resource
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CRASHERS = Path(__file__).resolve().parent / "crashers"
#: one input may take this long (seconds) before it counts as a hang
TIME_LIMIT = 10.0
#: a whole-scene case runs `analyze` and `report` on a scene of up to a few MB: its own bound
SCENE_TIME_LIMIT = 30.0
#: the address-space cap of the fuzzing process (bytes): unbounded memory becomes a MemoryError
MEMORY_LIMIT = 6 << 30


class Hang(BaseException):
    """Raised by the interval timer inside a target that ran past :data:`TIME_LIMIT`."""


@dataclass
class Failure:
    target: str
    kind: str  # exception, hang, memory, exit-code, input-changed, wrote-outside
    detail: str
    seconds: float
    path: Path | None = None

    def summary(self) -> str:
        where = f" [{self.path.relative_to(CRASHERS.parents[1])}]" if self.path else ""
        return f"{self.kind}: {self.detail}{where}"


def cap_memory() -> None:
    """Bound the process's address space once (no-op where the platform refuses)."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY or soft > MEMORY_LIMIT:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, hard))
    except (ValueError, OSError):
        pass


def _alarm(signum: int, frame: object) -> None:
    raise Hang()


def bounded(target: str, call: Callable[[], None]) -> Failure | None:
    """Run ``call`` under the time bound; any escaping exception is a failure."""
    cap_memory()
    limit = SCENE_TIME_LIMIT if target == "scene" else TIME_LIMIT
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0 = time.monotonic()
    try:
        call()
        return None
    except Hang:
        return Failure(target, "hang", f"no answer within {limit:.0f} s", time.monotonic() - t0)
    except MemoryError:
        return Failure(target, "memory", f"over {MEMORY_LIMIT >> 30} GiB", time.monotonic() - t0)
    except Exception as exc:  # noqa: BLE001 - every other exception is exactly what the oracle reports
        last = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(last.filename).name}:{last.lineno}"
        return Failure(
            target, "exception", f"{type(exc).__name__} at {where}: {exc}"[:300], time.monotonic() - t0
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def save_crasher(target: str, data: bytes, failure: Failure) -> Path:
    """Keep a failing input (named by its hash, so a repeat is stored once) for the regression test."""
    folder = CRASHERS / target
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()[:16]}.bin"
    path.write_bytes(data)
    path.with_suffix(".txt").write_text(f"{failure.kind}: {failure.detail}\n", encoding="utf-8")
    return path
