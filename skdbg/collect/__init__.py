"""``skdbg collect``: turn a failure on this machine into a scene folder (issue 12 item 2).

:mod:`.machine` reads the CANN log folder (processes, fault lines, time spans), :mod:`.identity` establishes
run.json fields from evidence, :mod:`.build` copies one process's files and runs the entry gate on them.
"""
