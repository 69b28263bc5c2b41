package statements

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// reportCursor continues a report after K (the backend's last sort values or key: a stored
// instant, an aggregation's after key); F fingerprints the method and filters, so a cursor
// cannot continue another report.
type reportCursor struct {
	K json.RawMessage `json:"k"`
	F string          `json:"f"`
}

func reportFingerprint(method string, q ReportQuery) string {
	b, _ := json.Marshal([]string{method, q.Tenant, q.Agent, q.Activity, q.Viewer})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// EncodeReportCursor is the opaque cursor that continues report method of q after key. Both
// report backends use it, so a cursor's shape and checks are the same whatever the store.
func EncodeReportCursor(method string, q ReportQuery, key any) string {
	k, _ := json.Marshal(key)
	b, _ := json.Marshal(reportCursor{K: k, F: reportFingerprint(method, q)})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeReportCursor stores q.Cursor's key into key; it leaves key alone without a cursor.
// A malformed cursor, or one of another report or other filters, is ErrInvalid.
func DecodeReportCursor(method string, q ReportQuery, key any) error {
	if q.Cursor == "" {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
	var c reportCursor
	if err != nil || json.Unmarshal(b, &c) != nil || json.Unmarshal(c.K, key) != nil {
		return fmt.Errorf("%w: malformed report cursor", ErrInvalid)
	}
	if c.F != reportFingerprint(method, q) {
		return fmt.Errorf("%w: cursor belongs to another report", ErrInvalid)
	}
	return nil
}
