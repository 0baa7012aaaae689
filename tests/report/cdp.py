"""cdp.py — drive headless Chromium over the Chrome DevTools Protocol.

Used by tests/report/check_report.py and bench/report_bench.py. Needs Debian's
`chromium` and `python3-websocket` (the Makefile's REPORT_PKGS installs them).

Chromium runs with a fresh --user-data-dir and the flags that keep it off the
network (--disable-background-networking, --disable-component-update,
--disable-sync, --disable-quic, --no-first-run) and writes a NetLog of every
request the browser makes (--log-net-log), so a test can prove that a page
asked for nothing: the page's own requests come from the Network domain, the
browser's from the NetLog.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import websocket  # Debian python3-websocket

FLAGS = ["--headless", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
         "--hide-scrollbars", "--mute-audio", "--no-default-browser-check", "--no-pings",
         "--disable-client-side-phishing-detection", "--disable-domain-reliability", "--disable-breakpad",
         "--metrics-recording-only", "--disable-field-trial-config", "--disable-background-timer-throttling",
         "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter,"
         "AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
         "--allow-pre-commit-input", "--disable-signin-promo"]


def chromium_path():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    raise SystemExit("chromium not found: install the Debian package 'chromium' (make test installs it)")


class Browser:
    """One headless Chromium with a fresh profile; a page target over CDP."""

    def __init__(self, width=1000, height=1400):
        self.dir = tempfile.mkdtemp(prefix="parplan-chromium-")
        self.netlog = os.path.join(self.dir, "netlog.json")
        args = [chromium_path()] + FLAGS + [
            "--user-data-dir=" + os.path.join(self.dir, "profile"), "--remote-debugging-port=0",
            "--log-net-log=" + self.netlog, "--net-log-capture-mode=Default",
            "--window-size=%d,%d" % (width, height), "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # root cannot use the setuid sandbox
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        port = self._port()
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("chromium: no page target")
            time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")

    def _port(self):
        path = os.path.join(self.dir, "profile", "DevToolsActivePort")
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited with %s" % self.proc.returncode)
            try:
                with open(path) as f:
                    return int(f.readline())
            except (OSError, ValueError):
                time.sleep(0.1)
        raise RuntimeError("chromium: DevToolsActivePort not written")

    def call(self, method, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mine:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        while time.time() < deadline:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                if msg["method"] == method:
                    return msg
                self.events.append(msg)
        raise RuntimeError("timed out waiting for " + method)

    def drain(self, seconds):
        """Collects events for a while (late requests, console messages)."""
        self.ws.settimeout(0.05)
        end = time.time() + seconds
        while time.time() < end:
            try:
                msg = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                continue
            if "method" in msg:
                self.events.append(msg)
        self.ws.settimeout(60)

    def load(self, url, timeout=60):
        """Navigates and waits for the load event; returns ms to the first
        frame painted after it (performance.now(), from navigation start)."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout)
        return self.eval("new Promise(function(r){requestAnimationFrame(function(){requestAnimationFrame("
                         "function(){r(performance.now());});});})", await_promise=True)

    def eval(self, expr, await_promise=False):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=await_promise)
        if "exceptionDetails" in r:
            raise RuntimeError("page script failed: %s" % r["exceptionDetails"])
        return r["result"].get("value")

    def screenshot(self, path, width=1000, height=1400):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        import base64
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def pdf(self, path):
        import base64
        data = self.call("Page.printToPDF", paperWidth=8.27, paperHeight=11.69, marginTop=0.47, marginBottom=0.47,
                         marginLeft=0.47, marginRight=0.47, printBackground=True, preferCSSPageSize=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        # A clean shutdown first: the browser then finishes its NetLog (under
        # load a SIGTERM could cut it before the events were written)
        try:
            self.ws.send(json.dumps({"id": self.next_id + 1, "method": "Browser.close", "params": {}}))
            self.proc.wait(timeout=20)
        except Exception:
            pass
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        except Exception:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except Exception:
                pass

    def _netlog(self):
        try:
            with open(self.netlog) as f:
                text = f.read()
        except OSError:
            return None
        try:
            return json.loads(text)
        except ValueError:
            pass
        # An unfinished log (the browser killed while writing, under load) is
        # closed by hand after its last whole event: one event per line.
        lines = text.rstrip().split("\n")
        for _ in range(64):
            if not lines:
                break
            try:
                return json.loads("\n".join(lines).rstrip().rstrip(",") + "]}")
            except ValueError:
                lines.pop()
        return None

    def netlog_urls(self):
        """URLs of every request in the NetLog (read after close); None if unreadable."""
        log = self._netlog()
        if log is None:
            return None
        return [ev["params"]["url"] for ev in log.get("events", []) if "url" in (ev.get("params") or {})]

    def netlog_page_requests(self):
        """(url, initiator) of the requests a page or a frame started: every
        URL request job whose initiator is an origin. Chromium's own
        background requests have the initiator "not an origin"."""
        log = self._netlog()
        if log is None:
            return None
        start = log["constants"]["logEventTypes"].get("URL_REQUEST_START_JOB")
        out = []
        for ev in log.get("events", []):
            p = ev.get("params") or {}
            if ev.get("type") == start and p.get("initiator", "not an origin") != "not an origin":
                out.append((p.get("url"), p.get("initiator")))
        return out

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
