package xapi

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"
)

var b64 = base64.RawURLEncoding

func signRS(t *testing.T, key *rsa.PrivateKey, alg string, header map[string]any, payload []byte) string {
	t.Helper()
	header["alg"] = alg
	hb, _ := json.Marshal(header)
	input := b64.EncodeToString(hb) + "." + b64.EncodeToString(payload)
	h := map[string]crypto.Hash{"RS256": crypto.SHA256, "RS384": crypto.SHA384, "RS512": crypto.SHA512}[alg]
	hh := h.New()
	hh.Write([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, h, hh.Sum(nil))
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + b64.EncodeToString(sig)
}

// signedStatement attaches jws to statement (as the signature attachment) and parses it.
func signedStatement(t *testing.T, statement string, jws string) (*Statement, map[string][]byte) {
	t.Helper()
	h := sha256Hex([]byte(jws))
	var m map[string]any
	if err := json.Unmarshal([]byte(statement), &m); err != nil {
		t.Fatal(err)
	}
	m["attachments"] = []any{map[string]any{"usageType": SignatureUsageType, "display": map[string]any{"en-US": "Signed"},
		"contentType": "application/octet-stream", "length": len(jws), "sha2": h}}
	b, _ := json.Marshal(m)
	return parseOne(t, string(b), V200), map[string][]byte{h: []byte(jws)}
}

func TestVerifySignature(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "signer"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	x5c := []string{base64.StdEncoding.EncodeToString(der)}

	stmt := string(stmtJSON(mod{"id", "9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}, mod{"result", raw(`{"duration":"P1DT12H36M0.12S"}`)}))
	hmacJWS := func() string {
		hb := b64.EncodeToString([]byte(`{"alg":"HS256"}`))
		in := hb + "." + b64.EncodeToString([]byte(stmt))
		m := hmac.New(sha256.New, []byte("secret"))
		m.Write([]byte(in))
		return in + "." + b64.EncodeToString(m.Sum(nil))
	}
	for _, c := range []struct {
		name      string
		statement string
		jws       string
		ok        bool
	}{
		{"RS256", stmt, signRS(t, key, "RS256", map[string]any{}, []byte(stmt)), true},
		{"RS384", stmt, signRS(t, key, "RS384", map[string]any{}, []byte(stmt)), true},
		{"RS512", stmt, signRS(t, key, "RS512", map[string]any{}, []byte(stmt)), true},
		{"RS256 with x5c", stmt, signRS(t, key, "RS256", map[string]any{"x5c": x5c}, []byte(stmt)), true},
		{"x5c of another key", stmt, signRS(t, other, "RS256", map[string]any{"x5c": x5c}, []byte(stmt)), false},
		{"HS256", stmt, hmacJWS(), false},
		{"payload not JSON", stmt, signRS(t, key, "RS256", map[string]any{}, []byte(strings.Replace(stmt, `"`, `'`, 1))), false},
		{"payload differs", stmt, signRS(t, key, "RS256", map[string]any{}, stmtJSON(mod{"verb.id", "http://example.com/other"})), false},
		{"payload other id", stmt, signRS(t, key, "RS256", map[string]any{}, stmtJSON(mod{"id", "00000000-53d3-4eac-b5ed-2cf6693903bb"}, mod{"result", raw(`{"duration":"P1DT12H36M0.12S"}`)})), false},
		{"duration precision beyond 0.01s", strings.Replace(stmt, "0.12S", "0.1237S", 1), signRS(t, key, "RS256", map[string]any{}, []byte(stmt)), true},
		{"not compact JWS", stmt, "garbage", false},
		{"bad base64", stmt, "a.b!.c", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, atts := signedStatement(t, c.statement, c.jws)
			if err := s.VerifySignature(atts); (err == nil) != c.ok {
				t.Fatalf("ok=%v err=%v", c.ok, err)
			}
		})
	}
	t.Run("unsigned", func(t *testing.T) {
		if err := parseOne(t, stmt, V200).VerifySignature(nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("signature part missing", func(t *testing.T) {
		s, _ := signedStatement(t, stmt, signRS(t, key, "RS256", map[string]any{}, []byte(stmt)))
		if err := s.VerifySignature(map[string][]byte{}); err == nil {
			t.Fatal("accepted without the JWS")
		}
	})
}
