package scan

import (
	"encoding/binary"
	"strings"
	"time"
)

// scanColumns are the columns the writer fills, in the order
// appendCopyRows encodes them; xid takes its default, the writing
// transaction's id, which the fold's watermark is made of.
var scanColumns = []string{"id", "workspace_id", "link_id", "occurred_at", "referrer_host", "device", "os", "browser", "bot", "visitor_hash", "country", "source", "variant"}

// copyScansSQL is the COPY the writer sends its batch with.
var copyScansSQL = "COPY scans (" + strings.Join(scanColumns, ", ") + ") FROM STDIN WITH (FORMAT binary)"

// copyHeader opens PostgreSQL's binary COPY format: the signature, no
// flags, no header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// pgEpoch is where PostgreSQL's binary timestamps count from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// appendCopyRows encodes rows as one binary COPY stream onto buf.
//
// The writer encodes its batches itself rather than through pgx.CopyFrom:
// that boxes each of a row's twelve values in an interface and wraps each
// UUID and time in an encode plan, about 20 allocations a scan, which the
// garbage collector then pays for on the redirect's CPUs. This is one
// append per field into a buffer the writer reuses (TestCopyRowsRoundTrip
// reads a batch back through PostgreSQL).
func appendCopyRows(buf []byte, rows []row) []byte {
	buf = append(buf, copyHeader...)
	for i := range rows {
		x := &rows[i]
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(scanColumns)))
		buf = appendField(buf, x.id[:])
		buf = appendField(buf, x.hit.WorkspaceID[:])
		buf = appendField(buf, x.hit.LinkID[:])
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(x.hit.At.Sub(pgEpoch).Microseconds()))
		if x.referrer == nil {
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF) // NULL
		} else {
			buf = appendTextField(buf, *x.referrer)
		}
		buf = appendTextField(buf, x.client.Device)
		buf = appendTextField(buf, x.client.OS)
		buf = appendTextField(buf, x.client.Browser)
		bot := byte(0)
		if x.client.Bot {
			bot = 1
		}
		buf = appendField(buf, []byte{bot})
		buf = appendField(buf, x.visitorHash[:])
		if x.hit.Country.Known() {
			buf = appendField(buf, x.hit.Country[:])
		} else {
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF) // NULL
		}
		buf = appendTextField(buf, string(SourceOf(x.hit.QR)))
		if x.hit.Variant == "" {
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF) // NULL
		} else {
			buf = appendTextField(buf, x.hit.Variant)
		}
	}
	return binary.BigEndian.AppendUint16(buf, 0xFFFF) // the trailer
}

func appendField(buf, v []byte) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
	return append(buf, v...)
}

func appendTextField(buf []byte, v string) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
	return append(buf, v...)
}
