/*
 * report_assets.c — the HTML report's stylesheet and script, inline in every
 * page. The script only adds interaction: hover values (any element with a
 * data-tip attribute), sorting a table by a header click, picking the stage
 * whose memory timeline is shown. It loads nothing; the page's
 * Content-Security-Policy forbids any request.
 */
#include "configs/report.h"

const char pp__report_css[] =
    ":root{--ink:#1a1a1a;--mute:#555;--rule:#ddd}\n"
    "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;color:var(--ink);margin:0 auto;max-width:980px;"
    "padding:16px 20px;font-size:14px;line-height:1.4}\n"
    "h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:2px solid var(--ink)}"
    "h3{font-size:15px;margin:18px 0 6px}\n"
    ".meta{color:var(--mute);margin:2px 0 12px}code,pre{font-family:'DejaVu Sans Mono',monospace;font-size:12px}\n"
    "pre{background:#f6f6f6;padding:8px 10px;white-space:pre-wrap;border-left:3px solid var(--rule)}\n"
    "table{border-collapse:collapse;margin:6px 0 12px;font-size:12.5px}caption{text-align:left;font-weight:bold;"
    "padding:4px 0}\n"
    "th,td{border-bottom:1px solid var(--rule);padding:3px 8px;text-align:left;vertical-align:top}\n"
    "table.kv th{color:var(--mute);font-weight:normal;white-space:nowrap}.inputs{display:grid;"
    "grid-template-columns:1fr;gap:4px}\n"
    "table.plans td.n,table.plans th.n{text-align:right}table.plans tbody tr:hover{background:#f3f7fc}\n"
    "table.sortable th{cursor:pointer;user-select:none}table.sortable th.asc::after{content:' \\25B2'}"
    "table.sortable th.desc::after{content:' \\25BC'}\n"
    "figure{margin:10px 0 18px}figcaption{color:var(--mute);font-size:12px;margin-top:2px}\n"
    "svg.chart{width:100%;height:auto;display:block}svg.chart.alt{display:none}\n"
    ".picker{font-size:12px;margin:4px 0}.fits{color:#1a7f37}.nofit{color:#c00;font-weight:bold}\n"
    "#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #888;padding:4px 7px;font-size:11.5px;"
    "white-space:pre;box-shadow:1px 1px 4px rgba(0,0,0,.2);display:none;z-index:9}\n"
    "nav ul{margin:4px 0;padding-left:18px}nav li{margin:1px 0}\n"
    "@media print{@page{size:A4;margin:12mm}body{max-width:none;padding:0;font-size:10pt}"
    "nav,.picker,#tip{display:none!important}section.plan{break-before:page}figure,table{break-inside:avoid}"
    "h2{break-after:avoid}a{color:inherit;text-decoration:none}pre{white-space:pre-wrap}}\n";

const char pp__report_js[] =
    "(function(){\n"
    "'use strict';\n"
    "var tip=document.getElementById('tip');\n"
    "function timeline(r,e){var d=r._pts||(r._pts=JSON.parse(r.getAttribute('data-points')));\n"
    " var svg=r.ownerSVGElement,b=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal;\n"
    " var x=(e.clientX-b.left)*vb.width/b.width,i=0;\n"
    " for(var k=1;k<d.x.length;k++)if(Math.abs(d.x[k]-x)<Math.abs(d.x[i]-x))i=k;\n"
    " var p=d.p[i],s=p[0]+(p[1]>0?', micro-batch '+p[1]:'')+(p[2]>=0?', block '+p[2]:'')+\n"
    "  (p[3]>0?' ('+p[3]+' passes elided before)':'')+'\\ntotal '+p[4]+' GiB';\n"
    " for(var c=0;c<d.c.length;c++)if(p[5+c]>0)s+='\\n'+d.c[c]+' '+p[5+c];return s;}\n"
    "function show(e){var t=e.target.closest?e.target.closest('[data-tip],[data-points]'):null;\n"
    " if(!t){tip.style.display='none';return;}\n"
    " tip.textContent=t.hasAttribute('data-points')?timeline(t,e):t.getAttribute('data-tip');tip.style.display='block';\n"
    " var x=e.clientX+14,y=e.clientY+14;if(x+tip.offsetWidth>window.innerWidth)x=e.clientX-tip.offsetWidth-10;\n"
    " if(y+tip.offsetHeight>window.innerHeight)y=e.clientY-tip.offsetHeight-10;tip.style.left=x+'px';tip.style.top=y+'px';}\n"
    "document.addEventListener('mousemove',show);\n"
    "document.addEventListener('mouseleave',function(){tip.style.display='none';});\n"
    "function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent.trim();var n=Number(v);\n"
    " return v!==''&&!isNaN(n)?n:v;}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(tb){\n"
    " var ths=tb.tHead.rows[0].cells;\n"
    " Array.prototype.forEach.call(ths,function(th,col){th.addEventListener('click',function(){\n"
    "  var asc=!th.classList.contains('asc');Array.prototype.forEach.call(ths,function(h){h.classList.remove('asc','desc');});\n"
    "  th.classList.add(asc?'asc':'desc');var body=tb.tBodies[0],rows=Array.prototype.slice.call(body.rows);\n"
    "  rows.sort(function(a,b){var x=key(a.cells[col]),y=key(b.cells[col]);\n"
    "   var c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));return asc?c:-c;});\n"
    "  rows.forEach(function(r){body.appendChild(r);});});});});\n"
    "Array.prototype.forEach.call(document.querySelectorAll('select.stage-pick'),function(s){\n"
    " s.addEventListener('change',function(){var fig=document.getElementById(s.getAttribute('data-figure'));\n"
    "  Array.prototype.forEach.call(fig.querySelectorAll('svg.memory-timeline'),function(g){\n"
    "   g.classList.toggle('alt',g.getAttribute('data-stage')!==s.value);});});});\n"
    "})();\n";
