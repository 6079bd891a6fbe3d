import sys
sys.path.insert(0, "tests")
from simulate_cases import CASES
from checker import loader
from checker.simulate.checks import SimulateOptions
from checker.verify import verify
for name, params, runs, depth, seed, prop in CASES:
    if name not in sys.argv[1:]:
        continue
    cls = loader.resolve([name])[0]
    sets = {k: (v,) for k, v in params.items()}
    r = verify([cls], sets=sets, simulate=SimulateOptions(int(sys.argv[1]) if False else 400, depth, seed))
    c = next(c for c in r.checks if c.property == prop)
    print(name, c.verdict, {k: v for k, v in c.extra.items() if k != "strategy"}, c.extra.get("strategy"), flush=True)
