"""The comparison alone, on hand-written facts: what differs, what is equal, and why."""

from __future__ import annotations

from skdbg.diffing import Fact, SceneFacts, compare
from skdbg.diffing.render import render_markdown, render_text


def _scene(name: str, *facts: Fact) -> SceneFacts:
    return SceneFacts(scene=name, pid=1, facts=facts)


def test_regrouped_sk_and_one_sided_field() -> None:
    a = _scene(
        "A",
        Fact("fused[s]", "fused", [["X#0", "Y#0"], ["Z#0"]], ("a.log:1",)),
        Fact("fused[t]", "fused", [["T#0"]]),
        Fact("run.pid", "run", 1),
    )
    b = _scene(
        "B", Fact("fused[s]", "fused", [["X#0"], ["Y#0", "Z#0"]], ("b.log:7",)), Fact("run.pid", "run", 1)
    )
    r = compare(a, b)
    s = next(d for d in r.differences if d.field == "fused[s]")
    assert "same children, grouped or ordered differently" in s.why
    assert (s.cites_a, s.cites_b) == (("a.log:1",), ("b.log:7",))
    t = next(d for d in r.differences if d.field == "fused[t]")
    assert (t.a, t.b) == ([["T#0"]], None)
    assert "fused only in A" in t.why
    assert r.equal == ("run.pid",)
    assert r.same is False


def test_identity_only_differences_keep_findings_the_same() -> None:
    a = _scene("A", Fact("suspect", "suspect", "X#0"), Fact("run.pid", "run", 10))
    b = _scene("B", Fact("suspect", "suspect", "X#0"), Fact("run.pid", "run", 20))
    r = compare(a, b)
    assert r.same is True
    assert r.summary() == "same findings; 1 run-identity field(s) differ; 1 field(s) equal"
    doc = r.to_json()
    assert doc["groups"] == {
        "suspect": {"differ": [], "equal": ["suspect"]},
        "run": {"differ": ["run.pid"], "equal": []},
    }
    assert "~ run.pid" in render_text(r)
    assert "| `run.pid` | 10 | 20 |" in render_markdown(r)


def test_fork_only_without_other_threads() -> None:
    import threading

    from skdbg.diffing.run import _start_method

    assert _start_method() in ("fork", "spawn")
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert _start_method() == "spawn"  # another thread runs: never fork
    finally:
        stop.set()
        t.join()
