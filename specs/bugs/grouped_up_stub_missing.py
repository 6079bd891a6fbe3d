# SPDX-License-Identifier: GPL-2.0-only
"""Seed 002: the v2 "pcpcntr: add group allocation/free" series without UP stubs.

v2 added percpu_counter_init_many / percpu_counter_destroy_many only in the
CONFIG_SMP branch of include/linux/percpu_counter.h, while kernel/fork.c
called them unconditionally. The kernel test robot reported it for
arm-randconfig-r005-20230823 (GCC 13.2.0) and um-allyesconfig (clang
14.0.6): implicit declaration of 'percpu_counter_destroy_many' at
kernel/fork.c:926 in __mmdrop and of 'percpu_counter_init_many' at
kernel/fork.c:1299 in mm_init. v3 (merged as c439d5e8a0de) added the UP
stubs: init_many sets every element's count, destroy_many is empty.
"""
from checker import Param
from checker.kernel.config import CONFIG, SMP, SMP_HOTPLUG, UP, Api
from checker.specs.percpu_grouped import PercpuGrouped


class GroupedUpStubMissing(PercpuGrouped, expect_violated=("builds",)):
    """percpu_counter_init_many / destroy_many provided only with CONFIG_SMP (v2 of the series)."""

    kernel = "v2 of 'pcpcntr: add group allocation/free' (no !CONFIG_SMP init_many/destroy_many) with 14ef95be6f55"
    config = Param(UP, domain=CONFIG, explore=(UP,),
                   doc="the configuration the robot built: !CONFIG_SMP")
    grouped = Param(1, domain=(1,), doc="the grouped calls of seed 002")
    api = Api("config", {
        "percpu_counter_init": tuple(range(len(CONFIG.names))),
        "percpu_counter_destroy": tuple(range(len(CONFIG.names))),
        "percpu_counter_init_many": (SMP, SMP_HOTPLUG),
        "percpu_counter_destroy_many": (SMP, SMP_HOTPLUG),
    })
