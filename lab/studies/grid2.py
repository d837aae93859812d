from prior_grid import figs
import itertools
for looks, sp, cap, conflict in itertools.product([(3,6,9,12),(3,6,12)], ['kim-demets','pocock'], [14,20], [0.2,0.3,0.4]):
    d = figs(T=30000, looks=looks, spending=sp, cap=cap, conflict=conflict)
    ok = d[0]>=.95 and d[1]>=.95 and d[2]>=.8 and d[3]<=.01 and d[4]<=.018
    print(looks, sp, cap, conflict, '|', ' '.join(f'{x:.4f}' for x in d), 'OK' if ok else '', flush=True)
