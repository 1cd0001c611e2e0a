"""A small driver for headless Chromium over the Chrome DevTools Protocol (for test_web_page): start the
browser, open a page, evaluate JavaScript, type, click with the mouse, take a screenshot.

Chromium is started with --remote-debugging-port=0 and writes the port it chose to DevToolsActivePort
in its profile folder; the page's target is found at /json/list and driven over its WebSocket."""
import base64
import itertools
import json
import os
import shutil
import subprocess
import time
import urllib.request

import websocket

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium():
    """The path of a Chromium-family browser, or None."""
    for name in BINARIES:
        path = shutil.which(name)
        if path:
            return path
    return None


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, binary, profile_dir, width=1200, height=800, start_timeout=60):
        self.profile_dir = str(profile_dir)
        os.makedirs(self.profile_dir, exist_ok=True)
        self.log_path = os.path.join(self.profile_dir, "chromium.log")
        args = [binary, "--headless=new", "--remote-debugging-port=0", f"--user-data-dir={self.profile_dir}",
                "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions", "--no-first-run",
                "--no-default-browser-check", "--mute-audio", "--hide-scrollbars", f"--window-size={width},{height}",
                "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self._ids = itertools.count(1)
        self.ws = None
        try:
            self.ws = websocket.create_connection(self._page_socket_url(start_timeout), timeout=60, suppress_origin=True)
            self.call("Page.enable")
            self.call("Runtime.enable")
            # The viewport exactly (--window-size counts the headless window's frame too).
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    def log(self, tail=3000):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-tail:]

    def _page_socket_url(self, timeout):
        port_file = os.path.join(self.profile_dir, "DevToolsActivePort")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CdpError(f"chromium exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with open(port_file) as f:
                    port = int(f.readline().strip())
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    return pages[0]["webSocketDebuggerUrl"]
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        raise CdpError(f"chromium's DevTools endpoint did not come up within {timeout} s:\n{self.log()}")

    def call(self, method, **params):
        """Sends one command and returns its result; events that arrive meanwhile are dropped."""
        msg_id = next(self._ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise CdpError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise CdpError(f"{expression!r} threw: {details.get('exception', {}).get('description') or details.get('text')}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=30.0, interval=0.05):
        """Polls until the expression is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CdpError(f"timed out after {timeout} s waiting for {expression!r}")
            time.sleep(interval)

    def navigate(self, url, timeout=30.0):
        self.call("Page.navigate", url=url)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'", timeout)

    def type_text(self, selector, text):
        """Focuses the element and types the text as keyboard input would insert it."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def click(self, selector):
        """A left mouse click at the centre of the element."""
        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                            f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        x, y = box
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def close(self):
        if self.ws is not None:
            try:
                self.ws.close()
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
