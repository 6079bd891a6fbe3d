# SPDX-License-Identifier: GPL-2.0-only
"""The whole C program for one model at one parameter point.

Generated part, then the runtime (``runtime.c``, shipped with the package)
with the generated functions at its GENERATED mark: one translation unit,
so the compiler inlines every step into the search loop. The text depends
only on the lowered terms, so its hash keys the build cache. The quick
build (-O0, a point's first states) splits it at the RUNTIME mark instead
(``split_units``): the runtime is compiled once and linked with each point's part.
"""
from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from checker.compiled.cterms import CPrinter, Untranslatable, is_wide
from checker.compiled.lower import Lowered, NotLowerable
from checker.export.terms import Kids, symbols
from checker.types import NOBODY, CpuIdType

#: Events of the context rules, in the order the runtime numbers them.
Event = tuple


@functools.lru_cache(maxsize=1)
def runtime_source() -> str:
    """The C runtime every generated explorer includes (``checker/compiled/runtime.c``, then the search on
    several threads, ``search_threads.c``, the one keeping fingerprints, ``search_fingerprint.c``, and
    checkpoints, ``search_checkpoint.c``)."""
    here = resources.files("checker.compiled")
    rest = "\n".join(here.joinpath(f).read_text()
                     for f in ("search_threads.c", "search_fingerprint.c", "search_checkpoint.c"))
    # the quick build (-DCC_QUICK, checker/compiled/build.py's QUICK_FLAGS) searches on one thread, without
    # fingerprints or checkpoints: their code is left to the preprocessor (a third of the compiler's time)
    return here.joinpath("runtime.c").read_text() + "\n#ifndef CC_QUICK\n" + rest + "\n#else\n" + QUICK_REFUSALS \
        + "#endif\n"


#: The marks in runtime.c: the generated functions go at GENERATED, partial-order reduction's selection at POR;
#: the quick build's runtime object is the text from RUNTIME on.
GENERATED, POR, RUNTIME = "/*@GENERATED@*/", "/*@POR@*/", "/*@RUNTIME@*/"


def split_units(source: str) -> tuple[str, str] | None:
    """A program as two translation units, (its generated part, the runtime), for the quick build that
    compiles the runtime once and links it with each program (checker/compiled/build.py): None where the
    text after the RUNTIME mark is not the plain runtime's (a program with partial-order reduction)."""
    rt = runtime_source()
    tail = rt[rt.index(RUNTIME):].replace(POR, "")
    cut = source.find(RUNTIME)
    if cut < 0 or source[cut:] != tail:
        return None
    return "#define CC_SPLIT_GEN 1\n" + source[:cut], "#define CC_SPLIT_RUNTIME 1\n" + rt[:rt.index(GENERATED)] + tail


#: The quick build's answer to what only the full build runs (compiled_search never asks it for them).
QUICK_REFUSALS = """static void cc_quick_refuses(const char *what) {
    fprintf(stderr, "%s: not in the quick build (-DCC_QUICK): one thread, no fingerprints, no checkpoints\\n", what);
    exit(2);
}
static void search_threaded(int nthreads, uint64_t limit, double timeout, double t0) { cc_quick_refuses("THREADS"); }
static void search_fingerprint(const int64_t *inits, int ninit, uint64_t limit, double timeout, double t0) {
    cc_quick_refuses("FINGERPRINT");
}
static void fp_print_path(uint32_t idx) { (void)idx; cc_quick_refuses("FINGERPRINT"); }
static void cp_save(int level, uint32_t level_start, uint32_t level_end) { cc_quick_refuses("CHECKPOINT_DIR"); }
static int cp_load(int last, uint32_t *level_start, uint32_t *level_end) {
    cc_quick_refuses("CHECKPOINT_DIR");
    return 0;
}
"""


def canonical_source(low: Lowered, symmetry: bool) -> str:
    """The C function that maps a state to its canonical form under CPU symmetry (the identity when off)."""
    m = low.model
    if not (symmetry and m.symmetry.active):
        # (CC_NO_CANONICAL: runtime.c packs a successor from its parent's words, the step's slots alone)
        return "#define CC_NO_CANONICAL 1\nstatic inline void cc_canonical(int64_t *v) { (void)v; }\n"
    try:
        from checker.compiled.canonical import c_canonical
    except ImportError:
        raise NotLowerable("symmetry reduction (checker/compiled/canonical.py, its C form, is not installed)") from None
    return c_canonical(m)


def events(low: Lowered) -> list[Event]:
    """The context-rule events the generated program reports (a lock taken with interrupts on, ...), in report order."""
    r = low.rules
    if not r:
        return []
    out: list[Event] = []
    for name, _ in r["locks"]:
        out += [("irq_taken", name), ("irqs_on_taken", name)]
    if len(r["locks"]) >= 2:
        out += [("edge", h, n) for h, _ in r["locks"] for n, _ in r["locks"] if h != n]
    out.append(("sleep_violation",))
    if r["irqs"] or r["preempt"]:
        out.append(("unbalanced",))
    if r["irq_actions"] and r["locks"]:
        out.append(("irq_spins",))
    return out


def generate(low: Lowered, symmetry: bool, por: bool = False) -> tuple[str, list[Event]]:
    """(C source, the context events it numbers). ``por``: with partial-order reduction (ample.py) where it
    can be generated."""
    m = low.model
    n = len(low.slot_names)
    if len(low.steps) > 65535:
        raise NotLowerable(f"{len(low.steps)} steps (the compiled engine labels steps with 16 bits)")
    kids = Kids()
    narrow = {name: f"s[{i}]" for i, name in enumerate(low.slot_names)}
    wide = {name: f"((cw_t)s[{i}])" for i, name in enumerate(low.slot_names)}
    evs = events(low)
    ev_index = {e: i for i, e in enumerate(evs)}
    unbalanced = ev_index.get(("unbalanced",), -1)
    irq_spins = ev_index.get(("irq_spins",), -1)
    updated = [0] * n
    for st in low.steps:
        for i, _ in st.updates:
            updated[i] = 1
    # no parameter values here: points that differ only in initial values (ops) share one program
    out = [f"/* {m.name}: {len(low.steps)} steps, {n} slots; the initial states come on stdin */",
           f"#define CC_NSLOTS {n}", f"#define CC_NSTEPS {len(low.steps)}",
           f"#define CC_NPROPS {len(low.props)}", f"#define CC_NEVENTS {len(evs)}",
           f"#define CC_EV_UNBALANCED {unbalanced}", f"#define CC_EV_IRQ_SPINS {irq_spins}", ""]
    gen: list[str] = []
    gen.append("static const int cc_prop_kind[CC_NPROPS + 1] = {"
               + ", ".join("0" if kind == "invariant" else "1" for _, kind, _ in low.props) + (", " if low.props else "")
               + "0};")
    gen.append("static const int cc_updated[CC_NSLOTS] = {" + ", ".join(map(str, updated)) + "};")
    family = []
    for n_ in m.var_names:
        first = len(family)
        family += [first] * (m.arrays.get(n_, m.ncpus_total) if n_ in m.tupled else 1)
    gen.append("static const int cc_family[CC_NSLOTS] = {" + ", ".join(map(str, family)) + "};")
    gen.append("static const int cc_static[CC_NSLOTS] = {" + ", ".join(map(str, _static(low, updated, symmetry)))
               + "};")
    gen.append("static const int cc_dom_has[CC_NSLOTS] = {"
               + ", ".join("1" if d else "0" for d in low.domains) + "};")
    gen.append("static const int64_t cc_dom_lo[CC_NSLOTS] = {"
               + ", ".join(_lit(d[0]) if d else "0" for d in low.domains) + "};")
    gen.append("static const int64_t cc_dom_hi[CC_NSLOTS] = {"
               + ", ".join(_lit(d[1]) if d else "0" for d in low.domains) + "};")
    index = {name: i for i, name in enumerate(low.slot_names)}
    reads = [{index[x] for x in symbols(term, kids) if x in index} for _, _, term in low.props]
    writes = [sorted({i for i, _ in st.updates}) for st in low.steps]
    gen.append("static const unsigned char cc_step_reads[CC_NSTEPS + 1][CC_NPROPS + 1] = {")
    for w in writes:
        gen.append("    {" + ", ".join("1" if r.intersection(w) else "0" for r in reads) + (", " if reads else "") + "0},")
    gen.append("    {0}};")
    # per step, the slots it writes (runtime.c's pack_succ): cc_step_wslots[cc_step_wfirst[k] .. cc_step_wfirst[k + 1])
    first = [0]
    for w in writes:
        first.append(first[-1] + len(w))
    gen.append("static const int cc_step_wfirst[CC_NSTEPS + 1] = {" + ", ".join(map(str, first)) + "};")
    gen.append("static const int cc_step_wslots[] = {" + ", ".join(str(i) for w in writes for i in w)
               + (", " if first[-1] else "") + "0};")
    gen.append("")
    try:
        for st in low.steps:
            gen += _step(st, low, kids, narrow, wide, ev_index)
        for k, (name, kind, term) in enumerate(low.props):
            gen += _predicate(f"cc_prop_{k}", f"{kind} {name}", term, kids, narrow, wide)
        gen += _predicate("cc_terminal", "the terminal predicate", low.terminal, kids, narrow, wide)
    except Untranslatable as e:
        raise NotLowerable(str(e)) from None
    gen.append("static int cc_prop(int k, const int64_t *restrict s) {")
    gen.append("    switch (k) {")
    for k in range(len(low.props)):
        gen.append(f"    case {k}: return cc_prop_{k}(s);")
    gen.append("    }")
    gen.append("    (void)s; return 0;")
    gen.append("}")
    gen.append("static int cc_expand(const int64_t *restrict s, int64_t *restrict out, uint32_t *restrict lab) {")
    gen.append("    int n = 0;")
    for st in low.steps:
        gen.append(f"    if (cc_step_{st.index}(s, out + (size_t)n * CC_NSLOTS)) lab[n++] = {st.index};")
    gen.append("    return n;")
    gen.append("}")
    r = low.rules
    rows = (r.get("irqs") or []) + (r.get("preempt") or [])
    cond = " || ".join(f"s[{i}] != 0" for row in rows for i in row) or "0"
    gen.append(f"static inline int cc_unbalanced(const int64_t *restrict s) {{ (void)s; return {cond}; }}")
    try:
        gen += _irq_spins(low, kids, narrow, wide)
    except Untranslatable as e:
        raise NotLowerable(str(e)) from None
    gen.append(canonical_source(low, symmetry))
    maps = m.symmetry.sample_mappings() if (symmetry and m.symmetry.active) else []
    gen.append(f"#define CC_SYM_MAPS {len(maps)}")
    if maps:
        from checker.compiled.structural import map_rows  # actors, then the Array entries a structure moves
        rows = map_rows(m, maps)
        gen.append(f"static const int cc_sym_maps[{len(rows)}][{len(rows[0])}] = {{"
                   + ", ".join("{" + ", ".join(map(str, r)) + "}" for r in rows) + "};")
    select = ""
    if por:
        from checker.compiled.ample import Sets, c_ample, c_select, event_steps

        sets = Sets(low, kids, event_steps(low, {st.index: _events(st, low, ev_index) for st in low.steps}), evs)
        if sets.off is None:
            gen += c_ample(sets)
            select = c_select()
    body = runtime_source().replace(GENERATED, "\n".join(gen)).replace(POR, select)
    return "\n".join(out) + "\n" + body, evs


def _static(low: Lowered, updated: list[int], symmetry: bool) -> list[int]:
    """Slots no step writes and no renaming of CPUs can change: pack() skips them. Under symmetry the
    canonical form moves per-CPU values between the CPUs of a symmetric role and renames CPU ids, so
    only the slots it leaves alone count."""
    m = low.model
    sym = symmetry and m.symmetry.active
    moved = m.symmetry.moved_actors if sym else frozenset()
    out = []
    for n in m.var_names:
        v = m.vars[n]
        renamed = sym and isinstance(v.type, CpuIdType)
        entries = m.symmetry.moved_slots.get(n, frozenset()) if sym else frozenset()  # a structure's Array entries
        if n in m.tupled:
            size = m.arrays.get(n, m.ncpus_total)
            for c in range(size):
                permuted = (n in m.percpu and c in moved) or c in entries
                out.append(0 if (renamed or permuted) else 1)
        else:
            out.append(0 if renamed else 1)
    return [0 if u else s for s, u in zip(out, updated)]


def _lit(v: int) -> str:
    return "INT64_MIN" if v == -(1 << 63) else f"INT64_C({v})"


def _comment(text: str) -> str:
    return text.replace("*/", "* /")


def _step(st: Any, low: Lowered, kids: Kids, narrow: dict, wide: dict, ev_index: dict) -> list[str]:
    terms = [st.guard] + [z for _, z in st.updates] + [c for c, _ in st.checks]
    w = is_wide(terms, kids)
    p = CPrinter(wide if w else narrow, kids, w)
    name, cpu, choices = low.model.label_parts(st.label)
    args = ", ".join(f"{k}={v}" for k, v in choices.items())
    lines = [f"/* step {st.index}: {_comment(name)}({_comment(args)})" + (f" on cpu{cpu}" if cpu is not None else "")
             + " */",
             f"static inline int cc_step_{st.index}(const int64_t *restrict s, int64_t *restrict t) {{"]
    lines += ["    " + d for d in p.hoist([st.guard], "g")]
    lines.append(f"    int g = {p(st.guard)};")
    lines.append(f"    if (__builtin_expect(cc_ovf, 0)) cc_fail(\"overflow\", {st.index}, 0);")
    lines.append("    if (!g) return 0;")
    lines += ["    " + d for d in p.hoist([z for _, z in st.updates] + [c for c, _ in st.checks], "u")]
    # (cc_whole 0: the caller reads the written slots alone, runtime.c's search loops without a canonical form)
    lines.append("    if (cc_whole) memcpy(t, s, sizeof(int64_t) * CC_NSLOTS);")
    for i, z in st.updates:
        e = p(z)
        lines.append(f"    t[{i}] = {'cw_narrow(' + e + ')' if w else e};  /* {_comment(low.slot_names[i])} */")
    for j, (c, what) in enumerate(st.checks):
        lines.append(f"    if (!{p(c)}) cc_fail(\"check\", {st.index}, {j});  /* {_comment(what)} */")
    lines.append(f"    if (__builtin_expect(cc_ovf, 0)) cc_fail(\"overflow\", {st.index}, 1);")
    lines += ["    " + x for x in _events(st, low, ev_index)]
    lines.append("    return 1;")
    lines.append("}")
    return lines


def _events(st: Any, low: Lowered, ev_index: dict) -> list[str]:
    """The context rules' checks of ``ContextRules.on_transition`` for this step."""
    r = low.rules
    c = st.cpu
    if not r or c is None:
        return []
    written = {i for i, _ in st.updates}  # (a lock this step does not write is not taken by it: t's slot is s's)
    out = []
    atomic = " || ".join([f"s[{pl}] == {c}" for _, pl in r["locks"]]
                         + [f"s[{row[c]}] != 0" for row in r["irqs"] + r["preempt"]]) or "0"
    sleep = ev_index[("sleep_violation",)]
    for name, pl in r["locks"]:
        inner = []
        if st.action in r["irq_actions"]:
            inner.append(f"cc_event({ev_index['irq_taken', name]}, {st.index});")
        elif r["irqs"]:
            on = " && ".join(f"s[{row[c]}] == 0" for row in r["irqs"])
            inner.append(f"if ({on}) cc_event({ev_index['irqs_on_taken', name]}, {st.index});")
        if r["rt"] and pl in r["rt_locks"]:
            inner.append(f"if ({atomic}) cc_event({sleep}, {st.index});")
        if inner and pl in written:
            out.append(f"if (t[{pl}] == {c} && s[{pl}] != {c}) {{ " + " ".join(inner) + " }")
    if len(r["locks"]) >= 2:
        for n, pn in r["locks"]:
            for h, ph in r["locks"]:
                if h != n and pn in written:
                    out.append(f"if (t[{pn}] == {c} && s[{pn}] != {c} && s[{ph}] == {c}) "
                               f"cc_event({ev_index['edge', h, n]}, {st.index});")
    if st.action in r["sleepers"]:
        out.append(f"if ({atomic}) cc_event({sleep}, {st.index});")
    return out


def _irq_spins(low: Lowered, kids: Kids, narrow: dict, wide: dict) -> list[str]:
    """``ContextRules._irq_spins``: some interrupt handler that is not enabled here would be with a lock that its
    CPU's own code holds freed (it would spin forever). Which handler, CPU and lock is the interpreter's to
    say, at the state this finds first."""
    r = low.rules
    lines = []
    on = r.get("on") or [] if r else []
    members = {x for x, _ in on}
    for x, term in on:  # the CPU member x runs on
        lines += _predicate(f"cc_on_{x}", f"the CPU member {x} runs on", term, kids, narrow, wide)
    lines.append("static int cc_irq_spins(const int64_t *restrict s) {")
    if r and r["irq_actions"] and r["locks"]:
        lines += ["    int64_t freed[CC_NSLOTS], out[CC_NSLOTS];", "    int found = 0;", "    cc_events_off = 1;"]
        for st in low.steps:
            if st.action not in r["irq_actions"] or st.cpu is None:
                continue
            c = st.cpu
            for _, pl in r["locks"]:
                held = ([f"s[{pl}] == {c}"] if c not in members else []) + \
                    ([f"s[{pl}] == s[{r['curr'][c]}]"] if r["curr"] else []) + \
                    [f"(s[{pl}] == {x} && cc_on_{x}(s) == {c})" for x in sorted(members)]
                held = " || ".join(held) or "0"
                lines.append(f"    if (!found && s[{pl}] != {NOBODY} && ({held})) {{ memcpy(freed, s, sizeof freed); "
                             f"freed[{pl}] = {NOBODY}; found = cc_step_{st.index}(freed, out) && "
                             f"!cc_step_{st.index}(s, out); }}")
        lines += ["    cc_events_off = 0;", "    return found;"]
    else:
        lines.append("    (void)s; return 0;")
    lines.append("}")
    return lines


def _predicate(fname: str, what: str, term: Any, kids: Kids, narrow: dict, wide: dict) -> list[str]:
    w = is_wide([term], kids)
    p = CPrinter(wide if w else narrow, kids, w)
    lines = [f"/* {_comment(what)} */", f"static inline int {fname}(const int64_t *restrict s) {{"]
    lines += ["    " + d for d in p.hoist([term], "p")]
    lines.append(f"    (void)s; return {p(term)};")
    lines.append("}")
    return lines
