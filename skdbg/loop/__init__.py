"""Closing the loop: re-launching a round's candidate (``skdbg relaunch``) and the automatic narrowing
built on it (``skdbg bisect``).

Why a layer above the workflow: a re-launch runs a job as a process, collects its evidence and then
freezes and revalidates it through :mod:`skdbg.workflow`; the emulator runs through the very same
process path (``python -m skdbg.sim job``), never imported here for running a job.
"""
