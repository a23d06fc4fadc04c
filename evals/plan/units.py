"""Cache dtypes, memory sizes (`141GB`, `80GiB`) and how bytes are printed.

GB is decimal (10^9 bytes), as GPU vendors and checkpoint sizes are quoted; GiB and MiB are binary.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ctxprobe.tasks.errors import UserError

DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
_DTYPE_ALIASES = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*$")
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}

GB = 10**9
MIB = 2**20


def parse_dtype(text: str, allowed: tuple[str, ...], option: str) -> str:
    """A dtype name from `allowed` (aliases such as bfloat16 accepted)."""
    name = _DTYPE_ALIASES.get(text.strip().lower(), text.strip().lower())
    if name not in allowed:
        raise UserError(f"{option} {text!r} is not one of {', '.join(allowed)}")
    return name


def parse_size(text: str, option: str) -> int:
    """`141GB` -> 141e9 bytes, `80GiB` -> 80 * 2**30; a bare number is bytes."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in _UNITS:
        raise UserError(f"{option} {text!r}: use a size like 141GB, 80GiB or 573.8GB (GB = 10^9 bytes)")
    try:
        value = Decimal(match.group(1)) * _UNITS[unit]
    except InvalidOperation:
        raise UserError(f"{option} {text!r} is not a number") from None
    return int(value)


def parse_fraction(text: str, option: str) -> Decimal:
    """A fraction in (0, 1], kept exact (0.85 stays 0.85)."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise UserError(f"{option} {text!r} is not a number") from None
    if not value.is_finite() or not Decimal(0) < value <= Decimal(1):
        raise UserError(f"{option} {text!r} must be in (0, 1]")
    return value


def safetensors_bytes(directory: Path) -> int:
    """The summed size of a checkpoint's *.safetensors files (symlinks followed, as in the HF cache)."""
    if not directory.is_dir():
        raise UserError(f"--weights-from {directory}: not a directory")
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        raise UserError(f"--weights-from {directory}: no *.safetensors files there")
    try:
        return sum(path.stat().st_size for path in files)
    except OSError as exc:
        raise UserError(f"--weights-from {directory}: cannot stat {exc.filename}: {exc.strerror}") from None


def gb(num_bytes: float) -> str:
    """Decimal GB with two decimals: 603979776 -> '0.60', 2949120000000 -> '2,949.12'."""
    return f"{num_bytes / GB:,.2f}"


def mb_mib(num_bytes: int) -> str:
    """'264.2 MB (252.0 MiB)'."""
    return f"{num_bytes / 10**6:,.1f} MB ({num_bytes / MIB:,.1f} MiB)"
