package xapi

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
)

// Part is one attachment's raw content in a multipart/mixed request or response.
type Part struct {
	ContentType string
	Data        []byte
	// SHA2 is the part's X-Experience-API-Hash (lowercase hex). ParseMultipart fills it;
	// WriteMultipart uses it when set (so a statement's SHA-384/512 declaration still
	// matches) and computes SHA-256 otherwise.
	SHA2 string
}

// ParseMultipart splits a multipart/mixed statement request (xAPI Communication 1.5.2): the
// first part must be application/json and holds the statements; every further part must
// carry Content-Transfer-Encoding: binary and an X-Experience-API-Hash equal to the SHA-2 of
// its content. Parts are returned by lowercase hash. Whether the parts match the statements'
// attachments is CheckAttachments' job, once the statements are parsed.
func ParseMultipart(contentType string, body []byte) (statementsJSON []byte, parts map[string]Part, err error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/mixed" {
		return nil, nil, &Error{Path: "Content-Type", Msg: "must be multipart/mixed"}
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, nil, &Error{Path: "Content-Type", Msg: "multipart/mixed without a boundary"}
	}
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	parts = map[string]Part{}
	for i := 0; ; i++ {
		// NextRawPart: no transparent quoted-printable decoding, the hash covers raw bytes
		p, err := r.NextRawPart()
		if err == io.EOF {
			if i == 0 {
				return nil, nil, &Error{Path: "multipart", Msg: "no statement part"}
			}
			return statementsJSON, parts, nil
		}
		if err != nil {
			return nil, nil, &Error{Path: "multipart", Msg: "malformed multipart body: " + err.Error()}
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, &Error{Path: "multipart", Msg: "malformed multipart body: " + err.Error()}
		}
		ct := p.Header.Get("Content-Type")
		if i == 0 {
			if mediaType(ct) != "application/json" {
				return nil, nil, &Error{Path: "multipart[0]", Msg: "the first part must be application/json statements"}
			}
			statementsJSON = data
			continue
		}
		path := indexPath("multipart", i)
		if cte := p.Header.Get("Content-Transfer-Encoding"); !strings.EqualFold(strings.TrimSpace(cte), "binary") {
			return nil, nil, errf(path, "Content-Transfer-Encoding must be binary")
		}
		h := strings.ToLower(strings.TrimSpace(p.Header.Get("X-Experience-API-Hash")))
		if h == "" {
			return nil, nil, errf(path, "missing X-Experience-API-Hash")
		}
		sum, err := sha2Hex(h, data)
		if err != nil {
			return nil, nil, errf(path, "%v", err)
		}
		if sum != h {
			return nil, nil, errf(path, "X-Experience-API-Hash does not match the content")
		}
		parts[h] = Part{ContentType: ct, Data: data, SHA2: h}
	}
}

// sha2Hex hashes data with the SHA-2 variant whose digest length matches want.
func sha2Hex(want string, data []byte) (string, error) {
	var h hash.Hash
	switch len(want) {
	case 56:
		h = sha256.New224()
	case 64:
		h = sha256.New()
	case 96:
		h = sha512.New384()
	case 128:
		h = sha512.New()
	default:
		return "", errors.New("X-Experience-API-Hash is not a SHA-2 hex digest")
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckAttachments matches a multipart request's parts to its statements' attachments:
// every attachment without a fileUrl needs a part with its sha2, and every part must be some
// attachment's content (excess parts are rejected, as xAPI requires). Pass parts == nil for
// an application/json request, where every attachment needs a fileUrl.
func CheckAttachments(stmts []*Statement, parts map[string]Part) error {
	declared := map[string]bool{}
	for i, s := range stmts {
		for j, a := range s.Attachments() {
			declared[a.SHA2] = true
			if _, ok := parts[a.SHA2]; !ok && a.FileURL == "" {
				return errf(fmt.Sprintf("statements[%d].attachments[%d]", i, j),
					"no fileUrl and no multipart part with sha2 %s", a.SHA2)
			}
		}
	}
	for h := range parts {
		if !declared[h] {
			return errf("multipart", "part %s is not an attachment of any statement", h)
		}
	}
	return nil
}

// WriteMultipart writes a multipart/mixed response: result (a statement or StatementResult,
// as application/json) first, then each attachment part with its hash and binary transfer
// encoding. It returns the Content-Type to send, boundary included.
func WriteMultipart(w io.Writer, result []byte, parts []Part) (contentType string, err error) {
	mw := multipart.NewWriter(w)
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	if err := mw.SetBoundary("xapi-" + hex.EncodeToString(b[:])); err != nil {
		return "", err
	}
	pw, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
	if err != nil {
		return "", err
	}
	if _, err := pw.Write(result); err != nil {
		return "", err
	}
	for _, p := range parts {
		sum := p.SHA2
		if sum == "" {
			s := sha256.Sum256(p.Data)
			sum = hex.EncodeToString(s[:])
		}
		ct := p.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		pw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {ct},
			"Content-Transfer-Encoding": {"binary"},
			"X-Experience-API-Hash":     {sum},
		})
		if err != nil {
			return "", err
		}
		if _, err := pw.Write(p.Data); err != nil {
			return "", err
		}
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	return "multipart/mixed; boundary=" + mw.Boundary(), nil
}
