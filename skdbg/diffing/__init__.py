"""``skdbg diff``: what changed between two failure scenes (see docs/diff.md).

Each scene is analysed by the triage engine, reduced to cited facts (:mod:`.facts`), and the two
fact lists are compared field by field (:mod:`.compare`); :mod:`.render` prints the result.
"""

from skdbg.diffing.compare import DIFF_SCHEMA, Difference, DiffResult, compare
from skdbg.diffing.facts import GROUPS, Fact, SceneFacts, scene_facts
from skdbg.diffing.run import DiffInputError, diff_scenes, facts_of

__all__ = [
    "DIFF_SCHEMA",
    "GROUPS",
    "DiffInputError",
    "DiffResult",
    "Difference",
    "Fact",
    "SceneFacts",
    "compare",
    "diff_scenes",
    "facts_of",
    "scene_facts",
]
