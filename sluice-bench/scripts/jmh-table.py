#!/usr/bin/env python3
"""Prints JMH JSON results (files given as arguments) as Markdown tables, ns/decision, with ratios to Bucket4j."""
import json, sys, collections

rows = collections.OrderedDict()
for path in sys.argv[1:]:
    try:
        results = json.load(open(path))
    except ValueError:
        print(f'(skipped {path}: not complete JSON)', file=sys.stderr)
        continue
    for r in results:
        p = r['params']
        bench = r['benchmark'].split('.')[-2]
        key = (bench, p['rule'], int(p['keys']), r['threads'])
        m = r['primaryMetric']
        rows.setdefault(key, {})[p['impl']] = (m['score'], m['scoreError'])

impls = ['baseline', 'sluice', 'sluice_token_bucket', 'bucket4j', 'bucket4j_synchronized', 'resilience4j', 'guava']
print('| rule | keys | threads | ' + ' | '.join(impls) + ' | sluice / bucket4j | sluice_token_bucket / bucket4j |')
print('|---|---:|---:|' + '---:|' * (len(impls) + 2))
for (bench, rule, keys, threads), by in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3])):
    cells = []
    for i in impls:
        if i in by:
            s, e = by[i]
            cells.append(f'{s:.1f} ± {e:.1f}' if e == e else f'{s:.1f}')
        else:
            cells.append('–')
    def ratio(a, b):
        return f'{by[a][0] / by[b][0]:.2f}' if a in by and b in by else '–'
    print(f'| {rule} | {keys:,} | {threads} | ' + ' | '.join(cells) +
          f' | {ratio("sluice", "bucket4j")} | {ratio("sluice_token_bucket", "bucket4j")} |')
