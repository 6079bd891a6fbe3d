# SPDX-License-Identifier: GPL-2.0-only
"""The compiled explorer: a model at one parameter point as a generated C program.

The spec's actions and properties run on symbols (as for the Z3 backend and
the Promela export) and the terms are printed as C (``lower``, ``cterms``,
``codegen``), around a breadth-first search runtime (``runtime.c``) that
stores exactly the interpreter's states in the interpreter's order; the
program is built once per source and compiler (``build``), run as a
subprocess (``run``), and its results read back as the interpreter's own
(``engine``). ``explore(..., engine="compiled")`` is the way in.
"""

#: ``--engine`` values: auto compiles a point once it outgrows the interpreter.
ENGINES = ("auto", "compiled", "interpreted")
