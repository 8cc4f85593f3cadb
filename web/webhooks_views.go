package web

// WebhookRow is one subscription as Settings → Webhooks shows it.
type WebhookRow struct {
	ID             string // "whk_…"
	URL            string
	Description    string
	Events         []string
	Status         string // "enabled" or "disabled"
	Enabled        bool
	DisabledReason string // why it was disabled, when it is
	Health         string // success rate and p95 of the last 24 h
	Healthy        bool   // no failed attempt in the last 24 h
	LastFailure    string // "" when none in the last 24 h
	CreatedAt      string
	CreatedBy      string // who added it; "" when not recorded (older than the audit log)
}

// WebhooksView is the list of subscriptions.
type WebhooksView struct {
	Nav   NavModel
	Hooks []WebhookRow
	First bool   // the newest page
	Older string // query string of the next page, "" on the last
}

// EventOption is one event checkbox of the form.
type EventOption struct {
	Name        string
	Description string
	Checked     bool
}

// WebhookFormView is the create or edit form, filled in again after a
// failed post.
type WebhookFormView struct {
	Nav          NavModel
	Editing      bool
	Hook         WebhookRow // the subscription being edited
	URL          string
	Description  string
	Events       []EventOption
	AllowPrivate bool // LINKQR_WEBHOOK_ALLOW_PRIVATE: http and private addresses accepted
	Errors       FieldErrors
}

// WebhookSecretView shows a new or rotated signing secret, once.
type WebhookSecretView struct {
	Nav     NavModel
	Shown   bool // false: shown already (or never existed)
	ID      string
	URL     string
	Secret  string
	Rotated bool
}

// DeliveryRow is one attempt of the delivery log.
type DeliveryRow struct {
	ID           string // "dlv_…"
	Status       string // pending, succeeded, failed
	EventType    string
	EventID      string
	Attempt      string
	ResponseCode string // "—" when there was no answer
	Duration     string // "—" while pending
	Error        string
	CreatedAt    string
	NextAttempt  string // "" when nothing more is scheduled
	Retryable    bool   // sent already, and the subscription is enabled
}

// WebhookView is one subscription's page with its delivery log.
type WebhookView struct {
	Nav        NavModel
	Hook       WebhookRow
	Deliveries []DeliveryRow
	First      bool
	Older      string
}

// WebhookDeleteView asks before deleting a subscription.
type WebhookDeleteView struct {
	Nav  NavModel
	Hook WebhookRow
}

// DeliveryDetailView is one delivery's page: the request as sent and every
// attempt of its event with the response.
type DeliveryDetailView struct {
	Nav      NavModel
	HookID   string
	HookURL  string
	Event    string // type and id
	Body     string // the request body; "" when the event was deleted
	Attempts []AttemptView
}

// AttemptView is one attempt on the delivery detail page.
type AttemptView struct {
	Row             DeliveryRow
	Current         bool // the delivery the page was opened for
	RequestHeaders  []HeaderLine
	ResponseHeaders []HeaderLine
	ResponseBody    string
}

// HeaderLine is one header field, as shown.
type HeaderLine struct{ Name, Value string }
