"""skdbg — a forensic debugger for Ascend SuperKernel failures."""

__version__ = "0.1.0"
