"""Firebase compatibility cases, run by Tests/firebase/compat.sh against a fresh `verity serve`.

The app side is plain HTTP exactly as the Firebase iOS SDK sends it to an emulator host (the v3 names, its headers,
getAccountInfo after sign-in, the JSON refresh); the backend side is firebase-admin from PyPI, unchanged, in emulator
mode (FIREBASE_AUTH_EMULATOR_HOST).
"""

import os
import subprocess
import sys
import time

import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from compat_cases import run_cases  # noqa: E402
from verity_cli import remember_secret, verity  # noqa: E402

VERITY = os.environ["VERITY_BIN"]
BASE = os.environ["VERITY_BASE"]
V3 = BASE + "/www.googleapis.com/identitytoolkit/v3/relyingparty/"
V1 = BASE + "/identitytoolkit.googleapis.com/v1/"
TOKEN = BASE + "/securetoken.googleapis.com/v1/token"
IOS_HEADERS = {
    "Content-Type": "application/json",
    "X-Client-Version": "iOS/FirebaseSDK/11.5.0/FirebaseCore-iOS",
    "X-Ios-Bundle-Identifier": "com.example.acme",
    "X-Firebase-Locale": "en",
}
PHONE = "+14155550142"


def code_sent(session_info):
    """The code of a pending sign-in, read from the emulator's list as Firebase's emulator tests read it."""
    response = requests.get(BASE + "/emulator/v1/projects/acme-app/verificationCodes", timeout=10)
    response.raise_for_status()
    for entry in response.json()["verificationCodes"]:
        if entry["sessionInfo"] == session_info:
            return entry["code"]
    raise AssertionError(f"no code listed for {session_info}")


created = verity("admin", "project", "create", "--name", "Acme")
PROJECT = created["project"]["id"]
remember_secret(created["apiKey"])
named = verity("admin", "project", "firebase", PROJECT, "--firebase-project-id", "acme-app")
KEY = named["apiKey"]
assert named["firebaseProjectId"] == "acme-app", named
# firebase-admin in emulator mode sends Bearer owner and the tests read codes from the emulator's list: the project
# opts in, for every number (its numbers are not test numbers), as a developer does on their own machine.
verity("admin", "project", "update", PROJECT, "--firebase-emulator-admin", "all_numbers")

os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = BASE.removeprefix("http://")
import firebase_admin  # noqa: E402  (after the emulator host is set)
from firebase_admin import auth  # noqa: E402

firebase_admin.initialize_app(options={"projectId": "acme-app"})


def ios(name, body):
    """One call as the iOS SDK makes it; returns (status, JSON)."""
    response = requests.post(V3 + name, params={"key": KEY}, headers=IOS_HEADERS, json=body, timeout=10)
    return response.status_code, response.json()


def error_message(status_and_body):
    status, body = status_and_body
    assert status >= 400, (status, body)
    error = body["error"]
    assert error["code"] == status and error["errors"][0]["message"] == error["message"], body
    return error["message"]


def sign_in(phone):
    status, sent = ios("sendVerificationCode", {"phoneNumber": phone, "clientType": "CLIENT_TYPE_IOS"})
    assert status == 200, sent
    status, signed_in = ios(
        "verifyPhoneNumber",
        {"sessionInfo": sent["sessionInfo"], "code": code_sent(sent["sessionInfo"]), "operation": "SIGN_UP_OR_IN"},
    )
    assert status == 200, signed_in
    remember_secret(signed_in["refreshToken"])
    return signed_in


def refresh(token):
    response = requests.post(
        TOKEN, params={"key": KEY}, headers=IOS_HEADERS, json={"grantType": "refresh_token", "refreshToken": token},
        timeout=10)
    return response.status_code, response.json()


state = {}


def case_sign_in_as_ios():
    first = sign_in(PHONE)
    assert first["isNewUser"] is True and first["phoneNumber"] == PHONE, first
    status, account = ios("getAccountInfo", {"idToken": first["idToken"]})
    assert status == 200 and account["users"][0]["localId"] == first["localId"], account
    again = sign_in(PHONE)
    assert again["isNewUser"] is False and again["localId"] == first["localId"], again
    state.update(uid=first["localId"], id_token=again["idToken"], refresh_token=again["refreshToken"])


def case_refresh():
    status, refreshed = refresh(state["refresh_token"])
    assert status == 200 and refreshed["user_id"] == state["uid"], refreshed
    assert refreshed["access_token"] == refreshed["id_token"] and refreshed["token_type"] == "Bearer"
    remember_secret(refreshed["refresh_token"])
    assert error_message(refresh(state["refresh_token"])) == "INVALID_REFRESH_TOKEN"
    # The reuse revoked that session: sign in again for the cases below.
    signed_in = sign_in(PHONE)
    state.update(id_token=signed_in["idToken"], refresh_token=signed_in["refreshToken"])


def case_errors():
    assert error_message(ios("sendVerificationCode", {})) == "MISSING_PHONE_NUMBER"
    assert error_message(ios("sendVerificationCode", {"phoneNumber": "12"})) == "INVALID_PHONE_NUMBER"
    assert error_message(ios("verifyPhoneNumber", {"code": "123456"})) == "MISSING_SESSION_INFO"
    assert error_message(ios("verifyPhoneNumber", {"sessionInfo": "ver_x"})) == "MISSING_CODE"
    assert error_message(ios("verifyPhoneNumber", {"sessionInfo": "x", "code": "1"})) == "INVALID_SESSION_INFO"
    assert error_message(ios("getAccountInfo", {"idToken": "a.b.c"})) == "INVALID_ID_TOKEN"
    phone = "+14155550143"
    status, sent = ios("sendVerificationCode", {"phoneNumber": phone})
    code = code_sent(sent["sessionInfo"])
    wrong = "".join(str((int(digit) + 1) % 10) for digit in code)
    assert error_message(ios("verifyPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": wrong})) == "INVALID_CODE"
    status, signed_in = ios("verifyPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": code})
    assert status == 200, signed_in
    remember_secret(signed_in["refreshToken"])
    used = ios("verifyPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": code})
    assert error_message(used) == "SESSION_EXPIRED"
    response = requests.post(V3 + "sendVerificationCode", params={"key": "AIzaWrong"}, json={"phoneNumber": PHONE})
    assert error_message((response.status_code, response.json())).startswith("API key not valid")


def case_limits_and_disabled_users():
    phone = "+14155550144"
    status, sent = ios("sendVerificationCode", {"phoneNumber": phone})
    code = code_sent(sent["sessionInfo"])
    wrong = "".join(str((int(digit) + 1) % 10) for digit in code)
    messages = [error_message(ios("verifyPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": wrong}))
                for _ in range(6)]
    assert messages[0] == "INVALID_CODE" and messages[-1] == "TOO_MANY_ATTEMPTS_TRY_LATER", messages
    # A test number (Firebase's fictional numbers): never sent to, its fixed code signs in; disabled, it cannot.
    subprocess.run([VERITY, "admin", "project", "test-number", "add", "+15005550142", "424242", "--project", PROJECT],
                   check=True, capture_output=True)
    status, sent = ios("sendVerificationCode", {"phoneNumber": "+15005550142"})
    status, signed_in = ios("verifyPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": "424242"})
    assert status == 200, signed_in
    remember_secret(signed_in["refreshToken"])
    auth.update_user(signed_in["localId"], disabled=True)
    status, sent = ios("sendVerificationCode", {"phoneNumber": "+15005550142"})
    disabled = ios("verifyPhoneNumber", {"sessionInfo": sent["sessionInfo"], "code": "424242"})
    assert error_message(disabled) == "USER_DISABLED"


def case_expired_id_token():
    # The shortest session lifetime a project may have is 60 s; the server allows 5 s of clock skew.
    verity("admin", "project", "update", PROJECT, "--session-lifetime", "60")
    signed_in = sign_in("+14155550145")
    time.sleep(67)
    assert error_message(ios("getAccountInfo", {"idToken": signed_in["idToken"]})) == "TOKEN_EXPIRED"
    verity("admin", "project", "update", PROJECT, "--session-lifetime", "600")


def case_admin_reads_users():
    claims = auth.verify_id_token(state["id_token"])
    assert claims["uid"] == state["uid"] and claims["phone_number"] == PHONE, claims
    assert claims["firebase"]["sign_in_provider"] == "phone", claims
    user = auth.get_user(state["uid"])
    assert user.phone_number == PHONE and not user.disabled, user
    assert auth.get_user_by_phone_number(PHONE).uid == state["uid"]
    listed = [u.uid for u in auth.list_users().iterate_all()]
    assert state["uid"] in listed, listed


def case_custom_claims_round_trip():
    auth.set_custom_user_claims(state["uid"], {"admin": True, "tier": "gold"})
    assert auth.get_user(state["uid"]).custom_claims == {"admin": True, "tier": "gold"}
    status, refreshed = refresh(state["refresh_token"])
    assert status == 200, refreshed
    remember_secret(refreshed["refresh_token"])
    claims = auth.verify_id_token(refreshed["id_token"])
    assert claims["admin"] is True and claims["tier"] == "gold", claims
    state.update(refresh_token=refreshed["refresh_token"])


def case_revoke_disable_delete():
    auth.revoke_refresh_tokens(state["uid"])
    assert error_message(refresh(state["refresh_token"])) == "INVALID_REFRESH_TOKEN"
    auth.update_user(state["uid"], disabled=True)
    assert auth.get_user(state["uid"]).disabled
    auth.update_user(state["uid"], disabled=False)
    auth.delete_user(state["uid"])
    try:
        auth.get_user(state["uid"])
    except auth.UserNotFoundError:
        pass
    else:
        raise AssertionError("the deleted user was found")


CASES = [
    ("sign-in as the iOS SDK sends it: code, ID token, getAccountInfo, a second sign-in", case_sign_in_as_ios),
    ("refresh in the iOS SDK's JSON; a used refresh token is refused and revokes its session", case_refresh),
    ("refusals in Google's error shape with Firebase's messages; a wrong code leaves the right one", case_errors),
    ("a code guessed too often is TOO_MANY_ATTEMPTS_TRY_LATER; a disabled user's right code is USER_DISABLED",
     case_limits_and_disabled_users),
    ("an ID token past its expiry is TOKEN_EXPIRED", case_expired_id_token),
    ("firebase-admin verifies the ID token and reads users by uid, by phone number and in the list",
     case_admin_reads_users),
    ("custom claims set with firebase-admin appear in the next ID token", case_custom_claims_round_trip),
    ("firebase-admin revokes refresh tokens, disables and deletes the user", case_revoke_disable_delete),
]

raise SystemExit(run_cases(CASES, "Firebase"))
