"""skdbg — a forensic debugger for Ascend SuperKernel failures."""

from skdbg import classcode as _classcode

__version__ = "0.1.0"

_classcode.install()  # before any record class is made: see skdbg.classcode
