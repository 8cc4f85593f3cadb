package web

import (
	"maps"
	"net/http"
	"slices"

	"github.com/linkqr/linkqr/internal/wire"
)

// webhookDelivery is the delivery detail page: the request as sent
// (headers with the signature, body) and every attempt's response.
func (u *UI) webhookDelivery(w http.ResponseWriter, r *http.Request) {
	ws, _ := workspaceFrom(r.Context())
	id, dlv, ok := u.deliveryParams(w, r)
	if !ok {
		return
	}
	d, err := u.Webhooks.DeliveryDetail(r.Context(), ws.ID, id, dlv)
	if u.failed(w, r, err) {
		return
	}
	view := DeliveryDetailView{
		HookID: wire.WebhookID(id), HookURL: d.URL, Body: d.Body,
		Event: string(d.Delivery.EventType) + " " + wire.EventID(d.Delivery.EventID),
	}
	for _, a := range d.Attempts {
		av := AttemptView{Row: deliveryRow(a, false), Current: a.ID == dlv,
			RequestHeaders: headerLines(d.RequestHeaders(a)), ResponseHeaders: headerLines(a.ResponseHeaders)}
		if a.ResponseBody != nil {
			av.ResponseBody = *a.ResponseBody
		}
		view.Attempts = append(view.Attempts, av)
	}
	view.Nav = u.nav(w, r, sectionWebhooks)
	Render(w, r, http.StatusOK, WebhookDeliveryPage(view))
}

// headerLines lists header fields sorted by name, one line per value.
func headerLines(h map[string][]string) []HeaderLine {
	var out []HeaderLine
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			out = append(out, HeaderLine{Name: name, Value: v})
		}
	}
	return out
}
