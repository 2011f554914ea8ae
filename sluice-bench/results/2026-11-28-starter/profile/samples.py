import re,collections,sys
txt=open(sys.argv[1]).read()
events=txt.split('jdk.ExecutionSample')
top=collections.Counter(); incl=collections.Counter(); n=0
for e in events:
    frames=re.findall(r'^\s+([\w.$<>]+)\(.*?line:',e,re.M)
    if not frames: continue
    n+=1
    top[frames[0]]+=1
    seen=set()
    for f in frames:
        if f not in seen:
            incl[f]+=1; seen.add(f)
print('samples',n)
for f,c in top.most_common(30): print('self %5.1f%% %s'%(100*c/n,f))
print()
for f,c in incl.most_common(400):
    if 'sluice' in f.lower() or 'Filter' in f: print('incl %5.1f%% %s'%(100*c/n,f))
