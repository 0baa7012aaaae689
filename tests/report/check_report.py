#!/usr/bin/python3
"""check_report.py PARPLAN OUTDIR — the HTML report (issue 15) in headless Chromium.

Four runs, each with --report and --format json in the same process:
  qlora    estimate: Mistral-7B QLoRA fine-tune on one RTX 4090
  pp8      plan: Llama-3-70B on 64 H100, pp 8, interleaved
  zero3    plan: Llama-3-70B on 1,024 H100 with ZeRO-3
  compare  compare: Llama-3-8B on three cluster types
For each page it asserts:
  - it loads with no console message of level error, no uncaught exception, and
    no request: the page's own requests (CDP Network domain) are the document
    only, and the browser's NetLog (--log-net-log) holds no request with an
    initiator; Chromium's own background requests (component updater, account
    check) carry none and are listed, not counted;
  - every expected chart is there with sane dimensions (rendered size, element
    counts, no NaN in the markup);
  - the numbers in the page equal those of --format json: the embedded JSON is
    the same document, and the drawn values (data-* attributes and the labels
    printed) are the JSON's;
  - a screenshot (OUTDIR/<case>.png) is not blank, and the page prints to an
    A4 PDF (OUTDIR/<case>.pdf).
Prints "N passed, N failed" and exits non-zero on any failure.
"""
import json
import os
import re
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

GIB = 1073741824.0

CASES = [
    ("qlora", ["estimate", "--model", "mistral-7b", "--cluster", "workstation-1x-4090", "--mode", "qlora",
               "--lora-rank", "16", "--recompute", "full", "--global-batch", "8"]),
    ("pp8", ["plan", "--model", "llama3-70b", "--cluster", "dgx-h100", "--nodes", "8", "--global-batch", "512",
             "--pp", "8", "--schedule", "interleaved", "--top", "3"]),
    ("zero3", ["plan", "--model", "llama3-70b", "--cluster", "dgx-h100", "--nodes", "128", "--global-batch", "2048",
               "--zero", "3", "--top", "3"]),
    ("compare", ["compare", "--model", "llama3-8b", "--clusters", "dgx-h100,dgx-a100-80g,dgx-b200", "--nodes", "4,8",
                 "--train-tokens", "1T"]),
]

failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)
    return cond


# ------------------------------------------------------------ numbers

def secs_text(s):
    """The label pp__fmt_secs prints: 3 significant digits and a unit."""
    units, k = ["s", "ms", "\u00b5s", "ns"], 0
    while s != 0 and abs(s) < 1 and k < 3:
        s, k = s * 1000, k + 1
    if s == 0:
        return "0 s"
    mag = int(__import__("math").floor(__import__("math").log10(abs(s))))
    dec = min(6, max(0, 2 - mag))
    t = "%.*f" % (dec, s)
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    return t + " " + units[k]


def same(a, b):
    """Equal to the JSON's precision: cJSON prints 15 significant digits when
    they read back within a few ulps, so the page's 17 may differ there."""
    a, b = float(a), float(b)
    return a == b or abs(a - b) <= 1e-13 * max(abs(a), abs(b))


def gib_text(b):
    return "%.2f" % (b / GIB)


# ------------------------------------------------------------ page probe

PROBE = r"""
(function(){
function box(e){var r=e.getBoundingClientRect();return [r.width,r.height];}
function attrs(e){var o={};for(var i=0;i<e.attributes.length;i++)o[e.attributes[i].name]=e.attributes[i].value;return o;}
var out={charts:[],sections:{},data:document.getElementById('parplan-data').textContent,
         version:(document.querySelector('.version')||{}).textContent,
         time:(document.querySelector('time')||{getAttribute:function(){return null}}).getAttribute('datetime'),
         html:document.documentElement.outerHTML.length, topk:[], options:[], pareto:[]};
document.querySelectorAll('svg.chart').forEach(function(s){
  var sec=s.closest('section'),c={cls:s.getAttribute('class'),id:s.id,section:sec?sec.id:null,size:box(s),a:attrs(s)};
  c.ops=s.querySelectorAll('rect.op').length; c.rows=s.querySelectorAll('g.stage-row').length;
  c.areas=s.querySelectorAll('path.area').length;
  var pk=s.querySelector('g.peak'); if(pk){c.peak=attrs(pk);c.peak_label=pk.querySelector('text').textContent;}
  var us=s.querySelector('g.usable'); if(us)c.usable=attrs(us);
  c.bars=[];s.querySelectorAll('g.bar').forEach(function(b){c.bars.push(attrs(b));});
  c.wf=[];s.querySelectorAll('g.wf-row').forEach(function(g){var a=attrs(g);a.label=g.querySelector('text.wf-value').textContent;c.wf.push(a);});
  var hid=s.querySelector('g.wf-hidden'); if(hid)c.hidden=attrs(hid);
  c.tail={};['dp-exposed','optimizer','offload'].forEach(function(k){var e=s.querySelector('rect.'+k);if(e)c.tail[k]=e.getAttribute('data-s');});
  var hv=s.querySelector('rect.hover-area'); if(hv)c.points=JSON.parse(hv.getAttribute('data-points')).p.length;
  out.charts.push(c);});
document.querySelectorAll('#topk tbody tr').forEach(function(r){out.topk.push(Array.prototype.map.call(r.cells,function(td){return td.getAttribute('data-v');}));});
document.querySelectorAll('#options tbody tr').forEach(function(r){out.options.push(r.getAttribute('data-option'));});
document.querySelectorAll('svg.pareto g.option').forEach(function(g){var a=g.closest('a');var o=attrs(g);o.href=a?a.getAttribute('href'):null;
  o.target=o.href?!!document.getElementById(o.href.slice(1)):false;out.pareto.push(o);});
document.querySelectorAll('section.plan').forEach(function(s){out.sections[s.id]=s.querySelector('.peak-gib')?s.querySelector('.peak-gib').getAttribute('data-v'):null;});
return JSON.stringify(out);})()
"""


INTERACT = r"""
(function(){
var out={};
var tb=document.getElementById('topk');
if(tb){var th=tb.tHead.rows[0].cells[1];th.click();
  var v=Array.prototype.map.call(tb.tBodies[0].rows,function(r){return parseFloat(r.cells[1].getAttribute('data-v'));});
  out.asc=v.every(function(x,i){return i==0||v[i-1]<=x;});th.click();
  v=Array.prototype.map.call(tb.tBodies[0].rows,function(r){return parseFloat(r.cells[1].getAttribute('data-v'));});
  out.desc=v.every(function(x,i){return i==0||v[i-1]>=x;});}
var sel=document.querySelector('select.stage-pick');
if(sel&&sel.options.length>1){sel.value=sel.options[1].value;sel.dispatchEvent(new Event('change'));
  var fig=document.getElementById(sel.getAttribute('data-figure'));
  var shown=Array.prototype.filter.call(fig.querySelectorAll('svg.memory-timeline'),function(g){return getComputedStyle(g).display!=='none';});
  out.picked=shown.length===1&&shown[0].getAttribute('data-stage')===sel.value;}
var hv=document.querySelector('rect.hover-area');
if(hv){hv.scrollIntoView();var r=hv.getBoundingClientRect();
  hv.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:r.left+r.width/2,clientY:r.top+r.height/2}));
  var tip=document.getElementById('tip');out.tip=getComputedStyle(tip).display==='block'&&/total [0-9.]+ GiB/.test(tip.textContent);}
return JSON.stringify(out);})()
"""


def png_stats(path):
    """Distinct colours (sampled) and the fraction of non-white pixels of an
    8-bit RGB/RGBA PNG, decoded with zlib (no imaging library)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big"), body[8], body[9]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4}[ctype]
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours, inked, seen = bytearray(stride), set(), 0, 0
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:
            for x in range(0, w, 4):
                px = bytes(line[x * bpp:x * bpp + 3])
                colours.add(px)
                seen += 1
                inked += px != b"\xff\xff\xff"
        prev = line
    return len(colours), inked / max(seen, 1)


# ------------------------------------------------------------ per case

def plans_of(case, doc):
    """(section id, plan JSON) pairs the page must draw."""
    if case == "compare":
        return [("opt-%d" % o["index"], o["plan"]) for o in doc["options"] if o["status"] == "ok"]
    if "plans" in doc:
        return [("plan-%d" % (i + 1), p) for i, p in enumerate(doc["plans"])]
    return [("plan-1", doc)]


def check_plan_charts(case, sec, plan, charts):
    mine = [c for c in charts if c["section"] == sec]
    kinds = {k: [c for c in mine if k in c["cls"].split()] for k in ("memory-timeline", "stage-bars", "schedule",
                                                                       "waterfall")}
    for k, v in kinds.items():
        check(len(v) >= 1, "%s %s: a %s chart" % (case, sec, k))
    mem, t, s = plan["memory"], plan["time"], plan["strategy"]
    peak_stage = mem["peak_stage"]
    # memory timeline of the peak stage: shown, its peak the JSON's total and phase
    tl = [c for c in kinds["memory-timeline"] if c["a"].get("data-stage") == str(peak_stage)]
    if check(len(tl) == 1, "%s %s: timeline of the peak stage %d" % (case, sec, peak_stage)):
        c, st = tl[0], mem["stages"][peak_stage]
        check("alt" not in c["cls"].split(), "%s %s: the peak stage's timeline is the one shown" % (case, sec))
        check(600 <= c["size"][0] <= 1400 and 200 <= c["size"][1] <= 700, "%s %s: timeline size %s" % (case, sec, c["size"]))
        check(same(c["peak"]["data-bytes"], st["total_bytes"]), "%s %s: timeline peak %s vs JSON %r" % (
            case, sec, c["peak"]["data-bytes"], st["total_bytes"]))
        check(c["peak"]["data-phase"] == st["peak_phase"], "%s %s: peak phase %s vs %s" % (
            case, sec, c["peak"]["data-phase"], st["peak_phase"]))
        check(("peak %s GiB" % gib_text(st["total_bytes"])) in c["peak_label"], "%s %s: peak label '%s'" % (
            case, sec, c["peak_label"]))
        check(same(c["usable"]["data-bytes"], mem["gpu_bytes"]), "%s %s: usable line" % (case, sec))
        check(c["areas"] >= 4 and c.get("points", 0) >= 5, "%s %s: %d areas, %s points" % (
            case, sec, c["areas"], c.get("points")))
    for c in kinds["memory-timeline"]:
        st = mem["stages"][int(c["a"]["data-stage"])]
        check(same(c["a"]["data-peak-bytes"], st["total_bytes"]), "%s %s: stage %s timeline peak" % (
            case, sec, c["a"]["data-stage"]))
    # one bar per stage at its peak, blocks under it
    for c in kinds["stage-bars"][:1]:
        check(len(c["bars"]) == s["pp"], "%s %s: %d bars for %d stages" % (case, sec, len(c["bars"]), s["pp"]))
        for bar in c["bars"]:
            i = int(bar["data-stage"])
            st = mem["stages"][i]
            check(same(bar["data-bytes"], st["total_bytes"]), "%s %s: stage %d bar" % (case, sec, i))
            check(bar["data-blocks"].startswith(str(st["last_layer"] - st["first_layer"] + 1 if st["first_layer"] >= 0 else 0)),
                  "%s %s: stage %d blocks %s" % (case, sec, i, bar["data-blocks"]))
        check(c["size"][0] >= 600 and c["size"][1] >= 200, "%s %s: bars size" % (case, sec))
    # schedule: rows, micro-batches, step and bubble as the JSON says
    for c in kinds["schedule"][:1]:
        a = c["a"]
        check(int(a["data-stages"]) == s["pp"] and c["rows"] == s["pp"], "%s %s: %d schedule rows" % (case, sec, c["rows"]))
        check(int(a["data-microbatches"]) == s["grad_accum"], "%s %s: schedule micro-batches" % (case, sec))
        check(same(a["data-step"], t["step_s"]) and same(a["data-bubble"], t["bubble_s"]),
              "%s %s: schedule step/bubble" % (case, sec))
        check(c["ops"] >= min(2 * s["grad_accum"], 2), "%s %s: %d operations drawn" % (case, sec, c["ops"]))
        check(c["size"][0] >= 600 and 150 <= c["size"][1] <= 1200, "%s %s: schedule size %s" % (case, sec, c["size"]))
        if s["zero"] < 3 and t["dp_comm_exposed_s"] > 0:
            check(same(c["tail"].get("dp-exposed", "nan"), t["dp_comm_exposed_s"]), "%s %s: DP exposed block" % (case, sec))
        if t["optimizer_s"] > 0:
            check(same(c["tail"].get("optimizer", "nan"), t["optimizer_s"]), "%s %s: optimizer block" % (case, sec))
    # waterfall: every term, its label, adding up to the step
    for c in kinds["waterfall"][:1]:
        rows = {r["data-key"]: r for r in c["wf"]}
        total = 0.0
        for key in ("compute_s", "recompute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_comm_s", "bubble_s",
                    "dp_comm_exposed_s", "optimizer_s", "offload_s", "step_s"):
            if not check(key in rows, "%s %s: waterfall row %s" % (case, sec, key)):
                continue
            v = float(rows[key]["data-s"])
            check(same(v, t[key]), "%s %s: waterfall %s %r vs JSON %r" % (case, sec, key, v, t[key]))
            check(rows[key]["label"].startswith(secs_text(t[key])), "%s %s: waterfall label '%s' vs %s" % (
                case, sec, rows[key]["label"], secs_text(t[key])))
            if key != "step_s":
                total += v
        check(abs(total - t["step_s"]) <= 1e-9 * t["step_s"], "%s %s: waterfall adds to %r, step %r" % (
            case, sec, total, t["step_s"]))
        hidden = t["dp_comm_s"] - t["dp_comm_exposed_s"]
        if hidden > 0:
            check("hidden" in c and same(c["hidden"]["data-s"], hidden), "%s %s: hidden DP part" % (case, sec))


def run_case(parplan, outdir, browser, case, args):
    html = os.path.join(outdir, case + ".html")
    if os.path.exists(html):
        os.unlink(html)
    env = dict(os.environ, SOURCE_DATE_EPOCH="1700000000")
    r = subprocess.run([parplan] + args + ["--format", "json", "--report", html], capture_output=True, text=True,
                       env=env, timeout=600)
    if not check(r.returncode == 0, "%s: parplan exit %d: %s" % (case, r.returncode, r.stderr.strip()[-300:])):
        return
    doc = json.loads(r.stdout)
    size = os.path.getsize(html)
    check(1000 < size < 4 << 20, "%s: report size %d bytes" % (case, size))
    text = open(html, encoding="utf-8").read()
    markup = re.sub(r"<script.*?</script>", "", text, flags=re.S)
    check(not re.search(r'="[^"]*\b(nan|inf|NaN|Infinity)\b', markup), "%s: no NaN/inf in the markup" % case)
    check(not re.search(r'\b(src|href)\s*=\s*"(https?:|//)', text), "%s: no external reference" % case)
    url = "file://" + os.path.abspath(html)
    before = len(browser.events)
    browser.load(url)
    browser.drain(0.4)
    events = browser.events[before:]
    requests = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    check(requests == [url], "%s: the page's requests %s" % (case, requests))
    errors = [e for e in events if (e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
              or e["method"] == "Runtime.exceptionThrown"
              or (e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    check(not errors, "%s: console errors %s" % (case, json.dumps(errors)[:500]))
    page = json.loads(browser.eval(PROBE))
    data = json.loads(page["data"])
    check(page["version"] and re.match(r"^\d+\.\d+\.\d+$", page["version"]), "%s: version in the header" % case)
    check(page["time"] == "1700000000", "%s: date from SOURCE_DATE_EPOCH (%s)" % (case, page["time"]))
    # the embedded JSON is the --format json output
    if case == "compare":
        check(data["compare"] == doc, "%s: embedded JSON differs from --format json" % case)
    elif args[0] == "plan":
        check(data["plans"] == doc["plans"], "%s: embedded plans differ from --format json" % case)
        check(len(page["topk"]) == len(doc["plans"]), "%s: top-K rows" % case)
        for i, row in enumerate(page["topk"]):
            p = doc["plans"][i]
            check(same(row[1], p["throughput"]["tokens_per_s"]) and same(row[4], p["memory"]["peak_bytes"]),
                  "%s: top-K row %d numbers" % (case, i + 1))
    else:
        check(data["plans"][0] == doc, "%s: embedded plan differs from --format json" % case)
    for sec, plan in plans_of(case, doc):
        check(sec in page["sections"], "%s: section %s" % (case, sec))
        check(page["sections"].get(sec) is not None and same(page["sections"][sec], plan["memory"]["peak_bytes"]),
              "%s %s: summary peak" % (case, sec))
        check_plan_charts(case, sec, plan, page["charts"])
    if case == "compare":
        pareto = [c for c in page["charts"] if "pareto" in c["cls"].split()]
        check(len(pareto) == 1 and pareto[0]["size"][0] >= 600, "%s: the Pareto chart" % case)
        plotted = [o for o in doc["options"] if o["status"] == "ok" and o["cost_usd"] is not None]
        check(len(page["pareto"]) == len(plotted) > 0, "%s: %d points for %d options" % (case, len(page["pareto"]),
                                                                                         len(plotted)))
        for pt in page["pareto"]:
            o = doc["options"][int(pt["data-option"])]
            check(same(pt["data-days"], o["days"]) and same(pt["data-cost"], o["cost_usd"]),
                  "%s: point %s numbers" % (case, pt["data-option"]))
            check(pt["href"] == "#opt-%s" % pt["data-option"] and pt["target"], "%s: point %s links to its charts" % (
                case, pt["data-option"]))
    for c in page["charts"]:
        if "alt" in c["cls"].split():
            continue
        check(c["size"][0] > 300 and c["size"][1] > 100, "%s: chart %s rendered %s" % (case, c["id"], c["size"]))
    act = json.loads(browser.eval(INTERACT))
    check(act.get("tip") is True, "%s: hovering the timeline shows its values (%s)" % (case, act))
    if "asc" in act:
        check(act["asc"] and act["desc"], "%s: the top-K table sorts both ways (%s)" % (case, act))
    if "picked" in act:
        check(act["picked"], "%s: the stage picker shows the stage picked" % case)
    browser.eval("window.scrollTo(0,0)")
    png = os.path.join(outdir, case + ".png")
    browser.screenshot(png)
    colours, inked = png_stats(png)
    check(colours >= 20 and inked >= 0.05, "%s: screenshot %d colours, %.1f%% inked" % (case, colours, 100 * inked))
    pdf = os.path.join(outdir, case + ".pdf")
    browser.pdf(pdf)
    pages = open(pdf, "rb").read().count(b"/Type /Page\n") + open(pdf, "rb").read().count(b"/Type /Page>")
    check(os.path.getsize(pdf) > 10000, "%s: A4 PDF of %d bytes" % (case, os.path.getsize(pdf)))
    print("%s: %d bytes, %d charts, screenshot %d colours %.0f%% inked, PDF %d bytes" % (
        case, size, len(page["charts"]), colours, 100 * inked, os.path.getsize(pdf)), flush=True)
    del pages


def main():
    parplan, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    browser = cdp.Browser()
    try:
        for case, args in CASES:
            run_case(parplan, outdir, browser, case, args)
    finally:
        browser.close()
    urls = browser.netlog_urls()
    check(urls is not None, "the NetLog could be read")
    initiated = browser.netlog_page_requests()
    check(not initiated, "requests with an initiator in the NetLog: %s" % initiated)
    background = sorted(set(u.split("?")[0] for u in urls or [] if u.split(":")[0] in ("http", "https", "ws", "wss")))
    if background:
        print("Chromium's own background requests (no initiator, not the pages'): " + ", ".join(background))
    browser.cleanup()
    print("%d passed, %d failed" % (checks - len(failures), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
