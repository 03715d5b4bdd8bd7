import Foundation
import Logging
import SQLKit

/// Versioned schema changes, applied in order at start-up, each in its own transaction.
///
/// A migration is never edited once released; a change is a new entry at the end. Timestamps are stored as
/// seconds since 1970 (`DOUBLE PRECISION`), which both engines compare and add natively.
enum Migrations {
    struct Migration: Sendable {
        let version: Int
        let name: String
        let statements: [String]
        /// Run after `statements` on PostgreSQL only.
        var postgresStatements: [String] = []
        /// Run after `statements` on SQLite only.
        var sqliteStatements: [String] = []
    }

    /// What a relying party keeps of a passkey, in `passkeys` and in `console_passkeys` alike: the COSE key as sent,
    /// the last counter, BE and BS, and what its holder sees (name, transports, authenticator model). Part of the
    /// released migrations 29 and 32, so never edited: a new column is an `ALTER TABLE` in a new migration.
    private static let passkeyColumns = """
        public_key TEXT NOT NULL,
        sign_count BIGINT NOT NULL,
        backup_eligible INTEGER NOT NULL,
        backed_up INTEGER NOT NULL,
        transports TEXT NOT NULL,
        aaguid TEXT NOT NULL,
        attestation_format TEXT NOT NULL,
        friendly_name TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        last_used_at DOUBLE PRECISION
        """

    static let all: [Migration] = [
        Migration(
            version: 1, name: "projects, keys, verifications, outbox, rate limits",
            statements: [
                """
                CREATE TABLE projects (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    code_length INTEGER NOT NULL,
                    code_ttl_seconds INTEGER NOT NULL,
                    allowed_countries TEXT,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """,
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    secret_hash TEXT NOT NULL UNIQUE,
                    prefix TEXT NOT NULL,
                    name TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX api_keys_project ON api_keys (project_id)",
                """
                CREATE TABLE verifications (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    channel TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    locale TEXT NOT NULL,
                    status TEXT NOT NULL,
                    code_salt TEXT NOT NULL,
                    code_length INTEGER NOT NULL,
                    send_attempts INTEGER NOT NULL,
                    check_attempts INTEGER NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL
                )
                """,
                // At most one pending verification per destination: re-sends find it, concurrent starts cannot
                // create a second one.
                """
                CREATE UNIQUE INDEX verifications_pending_destination
                    ON verifications (project_id, destination) WHERE status = 'pending'
                """,
                "CREATE INDEX verifications_project_created ON verifications (project_id, created_at)",
                """
                CREATE TABLE outbox (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    channel TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    verification_id TEXT REFERENCES verifications(id) ON DELETE CASCADE,
                    locale TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at DOUBLE PRECISION NOT NULL,
                    last_error TEXT,
                    sender TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    sent_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX outbox_due ON outbox (status, next_attempt_at)",
                "CREATE INDEX outbox_created ON outbox (created_at)",
                """
                CREATE TABLE rate_buckets (
                    bucket TEXT PRIMARY KEY,
                    tokens DOUBLE PRECISION NOT NULL,
                    allowed INTEGER NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
            ]),
        Migration(
            version: 2, name: "push and TOTP factors, challenges, device tokens, webhooks",
            statements: [
                "ALTER TABLE projects ADD COLUMN webhook_url TEXT",
                "ALTER TABLE projects ADD COLUMN webhook_secret TEXT",
                "ALTER TABLE outbox ADD COLUMN payload TEXT",
                """
                CREATE TABLE enrollment_tokens (
                    token_hash TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    factor_id TEXT
                )
                """,
                """
                CREATE TABLE factors (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    status TEXT NOT NULL,
                    friendly_name TEXT NOT NULL,
                    public_key TEXT,
                    push_platform TEXT,
                    push_token TEXT,
                    app_id TEXT,
                    sdk_version TEXT,
                    nonce TEXT,
                    enrollment_token_hash TEXT,
                    totp_secret TEXT,
                    totp_algorithm TEXT,
                    totp_digits INTEGER,
                    totp_period INTEGER,
                    totp_last_counter BIGINT,
                    created_at DOUBLE PRECISION NOT NULL,
                    verified_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX factors_user ON factors (project_id, user_id)",
                """
                CREATE TABLE challenges (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    factor_id TEXT,
                    type TEXT NOT NULL,
                    status TEXT NOT NULL,
                    message TEXT NOT NULL,
                    details TEXT NOT NULL,
                    hidden_details TEXT NOT NULL,
                    content_hash TEXT NOT NULL,
                    user_verification TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    responded_at DOUBLE PRECISION,
                    responded_factor_id TEXT
                )
                """,
                "CREATE INDEX challenges_pending ON challenges (status, expires_at)",
                "CREATE INDEX challenges_user ON challenges (project_id, user_id, created_at)",
                """
                CREATE TABLE device_token_uses (
                    factor_id TEXT NOT NULL,
                    jti TEXT NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (factor_id, jti)
                )
                """,
                "CREATE INDEX device_token_uses_expiry ON device_token_uses (expires_at)",
            ]),
        Migration(
            version: 3, name: "users and their login ids",
            statements: [
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    email TEXT,
                    phone TEXT,
                    display_name TEXT,
                    custom_claims TEXT NOT NULL,
                    disabled INTEGER NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    last_sign_in_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX users_project_created ON users (project_id, created_at, id)",
                // The uniqueness of login ids within a project: `login_key` is the normalised id, lowercased for
                // email addresses, so `Jane@example.com` and `jane@example.com` are the same login.
                """
                CREATE TABLE user_login_ids (
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    login_key TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    PRIMARY KEY (project_id, login_key)
                )
                """,
                "CREATE INDEX user_login_ids_user ON user_login_ids (user_id)",
            ]),
        Migration(
            version: 4, name: "session signing keys",
            statements: [
                // The private key is sealed with a key derived from the master key; `retired_at` is set when a
                // newer key takes over, and the key stays published until its last token has expired.
                """
                CREATE TABLE signing_keys (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    sealed_private_key TEXT NOT NULL,
                    public_key TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    retired_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX signing_keys_project ON signing_keys (project_id, created_at)",
            ]),
        Migration(
            version: 5, name: "sign-in sessions, refresh tokens, roles, test numbers, security events",
            statements: [
                // Sign-in and step-up codes are verifications too, kept apart from the API's by `purpose`: a code
                // a backend sent can never sign anyone in, and the other way round.
                "ALTER TABLE verifications ADD COLUMN purpose TEXT NOT NULL DEFAULT 'api'",
                "DROP INDEX verifications_pending_destination",
                """
                CREATE UNIQUE INDEX verifications_pending_destination
                    ON verifications (project_id, purpose, destination) WHERE status = 'pending'
                """,
                "ALTER TABLE projects ADD COLUMN session_ttl_seconds INTEGER NOT NULL DEFAULT 600",
                "ALTER TABLE projects ADD COLUMN refresh_ttl_seconds INTEGER NOT NULL DEFAULT 2592000",
                // A session is one sign-in and its family of refresh tokens; `expires_at` slides with each refresh.
                """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    amr TEXT NOT NULL,
                    acr TEXT,
                    auth_time DOUBLE PRECISION NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    refreshed_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION,
                    revoke_reason TEXT
                )
                """,
                "CREATE INDEX sessions_user ON sessions (project_id, user_id)",
                // Only hashes; a used token stays (status `used`) so that presenting it again is recognised as theft.
                """
                CREATE TABLE refresh_tokens (
                    token_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    project_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    used_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
                """
                CREATE TABLE roles (
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    description TEXT,
                    permissions TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (project_id, name)
                )
                """,
                """
                CREATE TABLE user_roles (
                    project_id TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    role_name TEXT NOT NULL,
                    PRIMARY KEY (user_id, role_name),
                    FOREIGN KEY (project_id, role_name) REFERENCES roles(project_id, name) ON DELETE CASCADE
                )
                """,
                "CREATE INDEX user_roles_role ON user_roles (project_id, role_name)",
                """
                CREATE TABLE test_numbers (
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    phone TEXT NOT NULL,
                    code TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (project_id, phone)
                )
                """,
                """
                CREATE TABLE security_events (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    session_id TEXT,
                    type TEXT NOT NULL,
                    ip_address TEXT,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX security_events_user ON security_events (project_id, user_id, created_at)",
            ]),
        Migration(
            version: 6, name: "possession checks",
            statements: [
                "ALTER TABLE projects ADD COLUMN possession_ttl_seconds INTEGER NOT NULL DEFAULT 900",
                "ALTER TABLE projects ADD COLUMN possession_code_ttl_seconds INTEGER NOT NULL DEFAULT 120",
                // One backend-started flow; its code or link is a verification whose purpose names the flow, and
                // its auth token is stored only as a hash. Counters move in conditional updates.
                """
                CREATE TABLE possession_flows (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    flow TEXT NOT NULL,
                    phone TEXT,
                    final_target_url TEXT,
                    locale TEXT NOT NULL,
                    token_hash TEXT NOT NULL UNIQUE,
                    status TEXT NOT NULL,
                    resends INTEGER NOT NULL,
                    retries INTEGER NOT NULL,
                    number_changes INTEGER NOT NULL,
                    method TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    completed_at DOUBLE PRECISION,
                    validated_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX possession_flows_project ON possession_flows (project_id, created_at)",
            ]),
        Migration(
            version: 7, name: "Twilio Verify services",
            statements: [
                // A Twilio Verify service (VA…) of the Twilio face: a named set of settings inside one project. Its
                // verifications are the project's, kept apart by a purpose that names the service.
                """
                CREATE TABLE twilio_services (
                    sid TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    friendly_name TEXT NOT NULL,
                    code_length INTEGER NOT NULL,
                    push_include_date INTEGER NOT NULL,
                    push_apn_credential_sid TEXT,
                    push_fcm_credential_sid TEXT,
                    totp_issuer TEXT,
                    totp_time_step INTEGER NOT NULL,
                    totp_code_length INTEGER NOT NULL,
                    totp_skew INTEGER NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX twilio_services_project ON twilio_services (project_id, created_at, sid)",
            ]),
        Migration(
            version: 8, name: "Twilio Verify entities, factors and access tokens",
            statements: [
                // An entity (YE…) of a Twilio service: the customer's `identity`, which is the Verity user id of
                // its factors.
                """
                CREATE TABLE twilio_entities (
                    service_sid TEXT NOT NULL REFERENCES twilio_services(sid) ON DELETE CASCADE,
                    identity TEXT NOT NULL,
                    sid TEXT NOT NULL UNIQUE,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (service_sid, identity)
                )
                """,
                // The Twilio side of a Verity factor: its service and entity, the device's `Metadata`, the TOTP
                // skew, and failed verification attempts (5 are allowed, as on Twilio).
                """
                CREATE TABLE twilio_factors (
                    factor_id TEXT PRIMARY KEY,
                    service_sid TEXT NOT NULL,
                    identity TEXT NOT NULL,
                    metadata TEXT,
                    totp_skew INTEGER,
                    failed_attempts INTEGER NOT NULL DEFAULT 0,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX twilio_factors_entity ON twilio_factors (service_sid, identity)",
                // An access token (YK…): a Verity enrollment token for one push factor, with what Twilio echoes.
                """
                CREATE TABLE twilio_access_tokens (
                    sid TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    service_sid TEXT NOT NULL,
                    identity TEXT NOT NULL,
                    factor_friendly_name TEXT,
                    token_hash TEXT NOT NULL UNIQUE,
                    ttl INTEGER NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """,
            ]),
        Migration(
            version: 9, name: "Twilio Verify webhooks",
            statements: [
                // A webhook (YW…) of a Twilio service: where its Verify Push events go, form-encoded and signed as
                // Twilio signs them.
                """
                CREATE TABLE twilio_webhooks (
                    sid TEXT PRIMARY KEY,
                    service_sid TEXT NOT NULL REFERENCES twilio_services(sid) ON DELETE CASCADE,
                    friendly_name TEXT NOT NULL,
                    event_types TEXT NOT NULL,
                    webhook_url TEXT NOT NULL,
                    status TEXT NOT NULL,
                    version TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX twilio_webhooks_service ON twilio_webhooks (service_sid, created_at, sid)",
            ]),
        Migration(
            version: 10, name: "canonical destination keys, single-use step-up approvals, test-number flows",
            statements: [
                // Codes, limits and look-ups are keyed on the canonical login key (an email address lowercased as a
                // whole), so case variants of one address share one pending code, one set of attempts and one bucket.
                // The address as given stays in `destination`: it is what is shown and sent to.
                "ALTER TABLE verifications ADD COLUMN destination_key TEXT NOT NULL DEFAULT ''",
                """
                UPDATE verifications
                SET destination_key = CASE WHEN channel = 'email' THEN lower(destination) ELSE destination END
                """,
                // Case variants pending side by side (the hole this closes): the oldest stays pending.
                """
                UPDATE verifications SET status = 'expired'
                WHERE status = 'pending' AND EXISTS (
                    SELECT 1 FROM verifications older
                    WHERE older.project_id = verifications.project_id AND older.purpose = verifications.purpose
                      AND older.destination_key = verifications.destination_key AND older.status = 'pending'
                      AND (older.created_at < verifications.created_at
                           OR (older.created_at = verifications.created_at AND older.id < verifications.id)))
                """,
                "DROP INDEX verifications_pending_destination",
                """
                CREATE UNIQUE INDEX verifications_pending_destination
                    ON verifications (project_id, purpose, destination_key) WHERE status = 'pending'
                """,
                // An approved step-up challenge is used once: `consumed_at` is set by the step-up it approved.
                "ALTER TABLE challenges ADD COLUMN consumed_at DOUBLE PRECISION",
                // Whether a possession flow's number is one of the project's test numbers, for the validate answer;
                // and the number the backend started it with, the only one that may be a test number in that flow.
                "ALTER TABLE possession_flows ADD COLUMN test_number INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE possession_flows ADD COLUMN backend_phone TEXT",
                "UPDATE possession_flows SET backend_phone = phone WHERE status = 'created'",
            ]),
        Migration(
            version: 11, name: "factor attempt lock-out",
            statements: [
                // Wrong codes or proofs in a row, for every face (it was the Twilio face's own count), and when the
                // last attempt was, so a verified factor's lock can end.
                "ALTER TABLE factors ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE factors ADD COLUMN last_attempt_at DOUBLE PRECISION",
                """
                UPDATE factors SET failed_attempts =
                    (SELECT t.failed_attempts FROM twilio_factors t WHERE t.factor_id = factors.id)
                WHERE id IN (SELECT factor_id FROM twilio_factors)
                """,
            ]),
        Migration(
            version: 12, name: "factor metadata",
            statements: [
                // The app's metadata belongs to the factor on every face (it was the Twilio face's own); the Twilio
                // column is no longer read or written.
                "ALTER TABLE factors ADD COLUMN metadata TEXT",
                """
                UPDATE factors SET metadata =
                    (SELECT t.metadata FROM twilio_factors t WHERE t.factor_id = factors.id)
                WHERE id IN (SELECT factor_id FROM twilio_factors WHERE metadata IS NOT NULL)
                """,
            ]),
        Migration(
            version: 13, name: "app verification",
            statements: [
                // Whether sign-in, step-up and possession codes go only to requests that prove they come from the
                // project's app (a secret delivered by silent push). The proofs themselves are stateless (an HMAC
                // over their id) and their use is counted in rate_limits.
                "ALTER TABLE projects ADD COLUMN requires_app_verification INTEGER NOT NULL DEFAULT 0"
            ]),
        Migration(
            version: 14, name: "Firebase projects",
            statements: [
                // The Firebase face's names for a project: the Firebase project id its tokens carry, and the public
                // API key (`?key=`) its apps send.
                """
                CREATE TABLE firebase_projects (
                    project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
                    firebase_project_id TEXT NOT NULL UNIQUE,
                    api_key TEXT NOT NULL UNIQUE,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """
            ]),
        Migration(
            version: 15, name: "voice and WhatsApp channels",
            statements: [
                // The channels a project turned off (comma-separated; empty for none) and the phone channel a code
                // goes by once more when delivery by another fails permanently (NULL for none).
                "ALTER TABLE projects ADD COLUMN disabled_channels TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE projects ADD COLUMN fallback_channel TEXT",
            ]),
        Migration(
            version: 16, name: "provider message ids",
            statements: [
                // The provider's id of a sent message (Meta's `wamid.…`, Twilio's `SM…`/`CA…`): its delivery-status
                // callbacks name the message by it, and a late permanent failure sends the code by the fallback.
                "ALTER TABLE outbox ADD COLUMN provider_message_id TEXT",
                "CREATE INDEX outbox_provider_message_id ON outbox (provider_message_id)",
            ]),
        Migration(
            version: 17, name: "Descope cookie delivery",
            statements: [
                // Whether the Descope face sets the DS/DSR cookies and accepts the DSR cookie (1) or not (0).
                "ALTER TABLE projects ADD COLUMN descope_cookies INTEGER NOT NULL DEFAULT 0"
            ]),
        Migration(
            version: 18, name: "device trust",
            statements: [
                // A push factor's optional second key, whose use needs the owner (biometry or passcode).
                "ALTER TABLE factors ADD COLUMN user_verification_key TEXT",
                // Set when the owner reported unusual activity and the project suspends the factor.
                "ALTER TABLE factors ADD COLUMN suspended_at DOUBLE PRECISION",
                // What the device shows besides message and details (JSON), and how its answer was signed.
                "ALTER TABLE challenges ADD COLUMN context TEXT",
                "ALTER TABLE challenges ADD COLUMN response_key_type TEXT",
                "ALTER TABLE challenges ADD COLUMN response_amr TEXT",
                "ALTER TABLE challenges ADD COLUMN deny_reason TEXT",
                "ALTER TABLE challenges ADD COLUMN user_verification_result TEXT",
                "ALTER TABLE projects ADD COLUMN unusual_activity_response TEXT NOT NULL DEFAULT 'none'",
                "ALTER TABLE security_events ADD COLUMN factor_id TEXT",
                "ALTER TABLE security_events ADD COLUMN challenge_id TEXT",
            ]),
        Migration(
            version: 19, name: "console operators",
            statements: [
                // The people who sign in to the console. They are not a project's users: they are created from the
                // CLI on the server, and see every project. `totp_secret` is sealed; `totp_counter` is the last
                // time step whose code signed in, so one code cannot sign in twice.
                """
                CREATE TABLE console_operators (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL UNIQUE,
                    totp_secret TEXT,
                    totp_counter BIGINT NOT NULL DEFAULT 0,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """,
                // One-time sign-in links, by the hash of their secret.
                """
                CREATE TABLE console_sign_in_links (
                    token_hash TEXT PRIMARY KEY,
                    operator_id TEXT NOT NULL REFERENCES console_operators(id) ON DELETE CASCADE,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    used_at DOUBLE PRECISION
                )
                """,
                // Signed-in browsers, by the hash of their cookie.
                """
                CREATE TABLE console_sessions (
                    id TEXT PRIMARY KEY,
                    token_hash TEXT NOT NULL UNIQUE,
                    operator_id TEXT NOT NULL REFERENCES console_operators(id) ON DELETE CASCADE,
                    created_at DOUBLE PRECISION NOT NULL,
                    last_seen_at DOUBLE PRECISION NOT NULL,
                    ended_at DOUBLE PRECISION
                )
                """,
                // What operators did, newest first.
                """
                CREATE TABLE console_audit (
                    id TEXT PRIMARY KEY,
                    operator_id TEXT NOT NULL,
                    action TEXT NOT NULL,
                    target TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX console_audit_created ON console_audit (created_at, id)",
                // The dashboard and the console's lists read recent rows of every project.
                "CREATE INDEX verifications_created ON verifications (created_at, id)",
                "CREATE INDEX outbox_status_created ON outbox (status, created_at, id)",
                "CREATE INDEX verifications_destination_key_created ON verifications (destination_key, created_at)",
                "CREATE INDEX outbox_destination_created ON outbox (destination, created_at)",
                // The dashboard's counts of days that can no longer change (a code lives at most a day), written
                // once per day by the first node that shows it; `channel` '' marks a day with no verification.
                """
                CREATE TABLE verification_days (
                    day BIGINT NOT NULL,
                    channel TEXT NOT NULL,
                    status TEXT NOT NULL,
                    region TEXT NOT NULL,
                    count BIGINT NOT NULL,
                    PRIMARY KEY (day, channel, status, region)
                )
                """,
            ]),
        Migration(
            version: 20, name: "session claims, Descope project ids",
            statements: [
                // Claims a client asked for when it started a sign-in or step-up (Descope's
                // `loginOptions.customClaims`, JSON), kept with the pending code until it is proven...
                "ALTER TABLE verifications ADD COLUMN session_claims TEXT",
                // ...and then on the session, whose every token carries them.
                "ALTER TABLE sessions ADD COLUMN claims TEXT",
                // The project id the Descope face also answers to (an app's Descope project id), one project's.
                "ALTER TABLE projects ADD COLUMN descope_project_id TEXT",
                "CREATE UNIQUE INDEX projects_descope_project_id ON projects (descope_project_id)",
            ]),
        Migration(
            version: 21, name: "announce API-key changes",
            statements: [],
            // Every committed change to a key or a project (by any node, the CLI or an operator's own SQL) notifies
            // the channel each server listens on, with the schema changed, and the servers of that schema empty
            // their cache of API keys (APIKeyCache). A new key needs no notification: unknown keys are never cached.
            postgresStatements: [
                """
                CREATE FUNCTION verity_notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pg_notify('verity_api_keys', TG_TABLE_SCHEMA);
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE OR TRUNCATE ON api_keys
                FOR EACH STATEMENT EXECUTE FUNCTION verity_notify_api_key_change()
                """,
                """
                CREATE TRIGGER projects_changed AFTER UPDATE OR DELETE OR TRUNCATE ON projects
                FOR EACH STATEMENT EXECUTE FUNCTION verity_notify_api_key_change()
                """,
            ],
            // SQLite cannot notify another process, so the same changes are counted in one row, which a request
            // reads before it trusts a key kept in memory.
            sqliteStatements: [
                "CREATE TABLE key_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL)",
                "INSERT INTO key_epoch (id, epoch) VALUES (1, 0)",
                """
                CREATE TRIGGER api_keys_updated AFTER UPDATE ON api_keys
                BEGIN UPDATE key_epoch SET epoch = epoch + 1; END
                """,
                """
                CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
                BEGIN UPDATE key_epoch SET epoch = epoch + 1; END
                """,
                """
                CREATE TRIGGER projects_updated AFTER UPDATE ON projects
                BEGIN UPDATE key_epoch SET epoch = epoch + 1; END
                """,
                """
                CREATE TRIGGER projects_deleted AFTER DELETE ON projects
                BEGIN UPDATE key_epoch SET epoch = epoch + 1; END
                """,
            ]),
        Migration(
            version: 22, name: "console sign-in attempts, project settings version",
            statements: [
                // Codes tried with a sign-in link: after a few the link is spent, right code or not.
                "ALTER TABLE console_sign_in_links ADD COLUMN code_attempts INTEGER NOT NULL DEFAULT 0",
                // Runs of console sign-in codes without a right one, per operator and per client address, and the
                // lock-out (back-off) the last of them earned.
                """
                CREATE TABLE console_sign_in_failures (
                    subject TEXT PRIMARY KEY,
                    failures INTEGER NOT NULL,
                    last_failure_at DOUBLE PRECISION NOT NULL,
                    locked_until DOUBLE PRECISION
                )
                """,
                // Bumped by every settings write, which succeeds only on the version it read (compare and set), so
                // two concurrent changes cannot undo one another.
                "ALTER TABLE projects ADD COLUMN settings_version BIGINT NOT NULL DEFAULT 0",
            ]),
        Migration(
            version: 23, name: "possession flows allow test numbers only when asked",
            statements: [
                // Whether the backend's start let the app run the flow on a test number (`allowTestNumbers`).
                "ALTER TABLE possession_flows ADD COLUMN allow_test_numbers INTEGER NOT NULL DEFAULT 0"
            ]),
        Migration(
            version: 24, name: "firebase emulator admin per project",
            statements: [
                // Whether the Firebase face serves this project as the Auth emulator's admin side (`off`,
                // `test_numbers` or `all_numbers`): a per-project opt-in, off for every project that exists.
                "ALTER TABLE projects ADD COLUMN firebase_emulator_admin TEXT NOT NULL DEFAULT 'off'"
            ]),
        Migration(
            version: 25, name: "APNs environment per factor",
            statements: [
                // `production` or `sandbox`, as the device reported at enrollment; NULL for the server's configured one.
                "ALTER TABLE factors ADD COLUMN apns_environment TEXT"
            ]),
        Migration(
            version: 26, name: "the face that started a verification",
            statements: [
                // `firebase` for a code the Firebase face started (its emulator lists only those); NULL otherwise.
                "ALTER TABLE verifications ADD COLUMN started_by TEXT"
            ]),
        Migration(
            version: 27, name: "carrier check (CAMARA Number Verification)",
            statements: [
                // The project's carrier check as JSON (CarrierCheckSettings, without its secret); NULL: never set.
                "ALTER TABLE projects ADD COLUMN carrier_check TEXT",
                // The aggregator's client secret, sealed like the webhook secret.
                "ALTER TABLE projects ADD COLUMN carrier_client_secret TEXT",
                // Where a flow's carrier check stands (CarrierCheckStatus); NULL for a flow without one.
                "ALTER TABLE possession_flows ADD COLUMN carrier_check TEXT",
                // The hash of the OAuth `state` the operator hands back, until the callback uses it (single use).
                "ALTER TABLE possession_flows ADD COLUMN carrier_state_hash TEXT",
                "CREATE UNIQUE INDEX possession_flows_carrier_state ON possession_flows (carrier_state_hash)",
            ]),
        Migration(
            version: 28, name: "App Attest settings, challenges and keys",
            statements: [
                "ALTER TABLE projects ADD COLUMN app_attest_enabled INTEGER NOT NULL DEFAULT 0",
                "ALTER TABLE projects ADD COLUMN app_attest_team_id TEXT",
                "ALTER TABLE projects ADD COLUMN app_attest_bundle_id TEXT",
                "ALTER TABLE projects ADD COLUMN app_attest_environment TEXT NOT NULL DEFAULT 'production'",
                // A challenge is kept as its SHA-256 and deleted as it is used: single use is one DELETE.
                """
                CREATE TABLE app_attest_challenges (
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    challenge_hash TEXT NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (project_id, challenge_hash)
                )
                """,
                "CREATE INDEX app_attest_challenges_expiry ON app_attest_challenges (expires_at)",
                // An attested key: its public key (the uncompressed P-256 point, base64) and the last counter seen.
                """
                CREATE TABLE app_attest_keys (
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    key_id TEXT NOT NULL,
                    public_key TEXT NOT NULL,
                    counter BIGINT NOT NULL,
                    environment TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (project_id, key_id)
                )
                """,
            ]),
        Migration(
            version: 29, name: "passkeys: relying-party settings, credentials and challenges",
            statements: [
                // The project's relying party as JSON (PasskeySettings); NULL: passkeys off.
                "ALTER TABLE projects ADD COLUMN passkeys TEXT",
                // A user's passkey: what the relying party needs to check its assertions (the COSE key as sent, the
                // last counter, BE and BS), and what the user sees (name, transports, authenticator model).
                """
                CREATE TABLE passkeys (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    credential_id TEXT NOT NULL,
                    \(passkeyColumns)
                )
                """,
                // Credential ids are unique per project: a second registration of one is refused.
                "CREATE UNIQUE INDEX passkeys_credential ON passkeys (project_id, credential_id)",
                "CREATE INDEX passkeys_user ON passkeys (user_id)",
                // A challenge is kept as its SHA-256, bound to its ceremony (`registration`, `authentication`,
                // `step_up`) and to the user it was issued for (NULL: a sign-in without a login id), and deleted as
                // it is used: single use is one DELETE.
                """
                CREATE TABLE passkey_challenges (
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    challenge_hash TEXT NOT NULL,
                    ceremony TEXT NOT NULL,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                    expires_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (project_id, challenge_hash)
                )
                """,
                "CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at)",
            ]),
        Migration(
            version: 30, name: "possession flows owned by a face resource (Twilio's SNA verifications)",
            statements: [
                // The face resource that started the flow (a Twilio service SID for `Channel=sna`); NULL otherwise.
                "ALTER TABLE possession_flows ADD COLUMN owner TEXT",
                // A check by `To` reads the owner's newest flow for the number.
                "CREATE INDEX possession_flows_owner ON possession_flows (project_id, owner, phone, created_at)",
            ]),
        Migration(
            version: 31, name: "Twilio Verify Passkeys: service settings, entities' users, factors and challenges",
            statements: [
                // The face's id for the ceremony a passkey challenge belongs to (a Twilio YF or YC SID); NULL for
                // the native API's ceremonies.
                "ALTER TABLE passkey_challenges ADD COLUMN transaction_id TEXT",
                // The one passkey a sign-in challenge allows (`allowCredentials` of one); NULL: any of the user's.
                "ALTER TABLE passkey_challenges ADD COLUMN passkey_id TEXT",
                // A service's `Passkeys.*` settings as JSON (TwilioPasskeyConfig); NULL: none set.
                "ALTER TABLE twilio_services ADD COLUMN passkeys TEXT",
                // The Verity user behind an entity's passkeys (passkeys belong to users).
                """
                CREATE TABLE twilio_passkey_users (
                    service_sid TEXT NOT NULL REFERENCES twilio_services(sid) ON DELETE CASCADE,
                    identity TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    PRIMARY KEY (service_sid, identity)
                )
                """,
                // A passkey factor (YF…): unverified until its registration is answered, then the passkey's.
                """
                CREATE TABLE twilio_passkey_factors (
                    sid TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    service_sid TEXT NOT NULL REFERENCES twilio_services(sid) ON DELETE CASCADE,
                    identity TEXT NOT NULL,
                    entity_sid TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    passkey_id TEXT,
                    friendly_name TEXT NOT NULL,
                    settings TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX twilio_passkey_factors_passkey ON twilio_passkey_factors (passkey_id)",
                // A passkey challenge (YC…) of an entity, maybe for one factor.
                """
                CREATE TABLE twilio_passkey_challenges (
                    sid TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    service_sid TEXT NOT NULL REFERENCES twilio_services(sid) ON DELETE CASCADE,
                    identity TEXT NOT NULL,
                    entity_sid TEXT NOT NULL,
                    factor_sid TEXT,
                    status TEXT NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    responded_at DOUBLE PRECISION
                )
                """,
            ]),
        Migration(
            version: 32, name: "console operators' passkeys, hosted passkey links",
            statements: [
                // An operator's passkey: what the console's relying party needs to check its assertions (the COSE
                // key as sent, the last counter, BE and BS) and what the operator sees. Operators are not a project's
                // users, so their credentials are not in `passkeys`; credential ids are unique on the server.
                """
                CREATE TABLE console_passkeys (
                    id TEXT PRIMARY KEY,
                    operator_id TEXT NOT NULL REFERENCES console_operators(id) ON DELETE CASCADE,
                    credential_id TEXT NOT NULL UNIQUE,
                    \(passkeyColumns)
                )
                """,
                "CREATE INDEX console_passkeys_operator ON console_passkeys (operator_id)",
                // A ceremony's challenge, kept as its SHA-256 and deleted as it is used, bound to the ceremony, the
                // operator and, for a sign-in, the sign-in link it was issued for.
                """
                CREATE TABLE console_passkey_challenges (
                    challenge_hash TEXT PRIMARY KEY,
                    ceremony TEXT NOT NULL,
                    operator_id TEXT NOT NULL REFERENCES console_operators(id) ON DELETE CASCADE,
                    link_hash TEXT,
                    expires_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX console_passkey_challenges_expiry ON console_passkey_challenges (expires_at)",
                // A project's hosted passkey page: a single-use link (by the hash of its secret) for one ceremony,
                // registration for `user_id` or sign-in (as `user_id`, or discoverable when NULL). `status` is
                // `pending`, `answering` while an answer is checked, then `completed` with the passkey; a sign-in
                // keeps its session answer sealed until the backend reads it once.
                """
                CREATE TABLE passkey_links (
                    id TEXT PRIMARY KEY,
                    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
                    user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                    ceremony TEXT NOT NULL,
                    token_hash TEXT NOT NULL UNIQUE,
                    status TEXT NOT NULL,
                    passkey_id TEXT,
                    session_answer TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    completed_at DOUBLE PRECISION
                )
                """,
            ]),
        Migration(
            version: 33, name: "passkey sign-ups: a registration challenge for a user who does not exist yet",
            statements: [
                // The id the new user will have (its user handle) and the login ids it will hold, comma-separated;
                // both NULL except on a sign-up's challenge, which names no existing user. The user is written only
                // when the answer is accepted.
                "ALTER TABLE passkey_challenges ADD COLUMN new_user_id TEXT",
                "ALTER TABLE passkey_challenges ADD COLUMN new_login_ids TEXT",
            ]),
        Migration(
            version: 34, name: "the app verification proof that admitted a code's send",
            statements: [
                // `silent_push` or `app_attest` when app verification admitted the send; NULL when none was asked.
                "ALTER TABLE verifications ADD COLUMN app_proof TEXT"
            ]),
        Migration(
            version: 35, name: "a hosted passkey link's answer taken over once its holder is gone",
            statements: [
                // When the answer in progress began; NULL unless the link is `answering`. An answer begun longer ago
                // than `PasskeyLink.answerLease` belongs to a node that stopped, and the link takes another.
                "ALTER TABLE passkey_links ADD COLUMN answer_started_at DOUBLE PRECISION"
            ]),
        Migration(
            version: 36, name: "the claims a client asked a passkey sign-in's session to carry",
            statements: [
                // A JSON object of claims (checked when the challenge was issued) for the session the answer opens or
                // steps up; NULL for none.
                "ALTER TABLE passkey_challenges ADD COLUMN session_claims TEXT"
            ]),
    ]

    /// Takes the migration lock of `schema` (nil: the current schema) until the transaction ends. Several nodes may
    /// start at once: one migrates, the others wait and then find nothing to do. The lock is the schema's, so
    /// deployments in other schemas of the same database migrate at the same time (a test run migrates hundreds of
    /// schemas; under one lock for all, each test waited for every migration before its own).
    static func lock(schema: String? = nil, _ sql: any SQLDatabase) async throws {
        let name: SQLQueryString = schema.map { "\(bind: $0)" } ?? "coalesce(current_schema(), '')"
        try await sql.raw("SELECT pg_advisory_xact_lock(7406110, hashtext(\(name)))").run()
    }

    static func run(on database: Database, logger: Logger) async throws {
        try await database.transaction { sql in
            if database.engine == .postgres { try await lock(sql) }
            try await sql.raw(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at DOUBLE PRECISION NOT NULL
                )
                """
            ).run()
        }
        let applied = try await database.execute { sql in
            try await sql.raw("SELECT version FROM schema_migrations").all().map {
                try $0.decode(column: "version", as: Int.self)
            }
        }
        let latest = applied.max() ?? 0
        if let newest = all.last?.version, latest > newest {
            throw ConfigurationError(
                "The database schema (version \(latest)) is newer than this build of Verity understands (\(newest)).")
        }
        for migration in all where !applied.contains(migration.version) {
            try await database.transaction { sql in
                if database.engine == .postgres {
                    try await lock(sql)
                    let done = try await sql.raw(
                        "SELECT version FROM schema_migrations WHERE version = \(bind: migration.version)"
                    ).first()
                    if done != nil { return }
                }
                let engineOnly =
                    database.engine == .postgres ? migration.postgresStatements : migration.sqliteStatements
                for statement in migration.statements + engineOnly {
                    try await sql.raw(SQLQueryString(statement)).run()
                }
                try await sql.raw(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: Date().timeIntervalSince1970))
                    """
                ).run()
            }
            logger.info(
                "Applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
        }
    }
}
