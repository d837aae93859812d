"""Normal-model grid over the A/B prior's knobs: vectorised, quick."""
import math, sys, itertools
import numpy as np
from scipy import stats
sys.path.insert(0, '/work/wt/i38-prior')
from pytest_specperf.gate.sequential import z_boundaries

ALPHA, BETA, MINEFF, MAXP = 0.01, 0.05, 0.05, 12
MARGIN = -math.log(1 - MINEFF); SMALL = -math.log(1 - MINEFF / 2)

def boundaries(looks, spending, level):
    fr = tuple(n / looks[-1] for n in looks)
    return z_boundaries(level, fr, spending)

def run(spread, factor, effect, T, cap=14, conflict=0.2, looks=(3,6,9,12), spending='kim-demets', power=1.0, seed=0, inflate=1.0):
    rng = np.random.default_rng(seed)
    sl = spread / math.sqrt(2)
    delta = -math.log(1 - effect)
    b = rng.normal(0, sl, (T, MAXP)); h = rng.normal(-delta, sl, (T, MAXP))
    zw = boundaries(looks, spending, 2 * ALPHA); zn = boundaries(looks, spending, 2 * BETA)
    out = np.full(T, 'u', dtype='<U1'); at = np.full(T, MAXP)
    alive = np.ones(T, bool)
    s0 = spread * factor * inflate
    for k, n in enumerate(looks):
        bb, hh = b[:, :n], h[:, :n]
        ch = (hh - bb).mean(1)
        ss = ((bb - bb.mean(1, keepdims=True))**2).sum(1) + ((hh - hh.mean(1, keepdims=True))**2).sum(1)
        dof = 2 * (n - 1); var = 2 * ss / dof
        if factor is None:
            w = np.zeros(T); s0v = 0.0
        else:
            tail = stats.f.sf(var / s0**2, dof, cap)
            w = cap * np.minimum(1.0, (tail / conflict)) ** power
            s0v = s0**2
        pooled = (w * s0v + dof * var) / (w + dof)
        se = np.sqrt(pooled / n)
        tw = stats.t.isf(stats.norm.sf(zw[k]), w + dof) * se
        tn = stats.t.isf(stats.norm.sf(zn[k]), w + dof) * se
        reg = (ch + tw < 0) & (ch <= -SMALL)
        imp = (ch - tw > 0) & (ch >= SMALL)
        nor = (ch - tn > -MARGIN) & ~reg & ~imp
        dec = alive & (reg | imp | nor)
        out[dec & reg] = 'r'; out[dec & imp] = 'i'; out[dec & nor] = 'n'
        at[dec] = n
        alive &= ~dec
    return out, at

def figs(T=40000, **kw):
    o, a = run(0.03, 1.0, 0.10, T, **kw); det3 = ((o == 'r') & (a <= 3)).mean()
    o, a = run(0.05, 1.0, 0.10, T, **kw); det6 = ((o == 'r') & (a <= 6)).mean()
    o, a = run(0.05, 1.0, 0.05, T, **kw); det12 = (o == 'r').mean()
    fp = max((run(s, 1.0, 0.0, T, **kw)[0] == 'r').mean() for s in (0.03, 0.05))
    fps = max((run(s, 0.5, 0.0, T, **kw)[0] == 'r').mean() for s in (0.03, 0.05))
    fpl = max((run(s, 2.0, 0.0, T, **kw)[0] == 'r').mean() for s in (0.03, 0.05))
    return det3, det6, det12, fp, fps, fpl

if __name__ == '__main__':
    print('cap conflict power inflate | det3>=.95 det6>=.95 det12>=.80 fp<=.01 fp_small<=.02 fp_large<=.02')
    for cap, conflict, power, inflate in itertools.product(*[eval(a) for a in sys.argv[1:5]]):
        d = figs(cap=cap, conflict=conflict, power=power, inflate=inflate)
        ok = d[0]>=.95 and d[1]>=.95 and d[2]>=.8 and d[3]<=.01 and d[4]<=.02 and d[5]<=.02
        print(cap, conflict, power, inflate, '|', ' '.join(f'{x:.4f}' for x in d), 'OK' if ok else '', flush=True)
