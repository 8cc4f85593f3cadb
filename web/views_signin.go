package web

// SecondFactorView is the sign-in's second step.
type SecondFactorView struct {
	Nav      NavModel
	Email    string
	TOTP     bool // an authenticator app is set up
	Passkeys bool
	Recovery bool // unused recovery codes remain
	Error    string
}

// TwoFactorView is Account → Two-factor sign-in.
type TwoFactorView struct {
	Nav               NavModel
	TOTP              bool
	RecoveryRemaining int
	Passkeys          []PasskeyRow
	Required          bool // a workspace of the viewer requires a second factor
	PasskeysEnabled   bool // LINKQR_BASE_URL is a domain name
}

// PasskeyRow is one of the viewer's passkeys.
type PasskeyRow struct {
	ID, Name, Created, LastUsed string
}

// TOTPEnrolView shows a new authenticator secret.
type TOTPEnrolView struct {
	Nav    NavModel
	URI    string // otpauth://totp/…
	Secret string
	Error  string
}

// RecoveryCodesView shows new recovery codes, once.
type RecoveryCodesView struct {
	Nav   NavModel
	Codes []string
}

// SecurityView is Settings → Security.
type SecurityView struct {
	Nav               NavModel
	Configured        bool
	Form              SSOForm
	Errors            FieldErrors
	Domains           []SSODomainRow
	RedirectURI       string
	TwoFactorRequired bool
}

// SSOForm is the single sign-on form's values.
type SSOForm struct {
	Issuer, ClientID, DefaultRole, Domains string
	Required                               bool
}

// SSODomainRow is an e-mail domain and the TXT record that proves it.
type SSODomainRow struct {
	Name, RecordName, RecordValue string
	Verified                      bool
}
