"""Descope compatibility cases, run by Tests/descope/compat.sh against a fresh `verity serve`.

Both sides are the official `descope` package from PyPI, unchanged: an app's backend signing users in with one-time
codes (`DescopeClient(project_id, base_url=<server>/descope)`), validating and refreshing their sessions with the keys
it fetches from `/v2/keys/<project>`, and its admin code calling `mgmt.user` and `mgmt.role` with a management key
(a Verity API key of the project).
"""

import base64
import json
import os
import re
import sys
import time

import httpx
import jwt
from descope import AuthException, DeliveryMethod, DescopeClient, LoginOptions, SignUpOptions

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from compat_cases import run_cases  # noqa: E402
from verity_cli import remember_secret, verity  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passkeys"))
from authenticator import Authenticator  # noqa: E402

BASE = os.environ["VERITY_BASE"] + "/descope"


def code_sent(to, count=1):
    """The code in the `count`-th message sent to `to` (read like a person reads their inbox)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        messages = [m for m in verity("outbox", "list", "--to", to) if m["status"] == "sent"]
        if len(messages) >= count:
            return re.search(r"\d{4,10}", list(reversed(messages))[count - 1]["body"]).group()
        time.sleep(0.1)
    raise AssertionError(f"expected {count} message(s) to {to}")


def heard_code(to, count=1):
    """The code of the `count`-th call to `to`: the digits of the call's first line, said one by one."""
    deadline = time.time() + 10
    while time.time() < deadline:
        calls = [m for m in verity("outbox", "list", "--to", to) if m["status"] == "sent" and m["channel"] == "voice"]
        if len(calls) >= count:
            return "".join(filter(str.isdigit, list(reversed(calls))[count - 1]["body"].split("\n")[0]))
        time.sleep(0.1)
    raise AssertionError(f"expected {count} call(s) to {to}")


def wrong(code):
    return "".join(str((int(digit) + 1) % 10) for digit in code)


def expect_refused(call, error_code, status=None):
    """The call raises the SDK's AuthException carrying Descope's error body with `error_code`."""
    try:
        call()
    except AuthException as error:
        body = json.loads(error.error_message)
        assert body["errorCode"] == error_code, f"{body}, wanted {error_code}"
        assert body["errorDescription"] and body["errorMessage"], body
        if status is not None:
            assert error.status_code == status, f"status {error.status_code}, wanted {status}"
        return body
    raise AssertionError(f"expected {error_code}, the call succeeded")


created = verity("admin", "project", "create", "--name", "Acme")
PROJECT = created["project"]["id"]
# A new project does not call; this one does, as an operator turns calls on.
verity("admin", "project", "update", PROJECT, "--disabled-channels", "none")
KEY = created["apiKey"]
remember_secret(KEY)

app = DescopeClient(PROJECT, base_url=BASE)
admin = DescopeClient(PROJECT, management_key=KEY, base_url=BASE)
counts = {}


def sign_in(login_id, method):
    """sign_up_or_in then verify_code, as an app's backend does; returns the SDK's JWT response."""
    masked = app.otp.sign_up_or_in(method, login_id)
    assert masked and "*" in masked, masked
    counts[login_id] = counts.get(login_id, 0) + 1
    signed_in = app.otp.verify_code(method, login_id, code_sent(login_id, counts[login_id]))
    remember_secret(signed_in["refreshSessionToken"]["jwt"])
    return signed_in


def case_email_and_sms_sign_up_or_in():
    for login_id, method, claim in [
        ("ada@example.com", DeliveryMethod.EMAIL, "email"),
        ("+14155550142", DeliveryMethod.SMS, "sms"),
    ]:
        first = sign_in(login_id, method)
        assert first["firstSeen"] is True, first["firstSeen"]
        user = first["user"]
        assert user["loginIds"] == [login_id], user
        assert first["userId"] == user["userId"] and first["projectId"] == PROJECT, first
        session = first["sessionToken"]
        assert session["drn"] == "DS" and session["iss"] == PROJECT and claim in session["amr"], session
        assert first["refreshSessionToken"]["drn"] == "DSR", first["refreshSessionToken"]
        again = sign_in(login_id, method)
        assert again["firstSeen"] is False, again["firstSeen"]
        assert again["user"]["userId"] == user["userId"]


def case_validate_session_with_fresh_client():
    signed_in = sign_in("ada@example.com", DeliveryMethod.EMAIL)
    fresh = DescopeClient(PROJECT, base_url=BASE)
    claims = fresh.validate_session(signed_in["sessionToken"]["jwt"])
    assert claims["userId"] == signed_in["userId"] and claims["projectId"] == PROJECT, claims
    assert claims["sessionToken"]["drn"] == "DS"


def tampered(token):
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["roles"] = ["admin"]
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return ".".join([header, forged, signature])


def case_tampered_tokens_refused():
    signed_in = sign_in("ada@example.com", DeliveryMethod.EMAIL)
    fresh = DescopeClient(PROJECT, base_url=BASE)
    for token in [signed_in["sessionToken"]["jwt"], signed_in["refreshSessionToken"]["jwt"]]:
        try:
            fresh.validate_session(tampered(token))
        except (AuthException, jwt.InvalidSignatureError):
            # python-sdk lets PyJWT's signature error through unwrapped.
            pass
        else:
            raise AssertionError("a tampered token validated")
    # Past the SDK's own check, the server refuses a forged refresh token too.
    headers = {"Authorization": f"Bearer {PROJECT}:{tampered(signed_in['refreshSessionToken']['jwt'])}"}
    response = httpx.post(BASE + "/v1/auth/refresh", headers=headers, json={})
    assert response.status_code == 401 and response.json()["errorCode"] == "E064001", response.text


def case_refresh_rotates_and_reuse_revokes():
    signed_in = sign_in("ada@example.com", DeliveryMethod.EMAIL)
    first = signed_in["refreshSessionToken"]["jwt"]
    refreshed = app.refresh_session(first)
    second = refreshed["refreshSessionToken"]["jwt"]
    assert second != first
    assert refreshed["sessionToken"]["sub"] == signed_in["userId"]
    both = app.validate_and_refresh_session(refreshed["sessionToken"]["jwt"], second)
    assert both["userId"] == signed_in["userId"]
    expect_refused(lambda: app.refresh_session(first), "E064001", 401)
    expect_refused(lambda: app.refresh_session(second), "E064001", 401)


def case_me_logout():
    signed_in = sign_in("ada@example.com", DeliveryMethod.EMAIL)
    refresh = signed_in["refreshSessionToken"]["jwt"]
    me = app.me(refresh)
    assert me["email"] == "ada@example.com" and me["userId"] == signed_in["userId"], me
    app.logout(refresh)
    expect_refused(lambda: app.refresh_session(refresh), "E064001", 401)
    one = sign_in("ada@example.com", DeliveryMethod.EMAIL)["refreshSessionToken"]["jwt"]
    two = sign_in("ada@example.com", DeliveryMethod.EMAIL)["refreshSessionToken"]["jwt"]
    app.logout_all(one)
    expect_refused(lambda: app.refresh_session(two), "E064001", 401)


def case_wrong_code():
    app.otp.sign_up_or_in(DeliveryMethod.EMAIL, "grace@example.com")
    counts["grace@example.com"] = 1
    code = code_sent("grace@example.com")
    expect_refused(lambda: app.otp.verify_code(DeliveryMethod.EMAIL, "grace@example.com", wrong(code)), "E061102")
    assert app.otp.verify_code(DeliveryMethod.EMAIL, "grace@example.com", code)["firstSeen"] is True


def case_roles_and_permissions():
    admin.mgmt.role.create("editor", "Editors", ["docs.write", "docs.read"])
    admin.mgmt.user.add_roles("grace@example.com", ["editor"])
    signed_in = sign_in("grace@example.com", DeliveryMethod.EMAIL)
    assert signed_in["roles"] == ["editor"], signed_in["roles"]
    validated = app.validate_session(signed_in["sessionToken"]["jwt"])
    assert app.validate_roles(validated, ["editor"])
    assert not app.validate_roles(validated, ["editor", "owner"])
    assert app.get_matched_roles(validated, ["editor", "owner"]) == ["editor"]
    assert app.validate_permissions(validated, ["docs.write", "docs.read"])
    assert not app.validate_permissions(validated, ["billing"])
    assert app.get_matched_permissions(validated, ["docs.read", "billing"]) == ["docs.read"]


def verify_proving_session(method, login_id, code, refresh, status=200):
    """otp/verify with the session's refresh JWT in the bearer value, which a step-up's or login update's verify needs
    to act on the session. python-sdk's verify_code never sends it, so this posts as the SDK does with it added;
    returns the validated session token and the refresh JWT of the answer (None when it carries none, as a login
    update's does), or the error body when `status` is not 200."""
    answer = httpx.post(
        f"{BASE}/v1/auth/otp/verify/{method.name.lower()}", json={"loginId": login_id, "code": code},
        headers={"Authorization": f"Bearer {PROJECT}:{refresh}"}, timeout=10)
    assert answer.status_code == status, answer.text
    body = answer.json()
    if status != 200:
        return body
    if "refreshJwt" in body:
        remember_secret(body["refreshJwt"])
    return app.validate_session(body["sessionJwt"])["sessionToken"], body.get("refreshJwt")


def case_step_up():
    admin.mgmt.user.create("lin@example.com", phone="+14155550177", display_name="Lin")
    signed_in = sign_in("lin@example.com", DeliveryMethod.EMAIL)
    refresh = signed_in["refreshSessionToken"]["jwt"]
    assert "su" not in signed_in["sessionToken"]
    # verify_code sends no proof of the session (only the project id): whoever holds the code gets a sign-in with it,
    # the code's one factor, and the session is not stepped up.
    masked = app.otp.sign_in(DeliveryMethod.SMS, "+14155550177", LoginOptions(stepup=True), refresh)
    assert masked, masked
    plain = app.otp.verify_code(DeliveryMethod.SMS, "+14155550177", code_sent("+14155550177"))
    remember_secret(plain["refreshSessionToken"]["jwt"])
    session = plain["sessionToken"]
    assert "su" not in session and "email" not in session["amr"] and "sms" in session["amr"], session
    assert session.get("acr") != "mfa", session
    unchanged = app.refresh_session(refresh)
    assert "sms" not in unchanged["sessionToken"]["amr"] and "su" not in unchanged["sessionToken"], unchanged
    refresh = unchanged["refreshSessionToken"]["jwt"]
    remember_secret(refresh)
    # With the refresh JWT on the verify too, the session is stepped up.
    app.otp.sign_in(DeliveryMethod.SMS, "+14155550177", LoginOptions(stepup=True), refresh)
    session, issued = verify_proving_session(
        DeliveryMethod.SMS, "+14155550177", code_sent("+14155550177", 2), refresh)
    assert session["su"] is True and {"email", "sms"} <= set(session["amr"]), session
    # The answer carries a refresh JWT of the same session (descope-swift requires one); the session's earlier refresh
    # token still refreshes too.
    assert issued != refresh and "su" not in jwt.decode(issued, options={"verify_signature": False}), issued
    assert app.refresh_session(issued)["userId"] == signed_in["userId"]
    assert app.refresh_session(refresh)["userId"] == signed_in["userId"]


def case_custom_claims():
    """Claims a sign-in asks for are in every token of its session under `nsec`, as Descope nests claims a client
    asks for apart from the user's own; a step-up adds more; registered names are refused."""
    login, phone = "sam@example.com", "+14155550155"
    admin.mgmt.user.create(login, phone=phone, custom_attributes={"plan": "basic", "team": "blue"})
    for reserved in ({"sub": "U1"}, {"su": True}, {"drn": "DSR"}, {"amr": ["pwd"]}):
        expect_refused(
            lambda: app.otp.sign_up_or_in(DeliveryMethod.EMAIL, login, SignUpOptions(custom_claims=reserved)),
            "E011003", 400)
    app.otp.sign_up_or_in(DeliveryMethod.EMAIL, login, SignUpOptions(custom_claims={"plan": "pro", "seats": 3}))
    counts[login] = 1
    signed_in = app.otp.verify_code(DeliveryMethod.EMAIL, login, code_sent(login))
    refresh = signed_in["refreshSessionToken"]["jwt"]
    remember_secret(refresh)
    for token in (signed_in["sessionToken"], signed_in["refreshSessionToken"]):
        assert token["nsec"] == {"plan": "pro", "seats": 3}, token
        assert token["plan"] == "basic" and token["team"] == "blue" and token["sub"] == signed_in["userId"], token
    validated = app.validate_session(signed_in["sessionToken"]["jwt"])["sessionToken"]
    assert validated["nsec"] == {"plan": "pro", "seats": 3}, validated
    refreshed = app.refresh_session(refresh)
    assert refreshed["sessionToken"]["nsec"] == {"plan": "pro", "seats": 3}, refreshed
    refresh = refreshed["refreshSessionToken"]["jwt"]
    remember_secret(refresh)
    again = app.refresh_session(refresh)
    assert again["sessionToken"]["nsec"]["seats"] == 3 and again["refreshSessionToken"]["nsec"]["seats"] == 3, again
    refresh = again["refreshSessionToken"]["jwt"]
    remember_secret(refresh)
    # A step-up with claims adds them to the session, which keeps its own.
    expect_refused(
        lambda: app.otp.sign_in(DeliveryMethod.SMS, phone, LoginOptions(stepup=True, custom_claims={"su": False}),
                                refresh), "E011003", 400)
    app.otp.sign_in(DeliveryMethod.SMS, phone, LoginOptions(stepup=True, custom_claims={"level": "high"}), refresh)
    stepped, _ = verify_proving_session(DeliveryMethod.SMS, phone, code_sent(phone), refresh)
    assert stepped["su"] is True and stepped["nsec"] == {"plan": "pro", "seats": 3, "level": "high"}, stepped
    after = app.refresh_session(refresh)
    remember_secret(after["refreshSessionToken"]["jwt"])
    after = after["sessionToken"]
    assert after["nsec"] == {"plan": "pro", "seats": 3, "level": "high"} and "su" not in after, after
    # The claims were that session's: a later sign-in without them has the user's own only.
    later = sign_in(login, DeliveryMethod.EMAIL)["sessionToken"]
    assert later["plan"] == "basic" and "nsec" not in later, later


def case_voice_and_whatsapp():
    number = "+14155550166"
    assert app.otp.sign_up_or_in(DeliveryMethod.VOICE, number)
    by_voice = app.otp.verify_code(DeliveryMethod.VOICE, number, heard_code(number))
    remember_secret(by_voice["refreshSessionToken"]["jwt"])
    assert by_voice["firstSeen"] is True and "voice" in by_voice["sessionToken"]["amr"], by_voice["sessionToken"]
    assert app.otp.sign_up_or_in(DeliveryMethod.WHATSAPP, number)
    by_whatsapp = app.otp.verify_code(DeliveryMethod.WHATSAPP, number, code_sent(number, 2))
    remember_secret(by_whatsapp["refreshSessionToken"]["jwt"])
    assert by_whatsapp["firstSeen"] is False and by_whatsapp["userId"] == by_voice["userId"], by_whatsapp
    assert "whatsapp" in by_whatsapp["sessionToken"]["amr"], by_whatsapp["sessionToken"]


def case_update_phone_and_email():
    admin.mgmt.user.create("taken@example.com")
    signed_in = sign_in("noor@example.com", DeliveryMethod.EMAIL)
    refresh = signed_in["refreshSessionToken"]["jwt"]
    # verify_code sends no proof of the session (only the project id): whoever holds the code gets a sign-in of the
    # new number as its own user, and noor's account is left as it was.
    masked = app.otp.update_user_phone(
        DeliveryMethod.SMS, "noor@example.com", "+14155550198", refresh, add_to_login_ids=True)
    assert "*" in masked, masked
    plain = app.otp.verify_code(DeliveryMethod.SMS, "+14155550198", code_sent("+14155550198"))
    remember_secret(plain["refreshSessionToken"]["jwt"])
    assert plain["userId"] != signed_in["userId"] and plain["user"]["loginIds"] == ["+14155550198"], plain["user"]
    assert app.me(refresh)["loginIds"] == ["noor@example.com"]
    # With the session's refresh JWT on the verify, the number becomes noor's login id.
    app.otp.update_user_phone(DeliveryMethod.SMS, "noor@example.com", "+14155550199", refresh, add_to_login_ids=True)
    updated, _ = verify_proving_session(DeliveryMethod.SMS, "+14155550199", code_sent("+14155550199"), refresh)
    assert updated["sub"] == signed_in["userId"], updated
    assert sorted(app.me(refresh)["loginIds"]) == ["+14155550199", "noor@example.com"]
    # An address another user holds: refused with Descope's "user already exists" once the code proves it.
    app.otp.update_user_email("noor@example.com", "taken@example.com", refresh, add_to_login_ids=True)
    refused = verify_proving_session(
        DeliveryMethod.EMAIL, "taken@example.com", code_sent("taken@example.com"), refresh, status=400)
    assert refused["errorCode"] == "E062107", refused
    # Replacing the email address: the new one is proven, the old one is no longer a login id.
    app.otp.update_user_email("noor@example.com", "noor@example.org", refresh)
    verify_proving_session(DeliveryMethod.EMAIL, "noor@example.org", code_sent("noor@example.org"), refresh)
    assert sorted(app.me(refresh)["loginIds"]) == ["+14155550199", "noor@example.org"]
    expect_refused(
        lambda: app.otp.update_user_email("nobody@example.com", "x@example.com", refresh), "E011003", 400)


def case_cookie_delivery():
    """A project that delivers tokens as cookies: the SDK takes the refresh JWT from the DSR cookie."""
    cookie_project = verity("admin", "project", "create", "--name", "Cookies")
    remember_secret(cookie_project["apiKey"])
    pid = cookie_project["project"]["id"]
    shown = verity("admin", "project", "update", pid, "--descope-cookies", "true")
    assert shown["settings"]["descopeCookies"] is True, shown
    client = DescopeClient(pid, base_url=BASE)
    client.otp.sign_up_or_in(DeliveryMethod.EMAIL, "kim@example.com")
    response = httpx.post(
        f"{BASE}/v1/auth/otp/verify/email", headers={"Authorization": f"Bearer {pid}"},
        json={"loginId": "kim@example.com", "code": code_sent("kim@example.com")})
    assert response.status_code == 200 and "refreshJwt" not in response.json(), response.text
    dsr = response.cookies.get("DSR")
    remember_secret(dsr)
    assert response.cookies.get("DS") == response.json()["sessionJwt"]
    set_cookies = response.headers.get_list("set-cookie")
    assert all("HttpOnly" in c and "SameSite=Strict" in c for c in set_cookies), set_cookies
    # The SDK's own verify reads the refresh JWT from the DSR cookie, validates it and refreshes with it.
    client.otp.sign_up_or_in(DeliveryMethod.EMAIL, "kim@example.com")
    signed_in = client.otp.verify_code(DeliveryMethod.EMAIL, "kim@example.com", code_sent("kim@example.com", 2))
    refresh = signed_in["refreshSessionToken"]["jwt"]
    remember_secret(refresh)
    assert signed_in["refreshSessionToken"]["drn"] == "DSR" and signed_in["sessionToken"]["drn"] == "DS"
    assert client.refresh_session(refresh)["userId"] == signed_in["userId"]
    # The refresh call also takes the DSR cookie alone.
    by_cookie = httpx.post(f"{BASE}/v1/auth/refresh", headers={"Authorization": f"Bearer {pid}"}, cookies={"DSR": dsr})
    assert by_cookie.status_code == 200 and by_cookie.cookies.get("DSR"), by_cookie.text
    remember_secret(by_cookie.cookies.get("DSR"))
    # logout and logout_all clear both cookies (same attributes, Max-Age=0).
    for logout in (client.logout, client.logout_all):
        client.otp.sign_up_or_in(DeliveryMethod.EMAIL, "kim@example.com")
        counts["kim@example.com"] = counts.get("kim@example.com", 2) + 1
        session = client.otp.verify_code(
            DeliveryMethod.EMAIL, "kim@example.com", code_sent("kim@example.com", counts["kim@example.com"]))
        remember_secret(session["refreshSessionToken"]["jwt"])
        cleared = sorted(logout(session["refreshSessionToken"]["jwt"]).headers.get_list("set-cookie"))
        assert cleared == [f"{name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" for name in ("DS", "DSR")], cleared
        expect_refused(lambda: client.refresh_session(session["refreshSessionToken"]["jwt"]), "E064001", 401)


def case_descope_project_id():
    """An app keeps its Descope project id: the admin gives it to the Verity project, and the SDK is built with it."""
    moved = verity("admin", "project", "create", "--name", "Moved")
    remember_secret(moved["apiKey"])
    shown = verity("admin", "project", "update", moved["project"]["id"], "--descope-project-id", "P2MovedFromDescope")
    assert shown["settings"]["descopeProjectId"] == "P2MovedFromDescope", shown
    client = DescopeClient("P2MovedFromDescope", base_url=BASE)
    client.otp.sign_up_or_in(DeliveryMethod.EMAIL, "eve@example.com")
    signed_in = client.otp.verify_code(DeliveryMethod.EMAIL, "eve@example.com", code_sent("eve@example.com"))
    remember_secret(signed_in["refreshSessionToken"]["jwt"])
    assert signed_in["sessionToken"]["iss"] == "P2MovedFromDescope", signed_in["sessionToken"]
    fresh = DescopeClient("P2MovedFromDescope", base_url=BASE)
    assert fresh.validate_session(signed_in["sessionToken"]["jwt"])["userId"] == signed_in["userId"]
    refreshed = fresh.refresh_session(signed_in["refreshSessionToken"]["jwt"])
    remember_secret(refreshed["refreshSessionToken"]["jwt"])
    assert refreshed["userId"] == signed_in["userId"]
    manager = DescopeClient("P2MovedFromDescope", management_key=moved["apiKey"], base_url=BASE)
    assert manager.mgmt.user.load("eve@example.com")["user"]["userId"] == signed_in["userId"]
    expect_refused(lambda: DescopeClient("P2NoSuchProject", base_url=BASE).otp.sign_up_or_in(
        DeliveryMethod.EMAIL, "eve@example.com"), "E011002", 401)


def case_management():
    admin.mgmt.role.create("auditor", "Auditors", ["logs.read"])
    roles = admin.mgmt.role.load_all()["roles"]
    assert {"editor", "auditor"} <= {role["name"] for role in roles}, roles
    created = admin.mgmt.user.create(
        "mia@example.com", phone="+14155550188", display_name="Mia", role_names=["auditor"],
        custom_attributes={"plan": "pro"})["user"]
    assert created["roleNames"] == ["auditor"] and created["phone"] == "+14155550188", created
    loaded = admin.mgmt.user.load("mia@example.com")["user"]
    assert loaded["userId"] == created["userId"] and loaded["customAttributes"] == {"plan": "pro"}, loaded
    assert admin.mgmt.user.load_by_user_id(created["userId"])["user"]["name"] == "Mia"
    found = admin.mgmt.user.search_all(role_names=["auditor"])["users"]
    assert [user["userId"] for user in found] == [created["userId"]], found
    updated = admin.mgmt.user.update("mia@example.com", display_name="Mia W.", role_names=["auditor", "editor"])
    assert updated["user"]["name"] == "Mia W." and sorted(updated["user"]["roleNames"]) == ["auditor", "editor"]
    admin.mgmt.user.delete("mia@example.com")
    expect_refused(lambda: admin.mgmt.user.load("mia@example.com"), "E062108")
    admin.mgmt.role.delete("auditor")
    assert "auditor" not in {role["name"] for role in admin.mgmt.role.load_all()["roles"]}
    other = verity("admin", "project", "create", "--name", "Globex")
    remember_secret(other["apiKey"])
    stranger = DescopeClient(PROJECT, management_key=other["apiKey"], base_url=BASE)
    expect_refused(lambda: stranger.mgmt.role.load_all(), "E011002", 401)


PASSKEY_ORIGIN = "https://example.com"


def passkey_project():
    """A project with passkeys on (UV required), its app client and a software authenticator."""
    project = verity("admin", "project", "create", "--name", "Passkeys")
    remember_secret(project["apiKey"])
    verity("admin", "project", "update", project["project"]["id"], "--passkey-rp-id", "example.com",
           "--passkey-rp-name", "Example", "--passkey-origins", PASSKEY_ORIGIN,
           "--passkey-user-verification", "required")
    return DescopeClient(project["project"]["id"], base_url=BASE), Authenticator()


def case_webauthn_sign_up_and_update():
    client, device = passkey_project()
    start = client.webauthn.sign_up_start("lin@example.com", PASSKEY_ORIGIN, {"name": "Lin"})
    assert start["create"] is True, start
    options = json.loads(start["options"])["publicKey"]
    assert options["rp"]["id"] == "example.com" and options["user"]["name"] == "lin@example.com", options
    credential = device.create(start["options"], PASSKEY_ORIGIN)
    signed_up = client.webauthn.sign_up_finish(start["transactionId"], json.dumps(credential))
    remember_secret(signed_up["refreshSessionToken"]["jwt"])
    assert signed_up["firstSeen"] is True and signed_up["user"]["loginIds"] == ["lin@example.com"], signed_up
    assert "hwk" in signed_up["sessionToken"]["amr"], signed_up["sessionToken"]
    # The same answer again: its transaction is spent, and the SDK raises Descope's error.
    expect_refused(lambda: client.webauthn.sign_up_finish(start["transactionId"], json.dumps(credential)),
                   "E011003", 404)
    # A second passkey for the signed-in user (another device), with the refresh JWT.
    laptop = Authenticator()
    update = client.webauthn.update_start(
        "lin@example.com", signed_up["refreshSessionToken"]["jwt"], PASSKEY_ORIGIN)
    assert client.webauthn.update_finish(
        update["transactionId"], json.dumps(laptop.create(update["options"], PASSKEY_ORIGIN))) is None


def case_webauthn_sign_in_and_step_up():
    client, device = passkey_project()
    start = client.webauthn.sign_up_or_in_start("max@example.com", PASSKEY_ORIGIN)
    assert start["create"] is True, start
    signed_up = client.webauthn.sign_up_finish(
        start["transactionId"], json.dumps(device.create(start["options"], PASSKEY_ORIGIN)))
    remember_secret(signed_up["refreshSessionToken"]["jwt"])
    start = client.webauthn.sign_up_or_in_start("max@example.com", PASSKEY_ORIGIN)
    assert start["create"] is False, start
    signed_in = client.webauthn.sign_in_finish(
        start["transactionId"], json.dumps(device.get(start["options"], PASSKEY_ORIGIN)))
    remember_secret(signed_in["refreshSessionToken"]["jwt"])
    assert signed_in["firstSeen"] is False and signed_in["userId"] == signed_up["userId"], signed_in
    assert client.validate_session(signed_in["sessionToken"]["jwt"])["userId"] == signed_up["userId"]
    # Claims a passkey sign-in asks for are in its session under `nsec`; a step-up's join them.
    start = client.webauthn.sign_in_start("max@example.com", PASSKEY_ORIGIN, LoginOptions(custom_claims={"plan": "pro"}))
    signed_in = client.webauthn.sign_in_finish(
        start["transactionId"], json.dumps(device.get(start["options"], PASSKEY_ORIGIN)))
    remember_secret(signed_in["refreshSessionToken"]["jwt"])
    assert signed_in["sessionToken"]["nsec"] == {"plan": "pro"}, signed_in["sessionToken"]
    refresh = signed_in["refreshSessionToken"]["jwt"]
    expect_refused(lambda: client.webauthn.sign_in_start(
        "max@example.com", PASSKEY_ORIGIN, LoginOptions(stepup=True, custom_claims={"su": False}), refresh),
        "E011003", 400)
    start = client.webauthn.sign_in_start(
        "max@example.com", PASSKEY_ORIGIN, LoginOptions(stepup=True, custom_claims={"level": "high"}), refresh)
    stepped = client.webauthn.sign_in_finish(
        start["transactionId"], json.dumps(device.get(start["options"], PASSKEY_ORIGIN)))
    remember_secret(stepped["refreshSessionToken"]["jwt"])
    assert stepped["refreshSessionToken"]["jwt"] != refresh, "a step-up answers one more refresh JWT"
    assert stepped["sessionToken"].get("su") is True, stepped["sessionToken"]
    assert stepped["sessionToken"]["nsec"] == {"plan": "pro", "level": "high"}, stepped["sessionToken"]
    assert stepped["sessionToken"]["sid"] == signed_in["sessionToken"]["sid"], stepped["sessionToken"]
    # The session refreshes as before, with the refresh JWT the client held.
    assert client.refresh_session(refresh)["sessionToken"]["sub"] == signed_up["userId"]


def case_webauthn_refusals():
    client, device = passkey_project()
    expect_refused(lambda: client.webauthn.sign_up_start("kim@example.com", "https://evil.example"), "E011003", 403)
    start = client.webauthn.sign_up_start("kim@example.com", PASSKEY_ORIGIN)
    phished = device.create(start["options"], "https://evil.example")
    expect_refused(lambda: client.webauthn.sign_up_finish(start["transactionId"], json.dumps(phished)),
                   "E011003", 403)
    start = client.webauthn.sign_up_start("kim@example.com", PASSKEY_ORIGIN)
    client.webauthn.sign_up_finish(start["transactionId"], json.dumps(device.create(start["options"], PASSKEY_ORIGIN)))
    # A flipped signature bit, then a replay of a good assertion, then missing UV.
    device.flip_signature_bit = True
    start = client.webauthn.sign_in_start("kim@example.com", PASSKEY_ORIGIN)
    flipped = device.get(start["options"], PASSKEY_ORIGIN)
    expect_refused(lambda: client.webauthn.sign_in_finish(start["transactionId"], json.dumps(flipped)),
                   "E011003", 400)
    device.flip_signature_bit = False
    start = client.webauthn.sign_in_start("kim@example.com", PASSKEY_ORIGIN)
    good = json.dumps(device.get(start["options"], PASSKEY_ORIGIN))
    remember_secret(client.webauthn.sign_in_finish(start["transactionId"], good)["refreshSessionToken"]["jwt"])
    expect_refused(lambda: client.webauthn.sign_in_finish(start["transactionId"], good), "E011003", 404)
    device.user_verified = False
    start = client.webauthn.sign_in_start("kim@example.com", PASSKEY_ORIGIN)
    unverified = device.get(start["options"], PASSKEY_ORIGIN)
    expect_refused(lambda: client.webauthn.sign_in_finish(start["transactionId"], json.dumps(unverified)),
                   "E011003", 403)


CASES = [
    ("email and SMS sign-up-or-in: JWTs with drn DS/DSR, the user, firstSeen true then false",
     case_email_and_sms_sign_up_or_in),
    ("validate_session with a fresh client that fetches /v2/keys", case_validate_session_with_fresh_client),
    ("tampered session and refresh tokens are refused, by the SDK and by the server", case_tampered_tokens_refused),
    ("refresh_session rotates the refresh JWT; a used one is refused and revokes its session",
     case_refresh_rotates_and_reuse_revokes),
    ("me, logout (then refresh refused), logout_all", case_me_logout),
    ("a wrong code is E061102 and leaves the right one usable", case_wrong_code),
    ("validate_roles/permissions and get_matched_* agree with the claims", case_roles_and_permissions),
    ("step-up: sign_in with LoginOptions(stepup=True) and the refresh JWT; verify_code signs in, verify with it: su",
     case_step_up),
    ("customClaims: under nsec in both JWTs, validate_session and refresh_session keep them, step-up adds more",
     case_custom_claims),
    ("voice and WhatsApp sign-up-or-in", case_voice_and_whatsapp),
    ("otp.update_user_phone/email: verify_code alone signs in; with the refresh JWT the address is a login id, "
     "another user's is E062107",
     case_update_phone_and_email),
    ("cookie delivery: DS/DSR cookies, the SDK takes the refresh JWT from DSR, refresh by the DSR cookie",
     case_cookie_delivery),
    ("a Descope project id set with --descope-project-id: the SDK built with it signs in, validates, refreshes, manages",
     case_descope_project_id),
    ("mgmt.user create/load/search/update/delete and mgmt.role create/load_all/delete; another project's key refused",
     case_management),
    ("webauthn: sign_up_start/finish make the user and sign in; update_start/finish add a passkey; a replay is refused",
     case_webauthn_sign_up_and_update),
    ("webauthn: sign_up_or_in_start (create true, then false), sign_in_finish, step-up with LoginOptions(stepup=True); "
     "custom_claims under nsec, a step-up's joining them",
     case_webauthn_sign_in_and_step_up),
    ("webauthn refusals through the SDK's AuthException: a wrong origin (start, answer), a flipped signature bit, "
     "a replay, missing UV",
     case_webauthn_refusals),
]

raise SystemExit(run_cases(CASES, "Descope"))
