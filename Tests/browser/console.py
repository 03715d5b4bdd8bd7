#!/usr/bin/env python3
"""Drives headless Chromium through chromedriver (W3C WebDriver, see webdriver.py) over the Verity web console, the
way an operator uses it: sign in with a fresh one-time link, create a project, create and revoke an API key (and see
the API refuse it), find a user the API signed in, see their sessions and revoke them (and see their refresh token
refused), follow a phone's push factor to the challenge it approved, see a possession flow with its number masked,
send a dead message again, watch the dashboard's numbers move after verifications, and see a used sign-in link and
a form posted without its CSRF token refused. Every page is checked for a label on every control, keyboard
navigation with a visible focus, and no script; a screenshot of each page goes to --artifacts.

Used by Tests/browser/console.sh, which starts the server, a stand-in SMS gateway and chromedriver. Prints an
`ok - …` line per check and exits non-zero, with the reason on stderr, at the first check that fails.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webdriver import CheckFailed, WebDriver, WebDriverError, check, ok, save_screenshot, wait_for  # noqa: E402

TAB = "\ue004"
ENTER = "\ue007"


class Console(WebDriver):
    """The WebDriver client with the few commands the console check adds: typing and pressing keys."""

    def type(self, element, text, clear=True):
        if clear:
            self._session("POST", f"/element/{element}/clear", {})
        self._session("POST", f"/element/{element}/value", {"text": text})

    def press(self, *keys):
        actions = []
        for key in keys:
            actions += [{"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]
        self._session("POST", "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})

    def active(self):
        return self.execute(
            "const e = document.activeElement; return {tag: e.tagName, text: (e.innerText || e.value || '').trim(),"
            " href: e.getAttribute('href'), outline: getComputedStyle(e).outlineStyle,"
            " outlineWidth: getComputedStyle(e).outlineWidth};")


class Run:
    def __init__(self, args):
        self.args = args
        self.base = args.base.rstrip("/")
        self.driver = Console(args.driver)
        self.shots = 0

    # -- the API and the CLI, as a backend and the operator's shell use them

    def api(self, method, path, body=None, key=None, project=None):
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if project:
            headers["X-Verity-Project"] = project
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
                return response.status, (json.loads(text) if text else None)
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                return error.code, json.loads(text)
            except ValueError:
                return error.code, text

    def cli(self, *arguments):
        result = subprocess.run([self.args.verity, *arguments], capture_output=True, text=True, check=False)
        check(result.returncode == 0, f"verity {' '.join(arguments)} failed: {result.stderr}")
        return result.stdout

    def login_link(self):
        link = self.cli("admin", "console-login", "ada", "--url", self.base).strip()
        check(link.startswith(self.base + "/console/sign-in?token=vcl_"), f"console-login printed {link!r}")
        return link

    def gateway_messages(self):
        """What the stand-in SMS gateway received, oldest first: {to, body, status}."""
        messages = []
        if os.path.exists(self.args.gateway_log):
            with open(self.args.gateway_log) as file:
                messages = [json.loads(line) for line in file if line.strip()]
        return messages

    def code_for(self, phone, after=0):
        def probe():
            for message in self.gateway_messages()[after:]:
                if message["to"] == phone and message["status"] == 200:
                    found = re.search(r"\b(\d{6})\b", message["body"])
                    if found:
                        return found.group(1)
            return None
        return wait_for(f"a code delivered to {phone}", probe, timeout=15)

    # -- the browser

    def open(self, path):
        self.driver.get(self.base + path)

    def text(self, css="main"):
        return self.driver.text(self.driver.find(css))

    def heading(self):
        return self.text("main h1")

    def click_button(self, label):
        buttons = [b for b in self.driver.find_all("button") if self.driver.text(b) == label]
        check(buttons, f"no button {label!r} on {self.driver.current_url()}")
        self.driver.click(buttons[0])

    def click_and_load(self, label):
        """Clicks a button whose form answers with a page, and waits for that page: a new document, even when it is
        at the same address with the same heading (a check of the old one could pass, or fail on a stale element)."""
        self.driver.execute("document.documentElement.dataset.left = 'no';")
        self.click_button(label)
        wait_for(f"the page after {label!r}",
                 lambda: self.driver.execute("return document.documentElement.dataset.left !== 'no';"))

    def fill(self, label, value):
        """Types into the control whose <label> says `label` (found through the label, as a screen reader does)."""
        element = self.driver.execute(
            "for (const l of document.querySelectorAll('label')) { if (l.textContent.trim() === arguments[0])"
            " return l.control; } return null;", label)
        check(element, f"no control labelled {label!r} on {self.driver.current_url()}")
        # A <select> is chosen by typing an option's text, as from the keyboard; it cannot be cleared.
        is_select = self.driver.execute("return arguments[0].tagName === 'SELECT';", element)
        self.driver.type(list(element.values())[0], value, clear=not is_select)

    def check_page(self, name):
        """Every page: no script, a strict CSP (no inline script ran), a label on every control, text on every
        button and link, a caption on every table; then a screenshot."""
        check(self.driver.execute("return document.scripts.length;") == 0, f"{name}: the page has <script> elements")
        unlabelled = self.driver.execute(
            "const bad = [];"
            "for (const e of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {"
            "  if (!(e.labels && e.labels.length) && !e.getAttribute('aria-label')) bad.push(e.outerHTML); }"
            "for (const e of document.querySelectorAll('button, a')) {"
            "  if (!e.textContent.trim() && !e.getAttribute('aria-label')) bad.push(e.outerHTML); }"
            "for (const t of document.querySelectorAll('table')) { if (!t.caption) bad.push('table without caption'); }"
            "return bad;")
        check(not unlabelled, f"{name}: controls without a label or text: {unlabelled}")
        check(self.driver.execute("return document.documentElement.lang;") == "en", f"{name}: no <html lang>")
        if self.args.artifacts:
            self.shots += 1
            width = self.driver.execute("return window.innerWidth;")
            path, w, h = save_screenshot(self.driver, self.args.artifacts, f"console-{self.shots:02d}-{name}.png", width)
            ok(f"{name}: every control labelled, no script; screenshot {w}x{h} {path}")
        else:
            ok(f"{name}: every control labelled, no script")

    def csrf_field_count(self):
        return self.driver.execute(
            "return [...document.forms].filter(f => f.method === 'post' && !f.querySelector('input[name=csrf]')"
            " && !f.action.endsWith('/console/sign-in')).length;")

    # -- the checks

    def sign_in(self):
        link = self.login_link()
        self.driver.get(link)
        check(self.heading() == "Sign in", f"the link shows {self.heading()!r}")
        self.check_page("sign-in")
        self.click_button("Sign in as ada")
        wait_for("the dashboard", lambda: self.driver.current_url() == self.base + "/console")
        check(self.heading() == "Dashboard", f"after signing in the page is {self.heading()!r}")
        ok("a fresh link from `verity admin console-login ada` signs in to the dashboard")
        cookies = self.driver._session("GET", "/cookie")
        session = [c for c in cookies if c["name"] == "verity_console"]
        check(session and session[0]["httpOnly"] and session[0].get("sameSite") == "Strict",
              f"the session cookie is {session}")
        check(self.driver.execute("return document.cookie;") == "", "a script can read the session cookie")
        ok("the session cookie is HttpOnly and SameSite=Strict (scripts cannot read it)")
        return link

    def used_link(self, link):
        self.driver.get(link)
        check("expired or was already used" in self.text(), f"a used link shows {self.text()!r}")
        check(not self.driver.find_all("main form button"), "a used link still offers a sign-in button")
        self.check_page("used-link")
        ok("the used sign-in link, opened again, is refused")
        self.open("/console")

    def keyboard(self):
        self.open("/console")
        self.driver.execute("document.activeElement && document.activeElement.blur(); window.focus();")
        self.driver.press(TAB)
        first = self.driver.active()
        check(first["text"] == "Skip to content", f"the first Tab stop is {first}")
        self.driver.press(TAB)
        nav = self.driver.active()
        check(nav["text"] == "Dashboard" and nav["outline"] != "none" and nav["outlineWidth"] != "0px",
              f"the second Tab stop is {nav} (expected the Dashboard link with a visible focus ring)")
        self.driver.press(TAB)
        check(self.driver.active()["text"] == "Projects", f"the third Tab stop is {self.driver.active()}")
        self.driver.press(ENTER)
        wait_for("the projects page", lambda: self.heading() == "Projects")
        ok("keyboard: Tab reaches the skip link, then the navigation with a visible focus ring; Enter follows a link")
        # The create form is reachable and usable from the keyboard alone: focus the name, type, press Enter.
        self.driver.execute("document.getElementById('f-name').focus();")
        for _ in range(40):
            if self.driver.active()["tag"] == "INPUT":
                break
            self.driver.press(TAB)
        check(self.driver.active()["tag"] == "INPUT", "Tab never reached the project name field")

    def create_project(self):
        self.open("/console/projects")
        self.check_page("projects")
        self.fill("Project name", "Globex")
        self.driver.press(ENTER)
        wait_for("the new project's page", lambda: self.heading() == "Project Globex")
        secret = self.text("#new-secret")
        check(re.fullmatch(r"vk_[0-9a-z]+", secret), f"the new project's key is shown as {secret!r}")
        check(self.csrf_field_count() == 0, "a form on the project page has no CSRF token")
        self.check_page("project-created")
        status, _ = self.api("GET", "/v1/users", key=secret)
        check(status == 200, f"the new project's key answered {status}")
        project_url = self.driver.current_url()
        shown = re.search(r"Id (prj_[0-9a-z]+)", self.text())
        check(shown, "the new project's page does not show its id")
        self.globex = shown.group(1)
        self.driver.get(project_url)
        check(secret not in self.driver.execute("return document.documentElement.outerHTML;"),
              "the key's secret is shown again after creation")
        ok("created project Globex from the keyboard; its key works and is never shown again")

    def project_settings(self):
        """Every setting `verity admin project update` changes can be changed on the project page too."""
        self.open(f"/console/projects/{self.globex}")
        # A new project does not call: calls are turned on before they can be the fallback.
        self.fill("Channels turned off", "")
        self.fill("Fallback channel", "voice")
        self.fill("Response to unusual activity", "revoke_sessions")
        self.fill("Descope cookies", "on")
        self.fill("Descope project id", "P2globex")
        self.fill("Firebase emulator admin", "test_numbers")
        self.click_and_load("Save settings")
        shown = self.driver.execute("const e = document.getElementById('f-descopeProjectId'); return e && e.value;")
        check(shown == "P2globex", f"after saving, the page shows the Descope project id {shown!r}")
        self.check_page("project-settings")
        settings = json.loads(self.cli("admin", "project", "show", self.globex, "--json"))["settings"]
        expected = {"disabledChannels": [], "fallbackChannel": "voice", "unusualActivityResponse": "revoke_sessions",
                    "descopeCookies": True, "descopeProjectId": "P2globex", "requiresAppVerification": False,
                    "firebaseEmulatorAdmin": "test_numbers"}
        seen = {name: settings.get(name) for name in expected}
        check(seen == expected, f"the saved settings are {seen}")
        ok("the project page turns calls on and changes the fallback channel, the response to unusual activity, the "
           "Descope settings and the Firebase emulator admin")

    def api_keys(self):
        self.open(f"/console/projects/{self.args.project}")
        self.fill("New key's name", "ci")
        self.click_button("Create API key")
        secret = wait_for("the new key", lambda: self.driver.find_all("#new-secret") and self.text("#new-secret"))
        status, _ = self.api("GET", "/v1/users", key=secret)
        check(status == 200, f"the new key answered {status} before it was revoked")
        self.check_page("api-key-created")
        self.open(f"/console/projects/{self.args.project}")
        self.click_button("Revoke ci")
        wait_for("the revoked state", lambda: "revoked" in self.text())
        status, body = self.api("GET", "/v1/users", key=secret)
        check(status == 401, f"the revoked key answered {status}: {body}")
        ok("an API key created in the console works, and once revoked there the API refuses it (401)")

    def users(self):
        phone = "+14155550142"
        count = len(self.gateway_messages())
        status, body = self.api("POST", "/v1/auth/otp/start", {"loginId": phone}, project=self.args.project)
        check(status in (200, 201), f"otp/start answered {status}: {body}")
        code = self.code_for(phone, after=count)
        status, body = self.api("POST", "/v1/auth/otp/verify", {"loginId": phone, "code": code},
                                project=self.args.project)
        check(status == 200 and body.get("refreshToken"), f"otp/verify answered {status}: {body}")
        self.user_id = body["user"]["id"]
        status, body = self.api("POST", "/v1/auth/refresh", {"refreshToken": body["refreshToken"]},
                                project=self.args.project)
        check(status == 200, f"a fresh refresh token was refused: {status} {body}")
        refresh = body["refreshToken"]
        ok(f"the API signed in {phone} (a new user) and its refresh token works")

        self.open(f"/console/projects/{self.args.project}/users")
        self.check_page("users")
        self.fill("Login id (phone or email)", "+1 415 555 0142")
        self.driver.press(ENTER)
        wait_for("the search result", lambda: phone in self.text())
        self.driver.click(self.driver.find("main table a"))
        wait_for("the user's page", lambda: self.heading() == f"User {phone}")
        check("ses_" in self.text() and "No active session." not in self.text(),
              "the user's page does not list the active session")
        self.check_page("user")
        self.click_and_load("Revoke all sessions")
        check(self.heading() == f"User {phone}", f"after revoking, the page is {self.heading()!r}")
        check("No active session." in self.text(), "after revoking, the user's page still lists a session")
        status, body = self.api("POST", "/v1/auth/refresh", {"refreshToken": refresh}, project=self.args.project)
        check(status == 401, f"after revoking, the refresh token answered {status}: {body}")
        ok("found the user by login id, revoked their sessions, and their refresh token is refused (401)")

    def flows(self):
        """A phone (the `verity device` CLI) enrolls for the user and approves a push challenge; a backend starts a
        possession flow; the console lists both, the phone number masked, and the user's factor links to its
        challenges."""
        status, body = self.api("POST", "/v1/enrollment-tokens", {"userId": self.user_id}, key=self.args.key)
        check(status == 201, f"enrollment-tokens answered {status}: {body}")
        state = os.path.join(tempfile.mkdtemp(prefix="verity-console-device."), "device")
        self.cli("device", "enroll", "--server", self.base, "--token", body["token"], "--state-dir", state)
        status, body = self.api("POST", "/v1/challenges", {"userId": self.user_id}, key=self.args.key)
        check(status == 201, f"challenges answered {status}: {body}")
        challenge = body["id"]
        self.cli("device", "approve", challenge, "--state-dir", state)
        shutil.rmtree(os.path.dirname(state), ignore_errors=True)
        self.open(f"/console/projects/{self.args.project}/users/{self.user_id}")
        links = [a for a in self.driver.find_all("main table a") if self.driver.text(a).startswith("fac_")]
        check(links, "the user's page does not link the push factor")
        self.driver.click(links[0])
        wait_for("the factor's challenges", lambda: self.heading() == "Push challenges of Acme")
        check(challenge in self.text() and "approved" in self.text(),
              f"the challenges page does not show {challenge} approved: {self.text()!r}")
        self.check_page("challenges")
        ok("a phone approved a push challenge; the user's factor links to it, listed as approved")

        status, body = self.api("POST", "/v1/possession", {"phoneNumber": "+14155550188", "flow": "mobile"},
                                key=self.args.key)
        check(status == 201, f"possession answered {status}: {body}")
        self.open(f"/console/projects/{self.args.project}/possession")
        text = self.text()
        check(body["correlationId"] in text and "+1********88" in text and "4155550188" not in text,
              f"the possession page does not list the flow with its number masked: {text!r}")
        self.check_page("possession")
        ok("the possession flows page lists the new flow, its phone number masked")

    def proofs(self):
        """The user signed in by a code in users(): the project's proofs page counts it under Code on today's row
        (UTC), and nothing under the app's or the carrier's proofs."""
        self.open(f"/console/projects/{self.args.project}/proofs")
        check(self.heading() == "Proofs of Acme", f"the proofs page is headed {self.heading()!r}")
        headers = [self.driver.text(h) for h in self.driver.find_all("main table thead th")]
        check(headers == ["Day", "Silent push", "App Attest", "Carrier", "Code", "Instant link"],
              f"the proofs table's columns are {headers!r}")
        rows = self.driver.find_all("main table tbody tr")
        check(len(rows) == 14, f"the proofs table has {len(rows)} days, not 14")
        today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        cells = self.driver.text(rows[0]).split()
        check(cells[0] == today, f"the newest row is {cells[0]!r}, not today ({today})")
        counts = dict(zip(["silent_push", "app_attest", "carrier", "code", "instant_link"], map(int, cells[1:])))
        check(counts["code"] >= 1 and counts["silent_push"] == counts["app_attest"] == counts["carrier"] == 0,
              f"today's proofs are {counts}")
        self.check_page("proofs")
        ok(f"the proofs page counts today's sign-in by code: {counts}")
        self.open("/console")
        rows = {}
        for row in self.driver.find_all("main table tbody tr"):
            cells = self.driver.text(row).rsplit(None, 1)
            if len(cells) == 2 and cells[1].isdigit():
                rows[cells[0]] = int(cells[1])
        check(rows.get("Code", 0) >= 1 and rows.get("App Attest") == 0,
              f"the dashboard's proofs table does not count the sign-in by code: {rows}")
        ok("the dashboard's proofs table counts it too, for every project")

    def dead_message(self):
        phone = "+14155550199"
        open(self.args.gateway_fail, "w").close()
        status, body = self.api("POST", "/v1/verifications", {"to": phone, "channel": "sms"}, key=self.args.key)
        check(status == 201, f"starting a verification answered {status}: {body}")

        def dead_row():
            # This number's message only: another message sent just before may die while the gateway fails.
            self.open("/console/messages?q=%2B14155550199&status=dead")
            return [b for b in self.driver.find_all("main button") if self.driver.text(b).startswith("Retry ")]
        wait_for("the dead message", dead_row, timeout=20)
        check("+1********99" in self.text() and phone not in self.text(), "the destination is not masked")
        self.check_page("messages-dead")
        os.remove(self.args.gateway_fail)
        count = len(self.gateway_messages())
        self.driver.click(dead_row()[0])
        self.code_for(phone, after=count)
        self.open("/console/messages?q=%2B14155550199&status=sent")
        wait_for("the message marked sent", lambda: "sent" in self.text() and "Retry" not in self.text())
        self.check_page("messages")
        ok("a dead message (the gateway refused it) was sent again from the console and delivered")

    def card(self, name):
        return int(self.driver.text(self.driver.find(f"#card-{name} strong")))

    def dashboard(self):
        self.open("/console")
        started, approved = self.card("started"), self.card("approved")
        phone = "+14155550177"
        for _ in range(2):
            count = len(self.gateway_messages())
            status, body = self.api("POST", "/v1/verifications", {"to": phone, "channel": "sms"}, key=self.args.key)
            check(status == 201, f"starting a verification answered {status}: {body}")
            code = self.code_for(phone, after=count)
            status, body = self.api("POST", "/v1/verifications/check", {"to": phone, "code": code},
                                    key=self.args.key)
            check(status == 200 and body.get("status") == "approved", f"the check answered {status}: {body}")
        self.open("/console")
        check(self.card("started") == started + 2 and self.card("approved") == approved + 2,
              f"the dashboard went from {started}/{approved} to {self.card('started')}/{self.card('approved')}")
        check(self.driver.find_all("main svg rect"), "the dashboard has no chart")
        self.check_page("dashboard")
        ok(f"the dashboard counts two more started and approved verifications ({started} -> {started + 2})")

    def csrf(self):
        before = self.cli("admin", "project", "list")
        self.open("/console/projects")
        self.driver.execute("document.querySelector('form[action=\"/console/projects\"] input[name=csrf]').remove();")
        self.fill("Project name", "Forged")
        self.click_button("Create project")
        wait_for("the refusal", lambda: self.heading() == "Form refused")
        check("CSRF" in self.text(), f"the refusal says {self.text()!r}")
        self.check_page("csrf-refused")
        check(self.cli("admin", "project", "list") == before and "Forged" not in before,
              "a form without its CSRF token created a project")
        ok("a form posted without its CSRF token is refused (403) and changes nothing")

    def other_pages(self):
        self.open("/console/verifications")
        check("+1********77" in self.text(), "the verifications page does not list the masked number")
        self.check_page("verifications")
        self.open(f"/console/projects/{self.args.project}")
        self.check_page("project")
        self.open(f"/console/projects/{self.args.project}/security-events")
        check(self.heading() == "Security events of Acme", f"the security events page is {self.heading()!r}")
        self.check_page("security-events")
        self.open(f"/console/projects/{self.args.project}/twilio")
        check("no Twilio Verify service" in self.text(), f"the Twilio page shows {self.text()!r}")
        self.check_page("twilio")
        self.open("/console/audit")
        text = self.text()
        for action in ("operator.sign_in", "project.create", "project.update", "api_key.create", "api_key.revoke",
                       "user.revoke_sessions", "message.retry"):
            check(action in text, f"the audit trail does not show {action}")
        self.check_page("audit")
        ok("the audit trail shows every action with the operator")

    def sign_out(self):
        self.open("/console")
        self.click_button("Sign out")
        wait_for("the signed-out page", lambda: self.heading() == "Signed out")
        self.open("/console")
        check(self.heading() == "Sign in", f"after signing out /console shows {self.heading()!r}")
        ok("signing out ends the session")

    def run(self):
        granted = self.driver.start_headless(self.args.chromium)
        try:
            ok(f"headless {granted.get('browserName')} {granted.get('browserVersion')}")
            link = self.sign_in()
            self.used_link(link)
            self.keyboard()
            self.create_project()
            self.project_settings()
            self.api_keys()
            self.users()
            self.flows()
            self.proofs()
            self.dead_message()
            self.dashboard()
            self.csrf()
            self.other_pages()
            self.sign_out()
        finally:
            self.driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--driver", required=True, help="chromedriver's URL")
    parser.add_argument("--chromium", help="the browser binary")
    parser.add_argument("--base", required=True, help="the server's URL")
    parser.add_argument("--verity", required=True, help="the verity binary (for console-login)")
    parser.add_argument("--project", required=True, help="project Acme's id")
    parser.add_argument("--key", required=True, help="project Acme's API key")
    parser.add_argument("--gateway-log", required=True, help="the stand-in SMS gateway's log (JSON lines)")
    parser.add_argument("--gateway-fail", required=True, help="while this file exists the gateway refuses SMS")
    parser.add_argument("--artifacts", help="directory for screenshots")
    args = parser.parse_args()
    try:
        Run(args).run()
    except (CheckFailed, WebDriverError, urllib.error.URLError, OSError) as error:
        print(f"console check failed: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
