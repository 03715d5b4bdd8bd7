import Hummingbird
import NIOCore

/// The console's one script, served as `/console/console.js` to the two pages that run a WebAuthn ceremony (the
/// content security policy lets nothing else run). A form marked `data-passkey` (`register` or `sign-in`) posts its
/// fields to its `data-options` URL for the options, asks the browser's authenticator, then posts its fields and the
/// credential's standard JSON to its action, and follows the answer's `location`. Whatever stops it (no passkeys in
/// this browser, the server's refusal, the user's cancel) is shown in the form's `data-passkey-status` line, with a
/// stable code in `data-code`; a form's `data-msg-<code>` attributes (the hosted passkey page's, in its language,
/// `_` written `-`) word those lines instead of the script's English, and `data-msg-refused` every refusal by the
/// server.
enum ConsolePasskeyScript {
    /// The script as a response (the console's `/console/console.js`, the hosted page's `/passkey-page.js`).
    static func response() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "max-age=300"],
            body: .init(byteBuffer: ByteBuffer(string: source)))
    }

    static let source = #"""
        "use strict";
        (() => {
          const bytes = (text) => {
            const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
            const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
            return Uint8Array.from(binary, (c) => c.charCodeAt(0)).buffer;
          };
          const text = (buffer) => {
            let binary = "";
            for (const b of new Uint8Array(buffer)) binary += String.fromCharCode(b);
            return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          };
          const descriptors = (list) => (list || []).map((d) => ({ ...d, id: bytes(d.id) }));
          const creation = (o) => ({
            ...o, challenge: bytes(o.challenge), user: { ...o.user, id: bytes(o.user.id) },
            excludeCredentials: descriptors(o.excludeCredentials),
          });
          const request = (o) => ({ ...o, challenge: bytes(o.challenge), allowCredentials: descriptors(o.allowCredentials) });
          const serialise = (credential) => {
            const r = credential.response;
            const response = { clientDataJSON: text(r.clientDataJSON) };
            if (r.attestationObject) {
              response.attestationObject = text(r.attestationObject);
              response.transports = r.getTransports ? r.getTransports() : [];
            } else {
              response.authenticatorData = text(r.authenticatorData);
              response.signature = text(r.signature);
              if (r.userHandle) response.userHandle = text(r.userHandle);
            }
            return { id: credential.id, rawId: text(credential.rawId), type: credential.type, response };
          };
          const post = async (url, fields, say) => {
            const answer = await fetch(url, { method: "POST", body: new URLSearchParams(fields), credentials: "same-origin" });
            const json = (answer.headers.get("Content-Type") || "").startsWith("application/json");
            const body = json ? await answer.json() : null;
            if (!answer.ok || !body) {
              throw {
                code: (body && body.code) || "http_" + answer.status,
                message: say("refused") || (body && body.message) || "The console refused the request (HTTP " + answer.status + "). Reload the page and try again.",
              };
            }
            return body;
          };
          const browserRefusal = (error, say) => {
            switch (error && error.name) {
              case "NotAllowedError":
                return { code: "passkey_not_used", message: say("passkey_not_used") || "No passkey was used: it was cancelled or timed out, or this device holds no passkey for this account." };
              case "InvalidStateError":
                return { code: "passkey_exists", message: say("passkey_exists") || "This authenticator holds a passkey for this account already." };
              case "SecurityError":
                return { code: "origin_not_allowed", message: say("origin_not_allowed") || "The browser refused: this page is not on the console's public URL." };
              default:
                return { code: "passkey_failed", message: say("passkey_failed") || "The browser could not use a passkey: " + String(error) };
            }
          };
          const supported = window.isSecureContext && window.PublicKeyCredential && navigator.credentials;
          for (const form of document.querySelectorAll("form[data-passkey]")) {
            const say = (code) => form.dataset["msg" + code.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("")];
            const status = form.querySelector("[data-passkey-status]");
            const button = form.querySelector("button[type=submit]");
            const show = (code, message) => {
              status.textContent = message;
              status.dataset.code = code;
              status.hidden = false;
            };
            if (!supported) {
              show("passkeys_unavailable", say("passkeys_unavailable") || "This browser cannot use passkeys on this page: it needs a browser that offers passkeys, on HTTPS (or localhost).");
              continue;
            }
            button.disabled = false;
            form.addEventListener("submit", async (event) => {
              event.preventDefault();
              button.disabled = true;
              status.hidden = true;
              const fields = Object.fromEntries(new FormData(form));
              try {
                const options = await post(form.dataset.options, fields, say);
                let credential;
                try {
                  credential = form.dataset.passkey === "register"
                    ? await navigator.credentials.create({ publicKey: creation(options) })
                    : await navigator.credentials.get({ publicKey: request(options) });
                } catch (error) {
                  throw browserRefusal(error, say);
                }
                const done = await post(form.action, { ...fields, credential: JSON.stringify(serialise(credential)) }, say);
                window.location.assign(done.location);
              } catch (error) {
                show(error.code || "passkey_failed", error.message || String(error));
                button.disabled = false;
              }
            });
          }
        })();
        """#
}
