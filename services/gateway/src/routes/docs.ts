import type { HttpApp } from '@support-desk/platform';
import { buildOpenApi } from './openapi.js';

/**
 * A self-contained page (no CDN: the docs must work offline) that fetches /openapi.json and
 * renders every operation with its scope, bucket, parameters, body and responses.
 */
const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Support Desk API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:1rem 2rem}main{max-width:70rem;margin:auto;padding:1rem 2rem}
details{background:#fff;border:1px solid #dde1e7;border-radius:6px;margin:.4rem 0}
summary{cursor:pointer;padding:.5rem .8rem;font-family:ui-monospace,monospace}
.m{display:inline-block;width:4.5rem;font-weight:700}.GET{color:#1565c0}.POST{color:#2e7d32}
.PATCH{color:#ef6c00}.DELETE{color:#c62828}.tag{font:12px system-ui;background:#eef;border-radius:3px;padding:0 .4rem;margin-left:.5rem}
.body{padding:0 1rem 1rem}pre{background:#f0f2f5;padding:.6rem;overflow:auto;font-size:12px;border-radius:4px}
h2{margin-top:2rem;text-transform:capitalize}table{border-collapse:collapse}td,th{border:1px solid #dde1e7;padding:.2rem .5rem;text-align:left}
</style></head><body><header><h1 id="title">Support Desk API</h1><div id="desc"></div></header>
<main id="ops">Loading <a href="/openapi.json">/openapi.json</a>…</main>
<script>
const esc=(s)=>String(s).replace(/[&<>"]/g,(c)=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const json=(v)=>'<pre>'+esc(JSON.stringify(v,null,2))+'</pre>';
fetch('/openapi.json').then((r)=>r.json()).then((doc)=>{
  document.getElementById('title').textContent=doc.info.title+' '+doc.info.version;
  document.getElementById('desc').textContent=doc.info.description;
  const groups={};
  for(const [path,item] of Object.entries(doc.paths))for(const [method,op] of Object.entries(item)){
    const tag=(op.tags&&op.tags[0])||'other';(groups[tag]=groups[tag]||[]).push({path,method:method.toUpperCase(),op});}
  let html='<p>Download the document: <a href="/openapi.json">/openapi.json</a> (OpenAPI '+esc(doc.openapi)+').</p>';
  for(const [tag,ops] of Object.entries(groups)){
    html+='<h2>'+esc(tag)+'</h2>';
    for(const {path,method,op} of ops){
      const scope=op['x-required-scope']?'<span class="tag">scope: '+esc(op['x-required-scope'])+'</span>':'<span class="tag">no API authentication</span>';
      const bucket=op['x-rate-limit-bucket']?'<span class="tag">bucket: '+esc(op['x-rate-limit-bucket'])+'</span>':'';
      html+='<details><summary><span class="m '+method+'">'+method+'</span>'+esc(path)+' — '+esc(op.summary||'')+scope+bucket+'</summary><div class="body">';
      if(op.description)html+='<p>'+esc(op.description)+'</p>';
      if(op.parameters&&op.parameters.length){html+='<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>';
        for(const p of op.parameters)html+='<tr><td>'+esc(p.name)+'</td><td>'+esc(p.in)+'</td><td>'+(p.required?'yes':'no')+'</td><td><code>'+esc(JSON.stringify(p.schema))+'</code>'+(p.description?' '+esc(p.description):'')+'</td></tr>';
        html+='</table>';}
      if(op.requestBody){html+='<h4>Body</h4>';for(const [type,c] of Object.entries(op.requestBody.content))html+='<div>'+esc(type)+'</div>'+json(c.schema);}
      html+='<h4>Responses</h4>';
      for(const [code,r] of Object.entries(op.responses)){
        const res=r.$ref?doc.components.responses[r.$ref.split('/').pop()]:r;
        html+='<div><b>'+esc(code)+'</b> '+esc(res.description||'')+'</div>';
        if(!r.$ref&&res.content)for(const [type,c] of Object.entries(res.content))html+='<div>'+esc(type)+'</div>'+json(c.schema);}
      html+='</div></details>';}}
  html+='<h2>Error envelope</h2>'+json(doc.components.schemas.ErrorEnvelope);
  document.getElementById('ops').innerHTML=html;
}).catch((e)=>{document.getElementById('ops').textContent='Could not load /openapi.json: '+e;});
</script></body></html>`;

/** `/openapi.json` and `/docs`, public. The document is built once, at start. */
export function registerDocs(app: HttpApp, { serverUrl }: { serverUrl: string }): void {
  let document: string | undefined;
  app.get('/openapi.json', async (_request, reply) => {
    document ??= JSON.stringify(buildOpenApi({ serverUrl }));
    return reply.type('application/json; charset=utf-8').send(document);
  });
  app.get('/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(DOCS_HTML));
}
