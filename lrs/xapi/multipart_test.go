package xapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestMultipartRoundTrip(t *testing.T) {
	a1, a2 := []byte("here is a simple attachment"), []byte{0, 1, 2, 0xff, '\r', '\n', '-', '-'}
	result := []byte(`{"statements":[]}`)
	var buf bytes.Buffer
	ct, err := WriteMultipart(&buf, result, []Part{{ContentType: "text/plain", Data: a1}, {Data: a2}})
	if err != nil {
		t.Fatal(err)
	}
	js, parts, err := ParseMultipart(ct, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != string(result) || len(parts) != 2 {
		t.Fatalf("json %s, %d parts", js, len(parts))
	}
	p1, p2 := parts[sha256Hex(a1)], parts[sha256Hex(a2)]
	if !bytes.Equal(p1.Data, a1) || p1.ContentType != "text/plain" || !bytes.Equal(p2.Data, a2) || p2.ContentType != "application/octet-stream" {
		t.Fatalf("parts: %+v", parts)
	}
}

// body builds a multipart request by hand, as clients (and the conformance suite) do.
func body(boundary string, parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("--" + boundary + "\r\n" + p + "\r\n")
	}
	b.WriteString("--" + boundary + "--\r\n")
	return b.String()
}

func TestParseMultipartRules(t *testing.T) {
	att := "here is a simple attachment"
	h := sha256Hex([]byte(att))
	stmt := string(stmtJSON(mod{"attachments", raw(`[{"usageType":"http://example.com/u","display":{"en-US":"a"},"contentType":"text/plain","length":27,"sha2":"` + h + `"}]`)}))
	const bd = "-------314159265358979323846"
	ct := "multipart/mixed; boundary=" + bd
	jsonPart := "Content-Type: application/json\r\n\r\n" + stmt
	attPart := func(headers string) string { return "Content-Type: text/plain\r\n" + headers + "\r\n" + att }
	good := attPart("Content-Transfer-Encoding: binary\r\nX-Experience-API-Hash: " + h + "\r\n")
	for _, c := range []struct {
		name, ct, body string
		ok             bool
	}{
		{"good", ct, body(bd, jsonPart, good), true},
		{"no attachments", ct, body(bd, "Content-Type: application/json\r\n\r\n"+string(stmtJSON())), true},
		{"attachment part missing", ct, body(bd, jsonPart), false},
		{"headers without spaces", ct, "\r\n--" + bd + "\r\nContent-Type:application/json\r\n\r\n" + stmt + "\r\n--" + bd +
			"\r\nContent-Type:text/plain\r\nContent-Transfer-Encoding:binary\r\nX-Experience-API-Hash:" + h + "\r\n\r\n" + att + "\r\n--" + bd + "--", true},
		{"no boundary parameter", "multipart/mixed;", body(bd, jsonPart, good), false},
		{"form-data", "multipart/form-data; boundary=" + bd, body(bd, jsonPart, good), false},
		{"first part not json", ct, body(bd, "Content-Type: text/plain\r\n\r\n"+stmt, good), false},
		{"missing hash", ct, body(bd, jsonPart, attPart("Content-Transfer-Encoding: binary\r\n")), false},
		{"hash mismatch", ct, body(bd, jsonPart, attPart("Content-Transfer-Encoding: binary\r\nX-Experience-API-Hash: "+strings.Repeat("b0", 32)+"\r\n")), false},
		{"base64 encoding", ct, body(bd, jsonPart, attPart("Content-Transfer-Encoding: base64\r\nX-Experience-API-Hash: "+h+"\r\n")), false},
		{"no transfer encoding", ct, body(bd, jsonPart, attPart("X-Experience-API-Hash: "+h+"\r\n")), false},
		{"statements in two parts", ct, body(bd, jsonPart, jsonPart, good), false},
		{"boundary missing before part", ct, "--" + bd + "\r\n" + jsonPart + "\r\n" + good + "\r\n--" + bd + "--\r\n", false},
		{"empty", ct, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			js, parts, err := ParseMultipart(c.ct, []byte(c.body))
			if err == nil {
				// what the HTTP layer does next: parse, then match parts and attachments
				var stmts []*Statement
				if stmts, _, err = ParseStatements(js, V103); err == nil {
					err = CheckAttachments(stmts, parts)
				}
			}
			if (err == nil) != c.ok {
				t.Fatalf("ok=%v err=%v", c.ok, err)
			}
		})
	}
}

func TestCheckAttachments(t *testing.T) {
	h1, h2 := sha256Hex([]byte("one")), sha256Hex([]byte("two"))
	att := func(h, extra string) string {
		return `{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":3,"sha2":"` + h + `"` + extra + `}`
	}
	withURL := parseOne(t, string(stmtJSON(mod{"attachments", raw(`[` + att(h1, `,"fileUrl":"http://example.com/f"`) + `]`)})), V103)
	noURL := parseOne(t, string(stmtJSON(mod{"attachments", raw(`[` + att(h2, "") + `]`)})), V103)
	p := func(hs ...string) map[string]Part {
		m := map[string]Part{}
		for _, h := range hs {
			m[h] = Part{}
		}
		return m
	}
	for _, c := range []struct {
		name  string
		stmts []*Statement
		parts map[string]Part
		ok    bool
	}{
		{"json with fileUrl", []*Statement{withURL}, nil, true},
		{"json without fileUrl", []*Statement{noURL}, nil, false},
		{"part given", []*Statement{withURL, noURL}, p(h2), true},
		{"part for fileUrl attachment too", []*Statement{withURL, noURL}, p(h1, h2), true},
		{"missing part", []*Statement{withURL, noURL}, p(h1), false},
		{"excess part", []*Statement{noURL}, p(h2, sha256Hex([]byte("three"))), false},
	} {
		if err := CheckAttachments(c.stmts, c.parts); (err == nil) != c.ok {
			t.Errorf("%s: ok=%v err=%v", c.name, c.ok, err)
		}
	}
}
