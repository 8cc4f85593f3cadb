-- +goose Up
-- The delivery detail page shows each attempt as it was sent and answered.
-- The request body and the other request headers follow from the event and
-- the attempt; the signature header carries a timestamp, so it is kept as
-- sent. The receiver's response headers are kept too (bounded by the
-- worker: at most 50 fields, values cut to 512 bytes).
ALTER TABLE webhook_deliveries
    ADD COLUMN request_signature text CHECK (length(request_signature) <= 1024),
    ADD COLUMN response_headers  jsonb;

-- Every attempt of one event to one subscription, in order.
-- (webhook_deliveries_event_idx already serves it.)

-- +goose Down
ALTER TABLE webhook_deliveries DROP COLUMN request_signature, DROP COLUMN response_headers;
