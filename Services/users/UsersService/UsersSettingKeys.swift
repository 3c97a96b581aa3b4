import SettingsKit

/// `ride-users`' own settings, each declared once: the flags and the values come from here.
enum UsersSettingKeys {
    static let tokenSecretFile = SettingKey(
        "token-secret-file", env: "RIDE_TOKEN_SECRET_FILE", default: "<data-dir>/users-token.key",
        "File holding the token signing key (made, 32 random bytes, when missing)")
    static let tokenPreviousSecretFile = SettingKey(
        "token-previous-secret-file", env: "RIDE_TOKEN_PREVIOUS_SECRET_FILE", default: "none",
        "File holding the previous signing key, still accepted during a rotation")
    static let tokenTTLSeconds = IntegerSettingKey(
        "token-ttl-s", env: "RIDE_TOKEN_TTL_S", default: 900, range: 60...86_400, "How long an access token is valid, in seconds")
    static let refreshTTLSeconds = IntegerSettingKey(
        "refresh-ttl-s", env: "RIDE_REFRESH_TTL_S", default: 2_592_000, range: 300...31_536_000,
        "How long a refresh token is valid, in seconds")
    static let passwordRounds = IntegerSettingKey(
        "password-rounds", env: "RIDE_PASSWORD_ROUNDS", default: PasswordHasher.defaultRounds, range: 1000...10_000_000,
        "PBKDF2-SHA256 rounds for new password hashes")
    static let reauthenticationWindowSeconds = IntegerSettingKey(
        "reauthentication-window-s", env: "RIDE_REAUTHENTICATION_WINDOW_S", default: Int(Reauthentication.defaultWindow), range: 0...3600,
        "Seconds after a log-in in which its session may change the password or phone number without current_password (0: never)")
    static let replacedPhotoRetentionSeconds = IntegerSettingKey(
        "replaced-photo-retention-s", env: "RIDE_REPLACED_PHOTO_RETENTION_S", default: Int(PhotoOps.defaultKeepReplaced),
        range: 0...31_536_000, "Seconds a replaced photo no one else uses is kept (a report may show it) before it is deleted")
    static let credentialReplaySeconds = IntegerSettingKey(
        "credential-replay-s", env: "RIDE_CREDENTIAL_REPLAY_S", default: Int(UsersOps.defaultCredentialReplay), range: 1...3600,
        "Seconds a keyed log-in's or refresh's reply (tokens, a device credential) is answered again to a retry with its Idempotency-Key")
    static let driverApproval = SettingKey(
        "driver-approval", env: "RIDE_DRIVER_APPROVAL", default: "automatic",
        "automatic: drivers may go online once signed up; required: only once an operator approved their licence and insurance")
    static let documentCheckSeconds = IntegerSettingKey(
        "document-check-s", env: "RIDE_DOCUMENT_CHECK_S", default: 60, range: 1...86_400,
        "Seconds between checks for drivers' expired documents (each ends that driver's approval)")
}
