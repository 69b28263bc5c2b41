package xapi

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
)

// jwsHashes are the algorithms xAPI allows for signed statements.
var jwsHashes = map[string]crypto.Hash{
	"RS256": crypto.SHA256,
	"RS384": crypto.SHA384,
	"RS512": crypto.SHA512,
}

// VerifySignature checks a signed statement (xAPI Data 2.6): the attachment with usageType
// http://adlnet.gov/expapi/attachments/signature must be a JWS in compact serialisation using
// RS256, RS384 or RS512, whose payload is a JSON statement equal to this one by the
// statement comparison rules (attachments and LRS-assigned properties left aside; id and
// timestamp compared when both sides have them). When the JWS header carries an x5c chain
// the signature is verified with the first certificate's key (and the chain's links
// checked); without one only the form is checked, which is all xAPI asks ("a way to catch
// mistakes, not a security measure"). attachments maps sha2 to content, as from
// ParseMultipart. It returns nil for an unsigned statement.
func (s *Statement) VerifySignature(attachments map[string][]byte) error {
	var sig *AttachmentRef
	for _, a := range topAttachments(s.m) {
		if a.Signature {
			sig = &a
			break
		}
	}
	if sig == nil {
		return nil
	}
	path := "statement.attachments.signature"
	data, ok := attachments[sig.SHA2]
	if !ok {
		return errf(path, "the signature's content was not sent")
	}
	segs := strings.Split(strings.TrimSpace(string(data)), ".")
	if len(segs) != 3 {
		return errf(path, "not a JWS in compact serialisation")
	}
	hdrJSON, err1 := base64.RawURLEncoding.DecodeString(segs[0])
	payload, err2 := base64.RawURLEncoding.DecodeString(segs[1])
	signature, err3 := base64.RawURLEncoding.DecodeString(segs[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return errf(path, "JWS segments are not base64url")
	}
	var hdr struct {
		Alg string   `json:"alg"`
		X5c []string `json:"x5c"`
	}
	if err := json.Unmarshal(hdrJSON, &hdr); err != nil {
		return errf(path, "JWS header is not JSON")
	}
	h, ok := jwsHashes[hdr.Alg]
	if !ok {
		return errf(path, "JWS algorithm %q is not RS256, RS384 or RS512", hdr.Alg)
	}
	px, err := decode(payload)
	if err != nil {
		return errf(path, "JWS payload is not a JSON statement")
	}
	pm, ok := px.(map[string]any)
	if !ok {
		return errf(path, "JWS payload is not a JSON statement")
	}
	if !sameStatement(pm, s.m) || !sameIfBoth(pm, s.m) {
		return errf(path, "JWS payload differs from the statement")
	}
	if len(hdr.X5c) == 0 {
		return nil
	}
	certs := make([]*x509.Certificate, len(hdr.X5c))
	for i, c := range hdr.X5c {
		der, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return errf(path, "x5c certificate %d is not base64", i)
		}
		if certs[i], err = x509.ParseCertificate(der); err != nil {
			return errf(path, "x5c certificate %d: %v", i, err)
		}
	}
	for i := 0; i+1 < len(certs); i++ {
		if err := certs[i].CheckSignatureFrom(certs[i+1]); err != nil {
			return errf(path, "x5c chain broken at %d: %v", i, err)
		}
	}
	pub, ok := certs[0].PublicKey.(*rsa.PublicKey)
	if !ok {
		return errf(path, "x5c certificate has no RSA key")
	}
	hh := h.New()
	hh.Write([]byte(segs[0] + "." + segs[1]))
	if err := rsa.VerifyPKCS1v15(pub, h, hh.Sum(nil), signature); err != nil {
		return errf(path, "JWS signature does not verify with the x5c certificate")
	}
	return nil
}

// sameIfBoth compares the id and timestamp that ContentHash ignores, when both sides have
// them: a signature over another id or instant is not this statement's.
func sameIfBoth(a, b map[string]any) bool {
	ai, aok := a["id"].(string)
	bi, bok := b["id"].(string)
	if aok && bok && !strings.EqualFold(ai, bi) {
		return false
	}
	at, aok := a["timestamp"].(string)
	bt, bok := b["timestamp"].(string)
	if aok && bok {
		ta, err1 := lexical.ParseTimestamp(at)
		tb, err2 := lexical.ParseTimestamp(bt)
		if err1 != nil || err2 != nil || !ta.Equal(tb) {
			return false
		}
	}
	return true
}

// topAttachments lists the statement's own attachments (not the SubStatement's: a signature
// signs the statement it is attached to).
func topAttachments(m map[string]any) []AttachmentRef {
	s := &Statement{m: map[string]any{"attachments": m["attachments"]}}
	return s.Attachments()
}
