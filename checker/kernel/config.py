# SPDX-License-Identifier: GPL-2.0-only
"""Kernel configurations and the APIs each provides.

The configurations are derived from Kconfig dependencies rather than taken
as a product of options: ``HOTPLUG_CPU`` depends on ``SMP``, so there are
three (UP; SMP without CPU hotplug; SMP with it), not four. An ``Api``
declares which configurations implement each symbol; an action declares
the symbols it calls (``@action(uses={"symbol": "file.c:line function"})``).
For every configuration explored, a caller using a symbol the configuration
does not provide is reported as a build robot reports it.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from checker.language.declare import Declaration, Param
from checker.types import Enum

#: Options and what each depends on (the part of Kconfig that matters here).
KCONFIG_DEPENDS = {"SMP": (), "HOTPLUG_CPU": ("SMP",)}


def kconfig_configs(depends: dict[str, tuple[str, ...]] = KCONFIG_DEPENDS) -> list[frozenset[str]]:
    """Every set of enabled options that satisfies the dependencies, smallest first."""
    opts = list(depends)
    out = []
    for bits in itertools.product((False, True), repeat=len(opts)):
        on = frozenset(o for o, b in zip(opts, bits) if b)
        if all(set(depends[o]) <= on for o in on):
            out.append(on)
    return sorted(out, key=lambda c: (len(c), sorted(c)))


CONFIGS = kconfig_configs()
CONFIG = Enum(*["_".join(sorted(c)) or "UP" for c in CONFIGS], name="config")
UP, SMP, SMP_HOTPLUG = (CONFIG.names.index(n) for n in ("UP", "SMP", "HOTPLUG_CPU_SMP"))


def describe(config: int) -> str:
    """A kernel configuration as its ``CONFIG_X=y/n`` options."""
    on = CONFIGS[config]
    return ", ".join(f"CONFIG_{o}={'y' if o in on else 'n'}" for o in KCONFIG_DEPENDS)


def enabled(config: int, option: str) -> bool:
    """Whether ``option`` is set in configuration number ``config``."""
    return option in CONFIGS[config]


@dataclass(frozen=True)
class BuildError:
    """A symbol a kernel configuration does not build: where it is used and which config lacks it."""
    site: str  # "kernel/fork.c:926 __mmdrop"
    symbol: str
    config: int

    def __str__(self) -> str:
        where, _, function = self.site.partition(" ")
        return (f"{where}: error: implicit declaration of function '{self.symbol}'"
                + (f" in {function}" if function else "") + f" [{describe(self.config)}]")


class Api(Declaration):
    """Which configurations provide each symbol; ``config`` names the parameter
    that selects the configuration."""

    def __init__(self, config: str, provides: dict[str, tuple[int, ...]]):
        self.config = config
        self.provides = {k: tuple(v) for k, v in provides.items()}

    def build_errors(self, actions: Any, params: Any) -> list[BuildError]:
        config = getattr(params, self.config)
        errors = []
        for a in actions:
            for symbol, site in a.uses:
                if config not in self.provides.get(symbol, ()):
                    errors.append(BuildError(site, symbol, config))
        return errors


class Bits(Param):
    """``CONFIG_64BIT``: the kernel's word size, 64 or 32, as a parameter of the spec.

    Under 32 (checker.kernel.tearing): a plain load or store of a 64-bit variable
    (``S64``/``U64`` declared without ``atomic=True``) is two 32-bit accesses, low
    and high halves in either order; ``atomic64_*``/``local64_*`` variables stay
    whole; ``LONG``/``ULONG`` variables are 32 bits wide. Under 64 nothing changes.
    """

    def __init__(self, default: int = 64, *, explore: tuple[int, ...] | None = (64, 32),
                 prove: tuple[int, ...] | None = None, doc: str = "CONFIG_64BIT: 64, or 32 for a 32-bit kernel"):
        super().__init__(default, domain=(32, 64), explore=explore, prove=prove, doc=doc)
