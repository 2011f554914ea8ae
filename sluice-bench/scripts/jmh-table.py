#!/usr/bin/env python3
"""Prints JMH JSON results (files given as arguments) as Markdown tables: for each configuration the
median of its measured iterations in ns/decision (the smallest and largest iteration after it), and
the ratios of Sluice's medians to Bucket4j's. Medians, because the machine is shared: a neighbour's
build inflates some iterations, and the median ignores a minority of them."""
import json, sys, statistics, collections

rows = collections.OrderedDict()
for path in sys.argv[1:]:
    try:
        results = json.load(open(path))
    except ValueError:
        print(f'(skipped {path}: not complete JSON)', file=sys.stderr)
        continue
    for r in results:
        p = r['params']
        key = (p['rule'], int(p['keys']), r['threads'])
        it = [x for fork in r['primaryMetric']['rawData'] for x in fork]
        rows.setdefault(key, {})[p['impl']] = (statistics.median(it), min(it), max(it))

impls = ['baseline', 'sluice', 'sluice_token_bucket', 'bucket4j', 'bucket4j_synchronized', 'resilience4j', 'guava']
present = [i for i in impls if any(i in by for by in rows.values())]
print('| rule | keys | threads | ' + ' | '.join(present) + ' | sluice ÷ bucket4j | sluice_token_bucket ÷ bucket4j |')
print('|---|---:|---:|' + '---:|' * (len(present) + 2))
for (rule, keys, threads), by in sorted(rows.items(), key=lambda kv: kv[0]):
    cells = []
    for i in present:
        if i in by:
            m, lo, hi = by[i]
            cells.append(f'**{m:.1f}** ({lo:.0f}–{hi:.0f})')
        else:
            cells.append('–')
    def ratio(a, b):
        return f'{by[a][0] / by[b][0]:.2f}' if a in by and b in by else '–'
    print(f'| {rule} | {keys:,} | {threads} | ' + ' | '.join(cells) +
          f' | {ratio("sluice", "bucket4j")} | {ratio("sluice_token_bucket", "bucket4j")} |')
