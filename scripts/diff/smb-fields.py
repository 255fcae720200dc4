#!/usr/bin/env python3
"""Field-level diff of smb/dcerpc/krb5 EVE records, Suricata 7.0.10 vs shrike (debug build
in $CARGO_TARGET_DIR), per capture given on the command line; records matched by flow
endpoints and smb.id (dcerpc/krb5 by order). Output dirs under /tmp/smb1d."""
import json,sys,os,subprocess,collections
os.makedirs('/tmp/smb1d',exist_ok=True)
T=os.environ['CARGO_TARGET_DIR']+'/debug/shrike'
types=('smb','dcerpc','krb5')
def run(eng,pcap,out):
    os.makedirs(out,exist_ok=True)
    if os.path.exists(out+'/eve.json'): os.remove(out+'/eve.json')
    if eng=='s': cmd=['suricata','-c','/etc/suricata/suricata.yaml','-k','none','--runmode','single','-l',out,'-r',pcap]
    else: cmd=[T,'-c','/etc/suricata/suricata.yaml','-k','none','-l',out,'-r',pcap]
    subprocess.run(cmd,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,timeout=120)
    recs=collections.defaultdict(list)
    try:
        for l in open(out+'/eve.json'):
            r=json.loads(l)
            et=r.get('event_type')
            if et in types:
                e=sorted([(r.get('src_ip'),r.get('src_port')),(r.get('dest_ip'),r.get('dest_port'))])
                k=(et,e[0],e[1],r.get('proto'))
                recs[k].append(r[et])
    except FileNotFoundError: pass
    for k in recs:
        if k[0]=='smb': recs[k].sort(key=lambda x:x.get('id',0))
    return recs
def flat(d,p=''):
    o={}
    if isinstance(d,dict):
        for k,v in d.items(): o.update(flat(v,p+'.'+k))
    else: o[p]=json.dumps(d,sort_keys=True)
    return o
tot=collections.Counter()
for pcap in sys.argv[1:]:
    n=os.path.basename(pcap)
    a=run('s',pcap,'/tmp/smb1d/s'); b=run('b',pcap,'/tmp/smb1d/b')
    for k in sorted(set(a)|set(b),key=str):
        la,lb=a.get(k,[]),b.get(k,[])
        if len(la)!=len(lb): print(n,k[0],k[1:3],'COUNT',len(la),len(lb))
        if k[0]=='smb':
            ia={x.get('id'):x for x in la}; ib={x.get('id'):x for x in lb}
            la=[ia[i] for i in sorted(set(ia)&set(ib))]; lb=[ib[i] for i in sorted(set(ia)&set(ib))]
        for i,(x,y) in enumerate(zip(la,lb)):
            fx,fy=flat(x),flat(y)
            for f in sorted(set(fx)|set(fy)):
                if fx.get(f)!=fy.get(f):
                    tot[(k[0],f)]+=1
                    if tot[(k[0],f)]<=3: print(n,k[0],i,f,'S=',fx.get(f,'-')[:100],'B=',fy.get(f,'-')[:100])
print(tot.most_common(40))
