#!/usr/bin/env python3
"""Drives headless Chromium through chromedriver over the W3C WebDriver HTTP protocol (standard library only) to
check Verity's hosted instant-link page: open the link from the SMS at phone width, confirm, and see the done page.

Used by Tests/browser/instant_link.sh, which starts the server, chromedriver and the possession flow. Prints an
`ok - …` line per check and exits non-zero, with the reason on stderr, at the first check that fails.
"""

import argparse
import base64
import json
import os
import struct
import sys
import time
import urllib.error
import urllib.request

# The key W3C WebDriver uses for a web element reference.
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class CheckFailed(Exception):
    pass


class WebDriverError(Exception):
    pass


class WebDriver:
    """A minimal W3C WebDriver client: one session, the handful of commands this check needs."""

    def __init__(self, url, timeout=60):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = None

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.load(response)
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                value = json.loads(text)["value"]
                text = f"{value.get('error')}: {value.get('message', '').splitlines()[0] if value.get('message') else ''}"
            except (ValueError, KeyError, TypeError, AttributeError):
                pass
            raise WebDriverError(f"{method} {path} answered {error.code}: {text}") from None
        return payload.get("value")

    def _session(self, method, path="", body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def start_headless(self, chromium=None, width=1280, height=900, lang="en", extra_args=(), prefs=None):
        """Starts headless Chromium (the binary `chromium`, or chromedriver's default) at `width` x `height` in
        `lang`, with the page-load and script timeouts every check uses; returns the capabilities granted."""
        options = {
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},{height}",
                "--disable-dev-shm-usage", f"--lang={lang}", *extra_args,
            ],
        }
        if prefs:
            options["prefs"] = prefs
        if chromium:
            options["binary"] = chromium
        granted = self.start({"browserName": "chrome", "pageLoadStrategy": "normal", "goog:chromeOptions": options})
        self.set_timeouts(pageLoad=30000, script=10000, implicit=0)
        self.set_window_rect(width, height)
        return granted

    def start(self, capabilities):
        value = self._call("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
        self.session = value["sessionId"]
        return value["capabilities"]

    def quit(self):
        """Ends the session (and closes the browser); a failure here is reported, not raised."""
        if self.session:
            try:
                self._session("DELETE")
            except (WebDriverError, OSError) as error:
                print(f"warning: could not end the WebDriver session: {error}", file=sys.stderr)
            self.session = None

    def set_timeouts(self, **timeouts):
        self._session("POST", "/timeouts", timeouts)

    def set_window_rect(self, width, height):
        return self._session("POST", "/window/rect", {"width": width, "height": height})

    def get(self, url):
        self._session("POST", "/url", {"url": url})

    def title(self):
        return self._session("GET", "/title")

    def current_url(self):
        return self._session("GET", "/url")

    def execute(self, script, *args):
        return self._session("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        return self._session("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def find_all(self, css):
        return [e[ELEMENT] for e in self._session("POST", "/elements", {"using": "css selector", "value": css})]

    def text(self, element):
        return self._session("GET", f"/element/{element}/text")

    def attribute(self, element, name):
        return self._session("GET", f"/element/{element}/attribute/{name}")

    def displayed(self, element):
        return self._session("GET", f"/element/{element}/displayed")

    def rect(self, element):
        return self._session("GET", f"/element/{element}/rect")

    def click(self, element):
        self._session("POST", f"/element/{element}/click", {})

    def screenshot(self):
        return base64.b64decode(self._session("GET", "/screenshot"))


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def ok(message):
    print(f"ok - {message}", flush=True)


def png_size(data):
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    return struct.unpack(">II", data[16:24])


def wait_for(what, probe, timeout=10.0):
    """Polls `probe` until it returns something truthy; the last WebDriver error or falsy value fails the check."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = probe()
            if value:
                return value
            last = value
        except WebDriverError as error:
            last = error
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out waiting for {what} (last: {last})")
        time.sleep(0.1)


def fits_phone_width(driver, element=None):
    """The page does not scroll sideways, and `element` (if given) lies within the viewport's width."""
    widths = driver.execute(
        "return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,"
        " client: document.documentElement.clientWidth};")
    check(widths["scroll"] <= widths["inner"],
          f"the page scrolls horizontally: scrollWidth {widths['scroll']} > innerWidth {widths['inner']}")
    if element is not None:
        rect = driver.rect(element)
        check(rect["x"] >= 0 and rect["x"] + rect["width"] <= widths["inner"],
              f"element at x={rect['x']} width={rect['width']} does not fit innerWidth {widths['inner']}")
    return widths


def save_screenshot(driver, directory, name, expected_width):
    data = driver.screenshot()
    width, height = png_size(data)
    check(width == expected_width, f"screenshot {name} is {width}px wide, expected the viewport's {expected_width}px")
    path = os.path.join(directory, name)
    with open(path, "wb") as file:
        file.write(data)
    return path, width, height


def run(args):
    driver = WebDriver(args.driver)
    # Headless Chromium ignores --lang for the Accept-Language header; a page that names no flow (a used link) is
    # localised from that header, so set it the way the browser's language setting does.
    granted = driver.start_headless(
        args.chromium, args.width, args.height, args.lang, extra_args=[f"--accept-lang={args.lang}"],
        prefs={"intl.accept_languages": args.lang})
    try:
        ok(f"headless {granted.get('browserName')} {granted.get('browserVersion')} session at "
           f"{args.width}x{args.height} ({args.lang})")

        # The confirm page the SMS links to.
        driver.get(args.link)
        check(driver.current_url() == args.link, f"the browser ended up at {driver.current_url()}")
        title = driver.title()
        check(title == args.title, f"page title is {title!r}, expected {args.title!r}")
        heading = driver.text(driver.find("main h1"))
        check(heading == args.title, f"heading is {heading!r}, expected {args.title!r}")
        lang = driver.execute("return document.documentElement.lang;")
        check(lang == args.lang, f"<html lang> is {lang!r}, expected {args.lang!r}")
        check(driver.execute("return document.scripts.length;") == 0, "the page has <script> elements")
        check(args.project in driver.text(driver.find("main p")), f"the page does not name the project {args.project}")
        forms = driver.find_all("form")
        check(len(forms) == 1, f"expected one form, found {len(forms)}")
        form = forms[0]
        method = driver.attribute(form, "method")
        action = driver.attribute(form, "action")
        expected_action = "/p/" + args.link.rsplit("/p/", 1)[1]
        check(method.lower() == "post" and action == expected_action,
              f"form is method={method!r} action={action!r}, expected post to {expected_action!r}")
        button = driver.find("form button[type=submit]")
        label = driver.text(button)
        check(label == args.button, f"button says {label!r}, expected {args.button!r}")
        check(driver.displayed(button), "the button is not displayed")
        widths = fits_phone_width(driver, button)
        ok(f"confirm page: title and heading {title!r}, lang {lang}, no scripts, POST form to /p/…, "
           f"visible button {label!r}")
        ok(f"confirm page fits phone width (scrollWidth {widths['scroll']} <= innerWidth {widths['inner']})")

        if args.artifacts:
            path, width, height = save_screenshot(
                driver, args.artifacts, f"instant-link-{args.lang}-confirm.png", widths["inner"])
            ok(f"screenshot of the confirm page ({width}x{height}): {path}")

        if not args.confirm:
            return

        # Confirm: the form posts, and the same tab shows the done page.
        driver.click(button)
        link = wait_for("the done page's Continue link", lambda: driver.find_all("main a.button"))[0]
        body = driver.text(driver.find("main"))
        check(args.done in body, f"done page says {body!r}, expected it to contain {args.done!r}")
        check(args.project in body, f"done page does not name the project {args.project}")
        check(not driver.find_all("form"), "the done page still has a form")
        link_text = driver.text(link)
        href = driver.attribute(link, "href")
        check(link_text == args.continue_text, f"the link says {link_text!r}, expected {args.continue_text!r}")
        check(href == args.next, f"the link goes to {href!r}, expected {args.next!r}")
        check(driver.displayed(link), "the Continue link is not displayed")
        widths = fits_phone_width(driver, link)
        ok(f"clicking the button shows the done page ({args.done!r}) with {link_text!r} to {href}, "
           f"fitting phone width")

        if args.artifacts:
            path, width, height = save_screenshot(
                driver, args.artifacts, f"instant-link-{args.lang}-done.png", widths["inner"])
            ok(f"screenshot of the done page ({width}x{height}): {path}")

        if args.invalid:
            # The link works once: opened again, it says so (and offers no button).
            driver.get(args.link)
            body = driver.text(driver.find("main"))
            check(args.invalid in body, f"reopened link says {body!r}, expected {args.invalid!r}")
            check(not driver.find_all("button"), "a used link still shows a button")
            ok("the used link, opened again, says it has expired or was already used")
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--driver", required=True, help="chromedriver's URL, like http://127.0.0.1:9515")
    parser.add_argument("--chromium", help="the browser binary chromedriver starts")
    parser.add_argument("--link", required=True, help="the instant link from the SMS")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--project", required=True, help="the project name the page names")
    parser.add_argument("--title", required=True, help="the page's title and heading")
    parser.add_argument("--button", required=True, help="the confirm button's text")
    parser.add_argument("--confirm", action="store_true", help="click the button and check the done page")
    parser.add_argument("--done", default="Done.", help="text the done page contains")
    parser.add_argument("--continue-text", default="Continue")
    parser.add_argument("--next", help="the finalTargetUrl the done page links to")
    parser.add_argument("--invalid", help="text the page shows when the used link is opened again")
    parser.add_argument("--artifacts", help="directory for screenshots")
    parser.add_argument("--width", type=int, default=390)
    parser.add_argument("--height", type=int, default=844)
    args = parser.parse_args()
    try:
        run(args)
    except (CheckFailed, WebDriverError, urllib.error.URLError, OSError) as error:
        print(f"browser check failed: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
