# SPDX-License-Identifier: GPL-2.0-only
"""Message passing under the kernel memory model: a flag published with a release is safe, with
``WRITE_ONCE`` it is not.

The C it models (the MP litmus shape; ``data`` and ``flag`` start at 0)::

    CPU 0                                   CPU 1
    WRITE_ONCE(data, 1);                    f = smp_load_acquire(&flag);
    smp_store_release(&flag, 1);            d = READ_ONCE(data);
                                            /* f == 1 implies d == 1 */

Each step declares its access with ``access=``, in the kernel's words, so
``--memory lkmm`` (an operational approximation of tools/memory-model) can
reorder what the kernel's model lets it reorder. ``MessagePassing`` holds
under sc, tso and lkmm. ``MessagePassingOnce`` publishes and reads the flag
with ``WRITE_ONCE``/``READ_ONCE``: under lkmm CPU 1 may see the flag and
still read the old data, so it declares the property expected violated and
runs at ``memory=lkmm``:

    python -m checker verify examples/message_passing.py --mode explore
    python -m checker verify examples/message_passing.py:MessagePassingOnce --memory sc   # exit 1: not found

docs/weak-memory.md has the models' rules and bounds.
"""
from checker import (And, Implies, PerCpu, Role, Shared, Spec, READ_ONCE, WRITE_ONCE, action, invariant,
                     smp_load_acquire, smp_store_release, sometimes, terminal, when)
from checker.ordering.declare import MEMORY


class MessagePassing(Spec):
    """CPU 0 writes data, then releases the flag; CPU 1 acquires the flag, then reads data."""

    kernel = "an example: WRITE_ONCE(data); smp_store_release(flag) || smp_load_acquire(flag); READ_ONCE(data)"
    explore_sweeps = ({"memory": (MEMORY.sc, MEMORY.tso, MEMORY.lkmm)},)
    writer = Role(1)
    reader = Role(1)
    data = Shared(0)
    flag = Shared(0)
    pc = PerCpu(0)                        # each CPU's next line
    seen = PerCpu(0)                      # f, the flag CPU 1 read
    got = PerCpu(0)                       # d, the data CPU 1 read

    @action(role="writer", access=WRITE_ONCE("data"))
    def write_data(s, cpu):
        """WRITE_ONCE(data, 1)."""
        return when(s.pc[cpu] == 0, data=1, pc={cpu: 1})

    @action(role="writer", access=smp_store_release("flag"))
    def publish(s, cpu):
        """smp_store_release(&flag, 1)."""
        return when(s.pc[cpu] == 1, flag=1, pc={cpu: 2})

    @action(role="reader", access=smp_load_acquire("flag"))
    def read_flag(s, cpu):
        """f = smp_load_acquire(&flag)."""
        return when(s.pc[cpu] == 0, seen={cpu: s.flag}, pc={cpu: 1})

    @action(role="reader", access=READ_ONCE("data"))
    def read_data(s, cpu):
        """d = READ_ONCE(data)."""
        return when(s.pc[cpu] == 1, got={cpu: s.data}, pc={cpu: 2})

    @terminal
    def done(s):
        return And(s.pc[0] == 2, s.pc[1] == 2)

    @invariant
    def flag_implies_data(s):
        """A reader that saw the flag reads the data written before it."""
        return Implies(And(s.pc[1] == 2, s.seen[1] == 1), s.got[1] == 1)

    @sometimes
    def data_seen(s):
        return s.got[1] == 1


class MessagePassingOnce(MessagePassing, expect_violated=("flag_implies_data",)):
    """The flag with WRITE_ONCE and READ_ONCE: nothing orders it against data under lkmm."""

    kernel = "an example: WRITE_ONCE(data); WRITE_ONCE(flag) || READ_ONCE(flag); READ_ONCE(data)"
    explore_sweeps = ({"memory": MEMORY.lkmm},)

    @action(role="writer", access=WRITE_ONCE("flag"))
    def publish(s, cpu):
        """WRITE_ONCE(flag, 1)."""
        return when(s.pc[cpu] == 1, flag=1, pc={cpu: 2})

    @action(role="reader", access=READ_ONCE("flag"))
    def read_flag(s, cpu):
        """f = READ_ONCE(flag)."""
        return when(s.pc[cpu] == 0, seen={cpu: s.flag}, pc={cpu: 1})
