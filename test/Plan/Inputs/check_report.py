#!/usr/bin/env python3
"""Opens a plan report in headless Chromium and checks that it renders.

Drives the browser over the DevTools protocol (``--remote-debugging-pipe``)
and fails (exit 1, one line per problem) on:

- an uncaught JavaScript exception or a console error;
- a request for anything but the report itself (the report must be
  self-contained: it opens from disk with no network);
- a figure (``svg[data-figure]``) with no drawn content, or the page not
  reaching the end of its script (``body[data-rendered]``).

Otherwise prints what it found (figures with their element counts, table
rows, headline cards, the entries of each figure's legend), for FileCheck.
``--screenshot FILE`` also writes a full-page PNG.

    check_report.py report.html [--screenshot out.png] [--width 1240]
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_report.py: no chromium on PATH (Debian package 'chromium'; scripts/setup.sh installs it)")


class DevTools:
    """A browser over --remote-debugging-pipe: NUL-terminated JSON messages,
    commands written to the browser's fd 3, replies and events read from its
    fd 4."""

    def __init__(self, chromium: str, profile: str, width: int, height: int) -> None:
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Move the child's ends out of the way of 3 and 4 before dup2.
        child_read = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_write = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def attach_pipes() -> None:
            os.dup2(child_read, 3)
            os.dup2(child_write, 4)

        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            preexec_fn=attach_pipes, close_fds=False)
        os.close(child_read)
        os.close(child_write)
        self.writer = os.fdopen(to_browser_w, "wb", buffering=0)
        self.reader = os.fdopen(from_browser_r, "rb", buffering=0)
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("the browser did not answer in time")
            chunk = self.reader.read(65536)
            if not chunk:
                self.log.seek(0)
                tail = self.log.read().decode(errors="replace")[-2000:]
                raise RuntimeError("the browser closed its DevTools pipe:\n" + tail)
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 60) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.writer.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


PROBE = """(() => {
  const figures = Array.from(document.querySelectorAll('svg[data-figure]')).map((svg) => ({
    name: svg.dataset.figure,
    elements: svg.querySelectorAll('*').length,
    width: svg.getBoundingClientRect().width,
    height: svg.getBoundingClientRect().height,
  }));
  const tables = Array.from(document.querySelectorAll('table[id]')).map((table) => ({
    name: table.id, rows: table.querySelectorAll('tbody tr').length,
  }));
  const legends = Array.from(document.querySelectorAll('[id$="-legend"]')).map((box) => ({
    name: box.id.replace(/-legend$/, ''), entries: Array.from(box.querySelectorAll('.legend > *'))
      .map((e) => e.textContent.trim()).filter((text) => text.length > 0),
  }));
  return JSON.stringify({
    rendered: document.body.getAttribute('data-rendered'),
    title: document.title,
    cards: Array.from(document.querySelectorAll('#headline .card .label')).map((e) => e.textContent),
    figures, tables, legends,
    height: Math.ceil(document.documentElement.scrollHeight),
  });
})()"""


def describe_exception(params: dict) -> str:
    details = params.get("exceptionDetails", {})
    exception = details.get("exception", {})
    text = exception.get("description") or details.get("text", "exception")
    return f"uncaught exception: {text.splitlines()[0]} (line {details.get('lineNumber', '?')})"


def check(path: str, screenshot: str | None, width: int) -> int:
    url = "file://" + os.path.abspath(path)
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as profile:
        browser = DevTools(find_chromium(), profile, width, 900)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})
            session = browser.send("Target.attachToTarget",
                                   {"targetId": target["targetId"], "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.send(domain + ".enable", session=session)
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                         session=session)
            browser.send("Page.navigate", {"url": url}, session=session)
            browser.wait_for("Page.loadEventFired")
            result = browser.send("Runtime.evaluate", {"expression": PROBE, "returnByValue": True},
                                  session=session)
            page = json.loads(result["result"]["value"])

            for event in browser.events:
                method, params = event.get("method"), event.get("params", {})
                if method == "Runtime.exceptionThrown":
                    problems.append(describe_exception(params))
                elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                    args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                    problems.append("console error: " + args)
                elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                    problems.append("browser error: " + params["entry"].get("text", ""))
                elif method == "Network.requestWillBeSent":
                    requested = params.get("request", {}).get("url", "")
                    if requested != url and not requested.startswith(("data:", "blob:", "about:")):
                        problems.append("fetches " + requested + " (the report must be self-contained)")

            if page["rendered"] != "yes":
                problems.append("the page's script did not finish drawing (body[data-rendered] unset)")
            if not page["figures"]:
                problems.append("no figures (svg[data-figure]) in the page")
            for figure in page["figures"]:
                if figure["elements"] == 0 or figure["width"] == 0 or figure["height"] == 0:
                    problems.append(f"figure {figure['name']} is empty")

            if screenshot and not problems:
                height = min(page["height"], 16000)
                browser.send("Emulation.setDeviceMetricsOverride",
                             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                             session=session)
                shot = browser.send("Page.captureScreenshot",
                                    {"format": "png", "captureBeyondViewport": True}, session=session)
                with open(screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
        finally:
            browser.close()

    if problems:
        for problem in problems:
            print(f"{path}: {problem}", file=sys.stderr)
        return 1
    print("title", page["title"])
    print("cards", ", ".join(page["cards"]))
    for figure in page["figures"]:
        print(f"figure {figure['name']} elements {figure['elements']}")
    for table in page["tables"]:
        print(f"table {table['name']} rows {table['rows']}")
    for legend in page["legends"]:
        print(f"legend {legend['name']}: " + ", ".join(legend["entries"]))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--screenshot", help="write a full-page PNG here")
    parser.add_argument("--width", type=int, default=1240)
    args = parser.parse_args()
    return check(args.report, args.screenshot, args.width)


if __name__ == "__main__":
    sys.exit(main())
