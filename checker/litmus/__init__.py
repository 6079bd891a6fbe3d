# SPDX-License-Identifier: GPL-2.0-only
"""herd7 C litmus tests as specs: ``parse`` reads a ``.litmus`` file, ``lower`` makes it a spec class,
``run`` explores it under sc, tso and lkmm and writes the table, ``command`` is ``python -m checker litmus``.
"""
