"""Chip/SoC → NPU arch rules without a silent fallback (spec §1.12).

Only source-backed mappings exist: Ascend910B (SoC enums 104, 220–225) → ``dav-2201`` and Ascend950 (260)
→ ``dav-3510``; anything else is unsupported and said so. The same table is rendered into the generated
``setup.py`` and ``_arch_selector.py`` (which must run without skdbg installed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# (chip prefix after normalisation, SoC enum values, arch)
SOC_ARCH_RULES: tuple[tuple[str, tuple[int, ...], str], ...] = (
    ("ascend910b", (104, 220, 221, 222, 223, 224, 225), "dav-2201"),
    ("ascend950", (260,), "dav-3510"),
)
CHIP_ALIASES = {"ascend-910b": "ascend910b", "ascend-950": "ascend950"}


def normalise_arch(arch: str) -> str:
    return arch.strip().lower().replace("_", "-")


def chip_to_arch(chip: str | int) -> str | None:
    """``Ascend910B1``/``ascend-910b``/``220`` → ``dav-2201``; ``Ascend950PR``/``260`` → ``dav-3510``; else None."""
    text = str(chip).strip()
    if text.isdigit():
        return next((arch for _p, socs, arch in SOC_ARCH_RULES if int(text) in socs), None)
    key = re.sub(r"[\s_\-]", "", text.lower())
    return next((arch for prefix, _s, arch in SOC_ARCH_RULES if key.startswith(prefix)), None)


@dataclass(frozen=True)
class ArchResolution:
    status: str  # resolved | needs-target-arch | unsupported-target-chip | ambiguous-target-chip-arches
    arch: str
    source: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "arch": self.arch, "source": self.source, "reason": self.reason}


def resolve_target_arch(npu_arch: str, target_chip: str) -> ArchResolution:
    """Arch for a standalone compare build: explicit arch, else exactly one source-backed chip mapping."""
    if npu_arch.strip():
        return ArchResolution("resolved", normalise_arch(npu_arch), "explicit-npu-arch", "")
    chips = [c for c in re.split(r"[,;]", target_chip) if c.strip()]
    if not chips:
        return ArchResolution("needs-target-arch", "", "", "missing-npu-arch-and-target-chip")
    arches = {chip_to_arch(c) for c in chips}
    if None in arches:
        return ArchResolution("needs-target-arch", "", "", "unsupported-target-chip")
    if len(arches) != 1:
        return ArchResolution("needs-target-arch", "", "", "ambiguous-target-chip-arches")
    (arch,) = arches
    assert arch is not None
    return ArchResolution("resolved", arch, "target-chip-source-backed", "")
