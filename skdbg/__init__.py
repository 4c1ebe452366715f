"""skdbg — a forensic debugger for Ascend SuperKernel failures."""

from skdbg import classcode as _classcode
from skdbg import regexcode as _regexcode

__version__ = "0.1.0"

_classcode.install()  # before any record class is made: see skdbg.classcode
_regexcode.install()  # before click and the parsers compile their patterns: see skdbg.regexcode
