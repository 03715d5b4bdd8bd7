#!/usr/bin/env python3
"""Drives headless Chromium through chromedriver (W3C WebDriver, see webdriver.py) with the DevTools protocol's virtual
authenticator (CTAP2, internal transport, resident keys, user verification) over the console's passkeys: an operator
signs in with a one-time link, registers a passkey on the Account page (the browser makes the credential, the server
checks it), and signs in with it from a fresh link; then the same page opened on another origin than the public URL
is refused with a stable code on the page, and a credential removed from the authenticator fails the sign-in cleanly.
Then the same for a project's hosted passkey page: a backend's registration link adds a passkey on the page, a
discoverable sign-in link signs the user in and the backend reads the session once, the page on another origin is
refused, and a removed credential fails cleanly.

Used by Tests/browser/passkeys.sh, which starts the server (public URL http://localhost:PORT) and chromedriver.
Prints an `ok - …` line per check and exits non-zero, with the reason on stderr, at the first check that fails.
"""

import argparse
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webdriver import CheckFailed, WebDriver, WebDriverError, check, ok, wait_for  # noqa: E402


class Browser(WebDriver):
    """The WebDriver client with Chromium's DevTools commands (the virtual authenticator) and typing."""

    def cdp(self, command, params=None):
        return self._session("POST", "/goog/cdp/execute", {"cmd": command, "params": params or {}})

    def type(self, element, text):
        self._session("POST", f"/element/{element}/clear", {})
        self._session("POST", f"/element/{element}/value", {"text": text})


class Run:
    def __init__(self, args):
        self.args = args
        self.base = args.base.rstrip("/")
        self.driver = Browser(args.driver)
        self.authenticator = None

    def link(self, base=None):
        result = subprocess.run(
            [self.args.verity, "admin", "console-login", "ada", "--url", base or self.base],
            capture_output=True, text=True, check=False)
        check(result.returncode == 0, f"verity admin console-login failed: {result.stderr}")
        link = result.stdout.strip()
        check("/console/sign-in?token=vcl_" in link, f"console-login printed {link!r}")
        return link

    def heading(self):
        return self.driver.text(self.driver.find("main h1"))

    def button(self, label):
        buttons = [b for b in self.driver.find_all("button") if self.driver.text(b) == label]
        check(buttons, f"no button {label!r} on {self.driver.current_url()}")
        return buttons[0]

    def enabled(self, label):
        """Waits until the script has enabled the passkey button `label` (it stays disabled without WebAuthn)."""
        wait_for(f"the button {label!r} enabled",
                 lambda: self.driver.attribute(self.button(label), "disabled") is None)
        return self.button(label)

    def status(self):
        """The passkey status line once the script shows it: (data-code, text)."""
        def probe():
            shown = self.driver.execute(
                "const s = document.querySelector('[data-passkey-status]');"
                " return s && !s.hidden ? [s.dataset.code, s.textContent] : null;")
            return shown
        return wait_for("the passkey status line", probe, timeout=30)

    def credentials(self):
        return self.driver.cdp("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})["credentials"]

    def api(self, method, path, body=None):
        request = urllib.request.Request(
            self.base + path, data=None if body is None else json.dumps(body).encode(), method=method,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.args.key}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read().decode())

    def done(self):
        wait_for("the page saying it is done", lambda: self.heading() == "Done", timeout=30)

    # -- the checks

    def virtual_authenticator(self):
        self.driver.cdp("WebAuthn.enable", {"enableUI": False})
        added = self.driver.cdp("WebAuthn.addVirtualAuthenticator", {"options": {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True}})
        self.authenticator = added["authenticatorId"]
        ok(f"a virtual authenticator (ctap2, internal, resident keys, user verification): {self.authenticator}")

    def register(self):
        self.driver.get(self.link())
        check(not self.driver.execute("return document.scripts.length;"),
              "the sign-in page of an operator without a passkey has a script")
        self.driver.click(self.button("Sign in as ada"))
        wait_for("the dashboard", lambda: self.driver.current_url() == self.base + "/console")
        ok("ada signs in with a link alone while she has no passkey")

        self.driver.get(self.base + "/console/account")
        check(self.heading() == "Account", f"the account page shows {self.heading()!r}")
        self.driver.type(self.driver.find("#f-name"), "Laptop")
        self.driver.click(self.enabled("Add a passkey"))
        wait_for("the new passkey in the list",
                 lambda: "Laptop" in self.driver.text(self.driver.find("main table")) if self.driver.find_all(
                     "main table") else None, timeout=30)
        stored = self.credentials()
        check(len(stored) == 1 and stored[0]["isResidentCredential"], f"the authenticator holds {stored}")
        ok("the Account page registers a passkey the browser made: the server checked it and lists it as 'Laptop'")

    def sign_in(self):
        before = self.credentials()[0]["signCount"]
        self.driver.get(self.link())
        check(not [b for b in self.driver.find_all("button") if self.driver.text(b) == "Sign in as ada"],
              "a link alone still offers to sign in an operator with a passkey")
        self.driver.click(self.enabled("Sign in as ada with a passkey"))
        wait_for("the dashboard", lambda: self.driver.current_url() == self.base + "/console", timeout=30)
        check(self.heading() == "Dashboard", f"after the passkey the page is {self.heading()!r}")
        after = self.credentials()[0]["signCount"]
        check(after > before, f"the authenticator's counter went from {before} to {after}")
        self.driver.get(self.base + "/console/audit?q=operator.")
        trail = self.driver.text(self.driver.find("main"))
        check("operator.sign_in.passkey" in trail and "operator.passkey.registered" in trail,
              "the audit trail lacks the passkey registration or sign-in")
        ok("a fresh link asks for the passkey, the browser signs the challenge and the server signs ada in "
           "(audited as operator.sign_in.passkey)")

    def wrong_origin(self):
        other = self.base.replace("//localhost:", "//127.0.0.1:")
        self.driver.get(self.link(other))
        self.driver.click(self.enabled("Sign in as ada with a passkey"))
        code, text = self.status()
        check(code == "forbidden", f"the page on {other} shows {code!r}: {text!r}")
        check(self.driver.current_url().startswith(other + "/console/sign-in"), "the wrong origin signed in")
        ok(f"the sign-in page opened on {other} (not the public URL) is refused with code {code}: {text}")

    def removed_credential(self):
        self.driver.cdp("WebAuthn.clearCredentials", {"authenticatorId": self.authenticator})
        check(not self.credentials(), "the authenticator still holds a credential")
        self.driver.get(self.link())
        self.driver.click(self.enabled("Sign in as ada with a passkey"))
        code, text = self.status()
        check(code == "passkey_not_used", f"with the credential removed the page shows {code!r}: {text!r}")
        check(self.driver.current_url().startswith(self.base + "/console/sign-in"), "the removed credential signed in")
        check(self.driver.attribute(self.button("Sign in as ada with a passkey"), "disabled") is None,
              "the button stays disabled after the failure")
        ok(f"with the credential removed from the authenticator the sign-in fails cleanly ({code}: {text})")

    def hosted_register(self):
        status, link = self.api("POST", "/v1/passkey-links", {"ceremony": "registration", "userId": self.args.user})
        check(status == 201 and link["url"].startswith(self.base + "/passkeys/vpk_"), f"the link is {status} {link}")
        self.driver.get(link["url"])
        check(self.heading() == "Add a passkey", f"the hosted page shows {self.heading()!r}")
        self.driver.click(self.enabled("Add a passkey"))
        self.done()
        _, read = self.api("GET", f"/v1/passkey-links/{link['id']}")
        check(read["status"] == "completed" and read.get("passkeyId", "").startswith("pky_"), f"the link reads {read}")
        check(len(self.credentials()) == 1, "the authenticator does not hold the project's passkey")
        ok(f"the hosted page registers a passkey for the backend's user ({read['passkeyId']})")

    def hosted_sign_in(self):
        status, link = self.api("POST", "/v1/passkey-links", {"ceremony": "sign_in"})
        check(status == 201, f"the sign-in link is {status} {link}")
        self.driver.get(link["url"])
        self.driver.click(self.enabled("Sign in with a passkey"))
        self.done()
        _, first = self.api("GET", f"/v1/passkey-links/{link['id']}")
        session = first.get("session") or {}
        check(first["status"] == "completed" and session.get("refreshToken", "").startswith("vrt_")
              and session.get("user", {}).get("id") == self.args.user, f"the sign-in link reads {first}")
        _, second = self.api("GET", f"/v1/passkey-links/{link['id']}")
        check("session" not in second, "the session is handed out twice")
        ok("a discoverable sign-in on the hosted page signs the user in; the backend reads the session once")

    def hosted_refusals(self):
        _, link = self.api("POST", "/v1/passkey-links", {"ceremony": "sign_in", "userId": self.args.user})
        other = link["url"].replace("//localhost:", "//127.0.0.1:")
        self.driver.get(other)
        self.driver.click(self.enabled("Sign in with a passkey"))
        code, text = self.status()
        check(code == "forbidden", f"the hosted page on another origin shows {code!r}: {text!r}")
        ok(f"the hosted page opened on another origin is refused with code {code}")
        self.driver.cdp("WebAuthn.clearCredentials", {"authenticatorId": self.authenticator})
        self.driver.get(link["url"])
        self.driver.click(self.enabled("Sign in with a passkey"))
        code, text = self.status()
        check(code == "passkey_not_used", f"with the credential removed the hosted page shows {code!r}: {text!r}")
        _, read = self.api("GET", f"/v1/passkey-links/{link['id']}")
        check(read["status"] == "pending", f"after the failures the link reads {read}")
        ok(f"with the credential removed the hosted sign-in fails cleanly ({code}); the link stays pending")

    def hosted_in_french(self):
        """The hosted page in the browser's language: its heading and button, and the script's status line."""
        _, link = self.api("POST", "/v1/passkey-links", {"ceremony": "sign_in", "userId": self.args.user})
        self.driver.cdp("Network.enable")
        self.driver.cdp("Network.setExtraHTTPHeaders", {"headers": {"Accept-Language": "fr-FR,fr;q=0.9"}})
        try:
            self.driver.get(link["url"])
            label = "Se connecter avec une clé d'accès"
            check(self.heading() == label, f"the French hosted page shows {self.heading()!r}")
            self.driver.click(self.enabled(label))
            code, text = self.status()
            check(code == "passkey_not_used" and text.startswith("Aucune clé d'accès n'a été utilisée"),
                  f"the French hosted page says {code!r}: {text!r}")
        finally:
            self.driver.cdp("Network.setExtraHTTPHeaders", {"headers": {}})
        ok(f"the hosted page speaks the browser's French, the script's status line too ({code}: {text})")

    def run(self):
        granted = self.driver.start_headless(self.args.chromium)
        try:
            ok(f"headless {granted.get('browserName')} {granted.get('browserVersion')}")
            self.virtual_authenticator()
            self.register()
            self.sign_in()
            self.wrong_origin()
            self.removed_credential()
            self.hosted_register()
            self.hosted_sign_in()
            self.hosted_refusals()
            self.hosted_in_french()
        finally:
            self.driver.quit()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--driver", required=True, help="chromedriver's URL")
    parser.add_argument("--chromium", help="the browser binary")
    parser.add_argument("--base", required=True, help="the server's public URL (http://localhost:PORT)")
    parser.add_argument("--verity", required=True, help="the verity binary (for console-login)")
    parser.add_argument("--key", required=True, help="the project's API key")
    parser.add_argument("--user", required=True, help="the project's user (usr_…)")
    args = parser.parse_args()
    try:
        Run(args).run()
    except (CheckFailed, WebDriverError, urllib.error.URLError, OSError) as error:
        print(f"passkeys check failed: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
