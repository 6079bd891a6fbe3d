# SPDX-License-Identifier: GPL-2.0-only
"""Liveness (``eventually``, ``leads_to``) on the compiled engine.

The point's C program is generated as for the safety search, without
symmetry (liveness needs every concrete step, as ``checker.explore.graph``
builds it), with the liveness predicates lowered to C beside it and
``search_liveness.c``: the program builds the interpreter's state graph
(the same states in the same BFS numbering, every step an edge) and runs
``checker.explore.liveness``'s fair-SCC search on it, property by property.

Nothing it says is believed on its word: every lasso it prints is replayed
here on the interpreter (each step must give the next state exactly), and
checked to be what the verdict claims: it starts in an initial state, its
trigger holds (P for ``leads_to``), no state or step from the trigger on
meets the goal, and it either stops in a state with nothing enabled or ends
in a cycle that keeps the actions' fairness (each weakly fair instance taken
or disabled somewhere on the cycle, each strongly fair one taken or disabled
all along it). A lasso that fails any of these is an ``InternalError``.
The lasso may differ from the interpreter's (a different fair cycle); the
verdict and the graph's node and edge counts may not
(tests/test_compiled_liveness.py).

Whatever cannot be lowered raises ``Fallback`` naming it; the caller runs the
liveness checks on the interpreter's graph and says so.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import z3

import checker.lifetime as lifetime
from checker.compiled import build as cbuild
from checker.compiled.codegen import _predicate
from checker.compiled.cterms import CPrinter, Untranslatable, is_wide
from checker.compiled.engine import Fallback, InternalError, Timings, _describe_error, _source, default_max_memory
from checker.compiled.lower import Lowered, flatten, unflatten
from checker.compiled.run import SearchFailed, parse
from checker.explore.liveness import Lasso, LivenessOutcome
from checker.explore.paths import make_step
from checker.export.terms import Kids
from checker.language.compile import Model
from checker.language.declare import PropertyInfo
from checker.language.lint import symbolic_state
from checker.result import HOLDS, INCONCLUSIVE, VIOLATED, StopReason
from checker.symbolic.term import to_z3_bool

#: The note a liveness check run by this module carries.
NOTE = "compiled liveness"


@dataclass
class LiveTerms:
    """One liveness property as terms: its trigger (None: the initial states), its goal as a state
    predicate or as a step predicate over (s, t) (the other None)."""
    prop: PropertyInfo
    trigger: z3.BoolRef | None
    goal: z3.BoolRef | None
    step_goal: z3.BoolRef | None


@dataclass
class CompiledGraph:
    """What the liveness program decided: the graph's counts, and per property its outcome."""
    model: Model
    nodes: int
    edges: int
    seconds: float
    stopped: str | None
    outcomes: dict[str, LivenessOutcome]
    states: dict[int, tuple] = field(default_factory=dict)  # the states on the lassos, by node number
    stats: dict[str, str] = field(default_factory=dict)
    initial: list[int] = field(default_factory=lambda: [0])
    #: per violated property, (its trigger state's number, its position on the lasso)
    triggers: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def state(self, node: int) -> tuple:
        return self.states[node] if node in self.states else self.model.initial_states()[0]


def lower_liveness(model: Model) -> list[LiveTerms]:
    """Each liveness property of ``model`` on a symbolic state (and, for a step goal, a second one)."""
    s = symbolic_state(model)
    t = symbolic_state(model, "'")
    out = []
    for p in model.liveness:
        try:
            r = p.fn(s)
            if p.kind == "leads_to":
                if not (isinstance(r, tuple) and len(r) == 2):
                    raise Fallback(f"{p.name} does not return a pair (the interpreter explains)")
                trig, q = to_z3_bool(r[0]), r[1]
            else:
                trig, q = (z3.BoolVal(True) if p.always else None), r
            if callable(q):
                out.append(LiveTerms(p, trig, None, to_z3_bool(q(s, t))))
            else:
                out.append(LiveTerms(p, trig, to_z3_bool(q), None))
        except Fallback:
            raise
        except Exception as e:  # noqa: BLE001 - spec code that only runs on concrete values: the interpreter's
            raise Fallback(f"the liveness property {p.name} on symbolic states ({type(e).__name__}: {e})") from None
    return out


def _step_predicate(fname: str, term: Any, kids: Kids, names: list[str]) -> list[str]:
    """A C predicate over two states (s, t): a step goal of ``leads_to``."""
    narrow = {n: f"s[{i}]" for i, n in enumerate(names)} | {f"{n}'": f"t[{i}]" for i, n in enumerate(names)}
    wide = {n: f"((cw_t)s[{i}])" for i, n in enumerate(names)} | \
        {f"{n}'": f"((cw_t)t[{i}])" for i, n in enumerate(names)}
    w = is_wide([term], kids)
    p = CPrinter(wide if w else narrow, kids, w)
    lines = [f"static inline int {fname}(const int64_t *restrict s, const int64_t *restrict t) {{"]
    lines += ["    " + d for d in p.hoist([term], "p")]
    lines.append(f"    (void)s; (void)t; return {p(term)};")
    lines.append("}")
    return lines


def instances(low: Lowered) -> tuple[list[int], list[tuple[int, int | None]]]:
    """(instance number per step, the instances): fairness is per action and CPU (liveness.py)."""
    inst: dict[tuple[int, int | None], int] = {}
    per_step = [inst.setdefault((st.action, st.cpu), len(inst)) for st in low.steps]
    return per_step, list(inst)


def liveness_source(low: Lowered, base: str, terms: list[LiveTerms]) -> str:
    """The liveness program: the point's unreduced search source, the predicates and search_liveness.c."""
    m = low.model
    per_step, insts = instances(low)
    words = (len(insts) + 63) // 64 or 1
    weak, strong = [0] * words, [0] * words
    for i, (a, _cpu) in enumerate(insts):
        f = m.actions[a].info.fair
        if f == "weak":
            weak[i >> 6] |= 1 << (i & 63)
        elif f == "strong":
            strong[i >> 6] |= 1 << (i & 63)
    n = len(terms)
    gen = [f"#define CC_NLIVE {n}", f"#define CC_NINST {len(insts)}",
           "static const uint16_t cc_step_inst[CC_NSTEPS + 1] = {" + ", ".join(map(str, per_step + [0])) + "};",
           "static const uint64_t cc_inst_weak[] = {" + ", ".join(f"UINT64_C({x})" for x in weak) + "};",
           "static const uint64_t cc_inst_strong[] = {" + ", ".join(f"UINT64_C({x})" for x in strong) + "};",
           "static const int cc_live_init_trig[] = {" + ", ".join("1" if x.trigger is None else "0" for x in terms)
           + ", 0};",
           "static const int cc_live_fair[] = {" + ", ".join("1" if x.prop.fair else "0" for x in terms) + ", 0};",
           "static const int cc_live_step_goal[] = {" + ", ".join("1" if x.step_goal is not None else "0"
                                                                  for x in terms) + ", 0};"]
    kids = Kids()
    narrow = {name: f"s[{i}]" for i, name in enumerate(low.slot_names)}
    wide = {name: f"((cw_t)s[{i}])" for i, name in enumerate(low.slot_names)}
    false = z3.BoolVal(False)
    try:
        for k, x in enumerate(terms):
            gen += _predicate(f"cc_lt_{k}", f"the trigger of {x.prop.name}",
                              x.trigger if x.trigger is not None else false, kids, narrow, wide)
            gen += _predicate(f"cc_lg_{k}", f"the goal of {x.prop.name}",
                              x.goal if x.goal is not None else false, kids, narrow, wide)
            gen += _step_predicate(f"cc_ls_{k}", x.step_goal if x.step_goal is not None else false, kids,
                                   low.slot_names)
    except Untranslatable as e:
        raise Fallback(str(e)) from None
    for fn, args, params in (("cc_live_trig", "s", "const int64_t *restrict s"),
                             ("cc_live_goal", "s", "const int64_t *restrict s"),
                             ("cc_live_goal_step", "s, t", "const int64_t *restrict s, const int64_t *restrict t")):
        short = {"cc_live_trig": "cc_lt", "cc_live_goal": "cc_lg", "cc_live_goal_step": "cc_ls"}[fn]
        gen.append(f"static int {fn}(int k, {params}) {{")
        gen.append("    switch (k) {")
        gen += [f"    case {k}: return {short}_{k}({args});" for k in range(n)]
        gen.append("    }")
        gen.append(f"    (void){args.replace(', ', '; (void)')}; return 0;")
        gen.append("}")
    tail = resources.files("checker.compiled").joinpath("search_liveness.c").read_text()
    return "#define CC_LIVE 1\n" + base + "\n" + "\n".join(gen) + "\n" + tail


_built: dict[tuple, tuple] = {}


def prepare(model: Model) -> tuple[Lowered, list[LiveTerms], Any]:
    """(lowered model, liveness terms, the built program), or Fallback."""
    key = (model.cls, model.params)
    hit = _built.get(key)
    if hit is not None and hit[2].exists():
        return hit
    low, _evs, base = _source(model, False, Timings())
    terms = lower_liveness(model)
    source = liveness_source(low, base, terms)
    try:
        exe, _now = cbuild.build(source)
    except cbuild.CompilerMissing as e:
        raise Fallback(str(e)) from None
    except cbuild.CompileFailed as e:
        raise Fallback(f"the generated C did not compile: {e}") from None
    _built[key] = (low, terms, exe)
    return _built[key]


def compiled_liveness(model: Model, *, max_states: int | None = None, timeout: float | None = None,
                      max_memory: int | None = None) -> CompiledGraph:
    """The verdict of every liveness property of ``model``, from its state graph searched in C; each lasso
    replayed and checked on the interpreter. ``Fallback`` when the point cannot be compiled."""
    low, terms, exe = prepare(model)
    inits = model.initial_states()
    args = [str(exe), str(max_states or 0), repr(float(timeout or 0)), str(int(max_memory or default_max_memory()))]
    text = f"{len(inits)}\n" + "\n".join(" ".join(map(str, flatten(model, s))) for s in inits) + "\n"
    try:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, errors="replace", **lifetime.popen_kwargs())
    except OSError as e:
        raise SearchFailed(f"the compiled liveness search {exe} did not start: {e}") from None
    try:
        out, err = proc.communicate(text)
    except BaseException:
        lifetime.kill_group(proc)
        raise
    return read_back(model, low, terms, exe, out, err, proc.returncode)


def read_back(model: Model, low: Lowered, terms: list[LiveTerms], exe: Any, out: str, err: str,
              code: int) -> CompiledGraph:
    """The program's output as outcomes: checked, every lasso replayed."""
    lines, live = [], []
    for line in out.splitlines():
        (live if line.startswith(("live ", "ledge ")) else lines).append(line)
    try:
        res = parse("\n".join(lines))
    except ValueError as e:
        raise SearchFailed(f"the output of the compiled liveness search {exe} does not parse ({e})") from None
    if code == 4 and res.error is not None:
        kind, k, detail = res.error
        if kind == "overflow_liveness":
            raise Fallback(f"a value beyond 64 bits in the liveness property {terms[k].prop.name}")
        raise Fallback(_describe_error(low, res.error))
    props = [x.prop for x in terms]
    stats = res.stats
    if code == 5 or (code < 0 and "states" in stats):
        return _undecided(model, props, stats, StopReason.OUT_OF_MEMORY if code == 5 else StopReason.KILLED)
    if code != 0 or "end" not in stats:
        raise SearchFailed(f"the compiled liveness search exited with status {code}: {err.strip()[:300]}")
    try:
        nodes, edges = int(stats["states"]), int(stats["edges"])
        stopped = {"none": None, "max_states": StopReason.MAX_STATES, "timeout": StopReason.TIMEOUT,
                   "max_memory": StopReason.MAX_MEMORY}[stats["stopped"]]
        seconds = float(stats["seconds"])
        if int(stats["live"]) != len(terms) or nodes < 1 or edges != int(stats["transitions"]):
            raise ValueError
    except (KeyError, ValueError):
        raise SearchFailed(f"the compiled liveness search {exe} printed an inconsistent result line: "
                           f"{stats!r}") from None
    if stopped is not None:
        return _undecided(model, props, stats, stopped)
    states = {i: unflatten(model, v) for i, v in res.states.items()}
    g = CompiledGraph(model, nodes, edges, seconds, None, {}, states, stats)
    verdicts: dict[int, tuple] = {}
    ledges: dict[int, list] = {}
    current = None
    for line in live:
        parts = line.split()
        try:
            if parts[0] == "live" and len(parts) == 3 and parts[2] == "holds":
                verdicts[int(parts[1])] = (HOLDS,)
            elif parts[0] == "live" and len(parts) == 8 and parts[2] == "violated":
                current = int(parts[1])
                verdicts[current] = (VIOLATED, *map(int, parts[3:]))
                ledges[current] = []
            elif parts[0] == "ledge" and len(parts) == 4 and current is not None:
                ledges[current].append(tuple(map(int, parts[1:])))
            else:
                raise ValueError
        except ValueError:
            raise SearchFailed(f"the compiled liveness search {exe} printed {line[:80]!r}") from None
    if sorted(verdicts) != list(range(len(terms))):
        raise SearchFailed(f"the compiled liveness search {exe} decided properties {sorted(verdicts)}, "
                           f"not the {len(terms)} asked")
    fairness = {a.index: a.info.fair for a in model.actions if a.info.fair}
    for k, x in enumerate(terms):
        p = x.prop
        used = {model.actions[i].info.name: f for i, f in fairness.items()} if p.fair else {}
        v = verdicts[k]
        if v[0] == HOLDS:
            g.outcomes[p.name] = LivenessOutcome(p.name, p.kind, HOLDS, None, None, p.fair, used)
            continue
        _v, trig, trig_pos, loop_start, stops, count = v
        if count != len(ledges[k]):
            raise SearchFailed(f"the compiled liveness search {exe} printed {len(ledges[k])} steps of a "
                               f"{count}-step lasso")
        lasso = replay_lasso(model, low, p, states, ledges[k], trig, trig_pos, loop_start, bool(stops),
                             fairness if p.fair else {})
        g.outcomes[p.name] = LivenessOutcome(p.name, p.kind, VIOLATED, None, lasso, p.fair, used)
        g.triggers[p.name] = (trig, trig_pos)
    return g


def _undecided(model: Model, props: list[PropertyInfo], stats: dict, why: str) -> CompiledGraph:
    fairness = {a.index: a.info.fair for a in model.actions if a.info.fair}
    outs = {p.name: LivenessOutcome(p.name, p.kind, INCONCLUSIVE, why, None, p.fair,
                                    {model.actions[i].info.name: f for i, f in fairness.items()} if p.fair else {})
            for p in props}
    nodes = int(stats.get("states", 0)) if str(stats.get("states", "0")).isdigit() else 0
    edges = int(stats.get("transitions", 0)) if str(stats.get("transitions", "0")).isdigit() else 0
    return CompiledGraph(model, nodes, edges, float(stats.get("seconds", 0.0) or 0.0), why, outs, {}, stats)


def replay_lasso(model: Model, low: Lowered, prop: PropertyInfo, states: dict[int, tuple], edges: list[tuple],
                 trig: int, trig_pos: int, loop_start: int, stops: bool, fairness: dict[int, str]) -> Lasso:
    """The lasso the program printed, replayed on the interpreter and checked to be a fair run violating
    ``prop`` (the module's docstring); InternalError otherwise."""
    def wrong(why: str) -> InternalError:
        return InternalError(f"compiled liveness: the lasso of {prop.name} {why}")

    if not edges and not stops:
        raise wrong("is empty but does not stop")
    if not (0 <= trig_pos <= loop_start <= len(edges)) or (stops and loop_start != len(edges)) or \
            (not stops and loop_start == len(edges)):
        raise wrong(f"has its trigger at {trig_pos} and its loop at {loop_start} of {len(edges)} steps")
    for n in {e[0] for e in edges} | {e[2] for e in edges} | {trig}:
        if n not in states:
            raise wrong(f"passes state {n}, which the program did not print")
    first = edges[0][0] if edges else trig
    if (edges[trig_pos - 1][2] if trig_pos else first) != trig:
        raise wrong(f"does not pass its trigger {trig} at step {trig_pos}")
    if states[first] not in model.initial_states():
        raise wrong("does not start in an initial state")
    seq = [states[first]]
    steps = []
    for i, (u, k, v) in enumerate(edges):
        if k >= len(low.steps) or (i and edges[i - 1][2] != u):
            raise wrong(f"is not a path at step {i + 1}")
        st = low.steps[k]
        act = model.actions[st.action]
        t = model.fire(states[u], act, st.cpu, act.choices[st.label[2]])
        if t is None or tuple(t) != tuple(states[v]):
            raise wrong(f"does not replay at step {i + 1} ({st.what}) on the interpreter")
        steps.append(make_step(model, st.label, states[u], t))
        seq.append(t)
    if prop.kind == "leads_to":
        if not bool(prop.fn(seq[trig_pos])[0]):
            raise wrong(f"triggers at step {trig_pos}, where P does not hold")
    elif not prop.always and trig_pos != 0:
        raise wrong("triggers after the start")

    def goal(s: tuple) -> Any:
        r = prop.fn(s)
        return r[1] if prop.kind == "leads_to" else r

    for i in range(trig_pos, len(seq)):
        q = goal(seq[i])
        if callable(q):
            if i < len(edges) and bool(q(seq[i], seq[i + 1])):
                raise wrong(f"meets the goal at step {i + 1}")
        elif bool(q):
            raise wrong(f"meets the goal in its state {i}")
    if stops:
        if model.successors(seq[-1]):
            raise wrong("stops in a state with steps enabled")
    else:
        if tuple(seq[-1]) != tuple(seq[loop_start]):
            raise wrong("does not close its loop")
        loop = seq[loop_start:-1]
        taken = {low.steps[k].label[:2] for _u, k, _v in edges[loop_start:]}
        enabled = [{lab[:2] for lab, _t in model.successors(s)} for s in loop]
        for inst in set().union(*enabled):
            f = fairness.get(inst[0])
            if inst in taken or f is None:
                continue
            if (f == "weak" and all(inst in e for e in enabled)) or (f == "strong" and any(inst in e for e in enabled)):
                name = model.actions[inst[0]].info.name
                raise wrong(f"is not fair: {name} on cpu{inst[1]} ({f}) is enabled on its cycle and never taken")
    return Lasso(steps, loop_start, first, stops, [(u, v, k) for u, k, v in edges])
