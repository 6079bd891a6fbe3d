# SPDX-License-Identifier: GPL-2.0-only
"""Issue 28's size target: every ported kernel function's step code against the lines of the kernel C it models.

For each ``@process`` function of every port in ``ORIGINALS`` (``specs/<module>.py``), with the helpers it inlines
(functions handed ``k``: their step lines and their C count in its row; each helper has a row of its own too):

- step lines: the function's body without its docstring, blank lines and comment-only lines;
- C lines: the C quoted in its docstring (every ``::`` literal block), or, where the docstring quotes none, the
  functions of the module docstring's quoted C that it models (``MODELS`` below, with the reason), or a count
  stated with its source (``STATED``). In both, blank lines, C comments, ``...`` elisions and declarations
  without a value (``int i;``, ``u64 old, new, v;``) are left out; of a quoted function, its body between the
  outer braces is counted (the braces of its ``if``/``do``/``for`` and ``} else {`` lines count, as in the
  docstrings' quotes).

Then each ported spec file's length against the hand-written original it replaces (lines, and code lines: not
blank, not a comment). The target is a ratio of at most 1.5 per function.

    python benchmarks/process_lines.py                 # the working tree
    python benchmarks/process_lines.py --rev 6e1f734   # the files as of a commit (before/after figures)
"""
from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Process functions whose docstring quotes no C: the functions of the module docstring's C they model.
MODELS = {
    ("percpu_lazy", "lazy_percpu_counter_add"): (
        ("lazy_percpu_counter_add", "lazy_percpu_counter_add_slowpath", "lazy_percpu_counter_switch_to_pcpu"),
        "the fast path with its slow path and switch inlined"),
    ("percpu_lazy", "lazy_percpu_counter_add_irq"): (
        ("lazy_percpu_counter_add", "lazy_percpu_counter_add_slowpath", "lazy_percpu_counter_switch_to_pcpu"),
        "the same add from a hard-irq handler"),
    ("percpu_lazy", "lazy_percpu_counter_read"): (("lazy_percpu_counter_read",), ""),
    ("stack_cache", "task_stack"): (
        ("alloc_thread_stack_node", "exit_task_stack_account", "free_thread_stack", "thread_stack_delayed_free"),
        "one child's stack: the allocation, its accounting at exit, the last put's free (cache or RCU); "
        "try_release_thread_stack_to_cache() is its inlined helper, counted on its own"),
    ("stack_cache", "thread_stack_free_rcu"): (
        ("thread_stack_free_rcu",), "the RCU callback; its cache attempt is the inlined helper"),
    ("stack_cache", "free_vm_stack_cache"): (("free_vm_stack_cache",), ""),
}

#: Counts stated with their source, where neither docstring quotes the C.
STATED = {
    ("percpu_eager", "percpu_counter_read"): (
        1, "include/linux/percpu_counter.h: percpu_counter_read() is `return fbc->count;`"),
    ("percpu_eager", "percpu_counter_add"): (
        11, "percpu_counter_add(fbc, amount) in hard-irq context is percpu_counter_add_batch(fbc, amount, "
            "percpu_counter_batch): B's body, 11 lines as quoted in percpu_counter_add_batch_b"),
    ("percpu_eager_tasks", "percpu_counter_add"): (
        11, "as percpu_eager's handler: percpu_counter_add_batch with interrupts already off, B's body "
            "(11 lines, quoted in percpu_eager.percpu_counter_add_batch_b)"),
}

#: Each port (a module of specs/) and the hand-written pc-machine spec it ports: beside it in specs/, or, once
#: the port has replaced it, kept as the equality tests' reference in tests/pc_machines/.
#: Each port's hand-written original as it was before the port replaced it (its file at that commit: the pc
#: machines in tests/pc_machines/ now share the ports' properties, so their length today is not the original's).
ORIGINALS = {"percpu_eager": ("specs/percpu_eager.py", "4452d3d"),
             "percpu_eager_tasks": ("specs/percpu_eager_tasks.py", "4452d3d"),
             "percpu_lazy": ("specs/percpu_lazy.py", "d0f9496"),
             "percpu_lazy_publish": ("specs/percpu_lazy_publish.py", "d0f9496"),
             "stack_cache": ("specs/stack_cache.py", "4452d3d"),
             "vma_unlink_batch": ("specs/vma_unlink_batch.py", "bd53781"),
             "percpu_counter_tree": ("specs/percpu_counter_tree.py", "bd53781")}

TARGET = 1.5

_DECL = re.compile(r"^(const\s+)?(struct\s+\w+|unsigned(\s+(int|long))*|signed\s+\w+|u8|u16|u32|u64|s8|s16|s32|s64|"
                   r"int|long|bool|char|void|\w+_t)(\s+__percpu)?[\s*]+[\w\s*,\[\]]+;$")


def c_line_counts(line: str) -> bool:
    """A line of quoted C that counts: not blank, not a comment, not an elision, not a bare declaration."""
    x = line.strip()
    if not x or x == "..." or x.startswith(("/*", "//", "* ", "*/")) or x == "*":
        return False
    return not (_DECL.match(x) and "=" not in x and "(" not in x)


def literal_blocks(doc: str) -> list[list[str]]:
    """The ``::`` literal blocks of a docstring, each as its lines."""
    lines = doc.splitlines()
    # the prose's margin (a raw docstring: its first line starts after the quotes; the last may be the closing
    # quotes' indentation alone)
    indents = [len(x) - len(x.lstrip()) for x in lines[1:] if x.strip()]
    if len(lines) > 1 and not lines[-1].strip():
        indents.append(len(lines[-1]))
    margin = min(indents, default=0)
    out: list[list[str]] = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip().endswith("::"):
            base = margin if i == 0 else len(lines[i]) - len(lines[i].lstrip())
            block: list[str] = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > base):
                block.append(lines[i])
                i += 1
            out.append(block)
        else:
            i += 1
    return out


def c_function_body(doc: str, name: str) -> list[str]:
    """The body (between its outer braces) of the C function ``name`` quoted in ``doc``."""
    lines = doc.splitlines()
    head = next((i for i, x in enumerate(lines) if re.search(rf"\b{re.escape(name)}\(", x)
                 and not x.strip().endswith(";") and i + 1 < len(lines) and lines[i + 1].strip() == "{"), None)
    if head is None:
        raise SystemExit(f"process_lines: the C of {name}() is not quoted in the module docstring")
    body, depth = [], 0
    for x in lines[head + 1:]:
        depth += x.count("{") - x.count("}")
        if depth == 0:
            break
        body.append(x)
    return body[1:]  # (the first is the opening brace)


def step_lines(fn: ast.FunctionDef, src: list[str]) -> int:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    lines = src[body[0].lineno - 1:fn.end_lineno]
    return sum(1 for x in lines if x.strip() and not x.strip().startswith("#"))


def is_process(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if getattr(f, "id", None) == "process" or getattr(f, "attr", None) == "process":
            return True
    return False


def inlined_helpers(fn: ast.FunctionDef) -> list[str]:
    """The names of the helpers ``fn`` hands ``k`` to (``helper(k, ...)``, ``s.spec.helper(k, ...)``), once each."""
    out: dict[str, None] = {}
    for c in ast.walk(fn):
        if isinstance(c, ast.Call) and c.args and isinstance(c.args[0], ast.Name) and c.args[0].id == "k":
            name = getattr(c.func, "id", None) or getattr(c.func, "attr", None)
            if name:
                out[name] = None
    return list(out)


def is_helper(fn: ast.FunctionDef) -> bool:
    """A kernel function a process function inlines: handed the primitives and the state, ``(k, s, ...)``."""
    return not is_process(fn) and len(fn.args.args) >= 3 and [a.arg for a in fn.args.args[:2]] == ["k", "s"]


def read(path: str, rev: str | None) -> str | None:
    if rev is None:
        p = ROOT / path
        return p.read_text() if p.exists() else None
    r = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def code_lines(text: str) -> int:
    return sum(1 for x in text.splitlines() if x.strip() and not x.strip().startswith("#"))


def measure(rev: str | None) -> tuple[list[tuple], list[tuple]]:
    ports = sorted(ORIGINALS)
    rows = []
    for mod in ports:
        text = read(f"specs/{mod}.py", rev)
        if text is None:
            continue
        tree = ast.parse(text)
        src = text.splitlines()
        module_doc = ast.get_docstring(tree, clean=False) or ""
        helpers = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and is_helper(n)}
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and (is_process(n) or is_helper(n))]:
            doc = ast.get_docstring(fn, clean=False) or ""
            blocks = literal_blocks(doc)
            inlined = [helpers[h] for h in inlined_helpers(fn) if h in helpers]
            if blocks:
                c = sum(1 for b in blocks for x in b if c_line_counts(x))
                where = "its docstring"
            elif (mod, fn.name) in MODELS:
                names, why = MODELS[(mod, fn.name)]
                c = sum(1 for n in names for x in c_function_body(module_doc, n) if c_line_counts(x))
                where = "module docstring: " + " + ".join(f"{n}()" for n in names) + (f" ({why})" if why else "")
            elif (mod, fn.name) in STATED:
                c, where = STATED[(mod, fn.name)]
            else:
                raise SystemExit(f"process_lines: {mod}.{fn.name} quotes no C and has no stated count")
            steps = step_lines(fn, src)
            for h in inlined:  # a helper it inlines: its steps and its C count here too (and on its own row)
                steps += step_lines(h, src)
                c += sum(1 for b in literal_blocks(ast.get_docstring(h, clean=False) or "") for x in b
                         if c_line_counts(x))
                where += f" + {h.name}() inlined"
            rows.append((mod, fn.name, steps, c, where))
    files = []
    for mod in ports:
        after = read(f"specs/{mod}.py", rev)
        path, then = ORIGINALS[mod]
        before = read(path, then or rev)
        if after is None:
            continue
        files.append((mod, f"{path} at {then}" if then else path, before, after))
    return rows, files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", help="measure the files as of this git revision")
    a = ap.parse_args(argv)
    rows, files = measure(a.rev)
    print(f"# step code against kernel C, per process function ({'rev ' + a.rev if a.rev else 'working tree'}); "
          f"target <= {TARGET}x")
    print(f"{'spec':28} {'function':34} {'step':>5} {'C':>4} {'ratio':>6}  C counted from")
    miss = 0
    for mod, name, steps, c, where in rows:
        ratio = steps / c
        flag = "" if ratio <= TARGET else "  MISS"
        miss += bool(flag)
        print(f"{mod:28} {name:34} {steps:5d} {c:4d} {ratio:5.2f}x  {where}{flag}")
    print(f"# {len(rows) - miss} of {len(rows)} functions within {TARGET}x")
    print()
    print("# ported spec files: the hand-written original (before) and the port (after); lines, and code lines "
          "(not blank, not a comment)")
    print(f"{'port':28} {'original':42} {'before':>14} {'after':>14}")
    for mod, orig, before, after in files:
        b = f"{len(before.splitlines())} / {code_lines(before)}" if before is not None else "-"
        print(f"{mod:28} {orig:42} {b:>14} {len(after.splitlines()):>6} / {code_lines(after):<6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
