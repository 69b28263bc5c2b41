package postback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/course/registration"
)

// SignatureHeader carries "sha256=<hex HMAC-SHA256 of the request body>" keyed with the
// tenant's postback signing key, so a receiver can check that a report comes from Lectern
// and was not altered. The body is the exact bytes sent (form-encoded for FORM).
const SignatureHeader = "X-Lectern-Signature"

// Auth types (postBack.authType; ApiRollupRegistrationAuthType in lower case).
const (
	AuthForm      = "FORM"
	AuthHTTPBasic = "HTTPBASIC"
)

// Target is where and how a report is posted.
type Target struct {
	URL string
	// AuthType is FORM (fields username, password, data) or HTTPBASIC (Authorization
	// header, report as the body), in any case; empty means FORM.
	AuthType string
	UserName string
	Password string
	Format   Format
	// JSON posts the report as JSON instead of the legacy XML.
	JSON bool
	// SigningKey, when set, adds SignatureHeader.
	SigningKey []byte
}

// Request is a postback ready to send.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Build formats rep for t and returns the request that delivers it. The URL must be an
// absolute http(s) URL; whether it may be reached is the outbound client's decision.
func Build(t Target, rep Report) (*Request, error) {
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: url %q is not an absolute http(s) URL", ErrInvalid, t.URL)
	}
	auth := strings.ToUpper(strings.TrimSpace(t.AuthType))
	if auth == "" {
		auth = AuthForm
	}
	if auth != AuthForm && auth != AuthHTTPBasic {
		return nil, fmt.Errorf("%w: auth type %q is not FORM or HTTPBASIC", ErrInvalid, t.AuthType)
	}
	format := t.Format
	if format == "" {
		format = Course
	}
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	var data []byte
	contentType := "text/xml; charset=utf-8"
	if t.JSON {
		data, err = JSON(rep, format)
		contentType = "application/json"
	} else {
		data, err = XML(rep, format)
	}
	if err != nil {
		return nil, err
	}
	req := &Request{Method: http.MethodPost, URL: t.URL, Header: http.Header{}}
	req.Header.Set("User-Agent", "Lectern-Postback/1")
	switch auth {
	case AuthForm:
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Body = []byte(url.Values{"username": {t.UserName}, "password": {t.Password}, "data": {string(data)}}.Encode())
	case AuthHTTPBasic:
		req.Header.Set("Content-Type", contentType)
		if t.UserName != "" || t.Password != "" {
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(t.UserName+":"+t.Password)))
		}
		req.Body = data
	}
	if len(t.SigningKey) > 0 {
		req.Header.Set(SignatureHeader, Sign(t.SigningKey, req.Body))
	}
	return req, nil
}

// Sign returns the SignatureHeader value for body.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether header is the signature of body under key (constant time), for
// receivers and tests.
func Verify(key, body []byte, header string) bool {
	return hmac.Equal([]byte(Sign(key, body)), []byte(header))
}

// jsonReport is the JSON report: progress's RegistrationSummary fields (§2.6) with the
// format, and activityDetails for ACTIVITY and FULL.
type jsonReport struct {
	Format                       Format               `json:"format"`
	ID                           string               `json:"id"`
	Instance                     int                  `json:"instance"`
	Updated                      *time.Time           `json:"updated,omitempty"`
	RegistrationCompletion       string               `json:"registrationCompletion"`
	RegistrationCompletionAmount float64              `json:"registrationCompletionAmount"`
	RegistrationSuccess          string               `json:"registrationSuccess"`
	Score                        *registration.Scaled `json:"score,omitempty"`
	TotalSecondsTracked          float64              `json:"totalSecondsTracked"`
	FirstAccessDate              *time.Time           `json:"firstAccessDate,omitempty"`
	LastAccessDate               *time.Time           `json:"lastAccessDate,omitempty"`
	CompletedDate                *time.Time           `json:"completedDate,omitempty"`
	CourseID                     string               `json:"courseId"`
	Learner                      registration.Learner `json:"learner"`
	// GlobalObjectives is progress's globalObjectives, in every format.
	GlobalObjectives []registration.ObjectiveResult `json:"globalObjectives"`
	// ActivityDetails is an *activitySummary (ACTIVITY) or a *registration.ActivityResult (FULL).
	ActivityDetails any `json:"activityDetails,omitempty"`
}

// JSON returns the report as JSON. ACTIVITY keeps the tree's statuses, scores, attempts and
// times; FULL adds objectives, static properties and run-time data, as progress/detail.
func JSON(rep Report, f Format) ([]byte, error) {
	if err := rep.check(f); err != nil {
		return nil, err
	}
	p := rep.Progress
	out := jsonReport{Format: f, ID: rep.Registration.ID, Instance: rep.Instance,
		RegistrationCompletion: p.Completion, RegistrationSuccess: p.Success, TotalSecondsTracked: p.TotalSecondsTracked,
		FirstAccessDate: p.FirstAccess, LastAccessDate: p.LastAccess, CompletedDate: p.CompletedAt,
		CourseID: rep.Registration.CourseID, Learner: rep.Registration.Learner, GlobalObjectives: rep.GlobalObjectives}
	if out.GlobalObjectives == nil {
		out.GlobalObjectives = []registration.ObjectiveResult{}
	}
	if !rep.Updated.IsZero() {
		u := rep.Updated.UTC()
		out.Updated = &u
	}
	if p.CompletionAmount != nil {
		out.RegistrationCompletionAmount = *p.CompletionAmount
	}
	if p.ScoreScaled != nil {
		out.Score = &registration.Scaled{Scaled: *p.ScoreScaled}
	}
	switch f {
	case Activity:
		out.ActivityDetails = summaryTree(rep.Details)
	case Full:
		out.ActivityDetails = rep.Details
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// activitySummary is an ACTIVITY report's tree node: progress/detail's tracking fields
// without objectives, static properties and run-time data.
type activitySummary struct {
	ID                 string               `json:"id"`
	Title              string               `json:"title"`
	Attempts           int                  `json:"attempts"`
	ActivityCompletion string               `json:"activityCompletion"`
	ActivitySuccess    string               `json:"activitySuccess"`
	Score              *registration.Scaled `json:"score,omitempty"`
	TimeTracked        string               `json:"timeTracked"`
	CompletionAmount   *registration.Scaled `json:"completionAmount,omitempty"`
	Suspended          bool                 `json:"suspended"`
	Children           []*activitySummary   `json:"children"`
}

func summaryTree(a *registration.ActivityResult) *activitySummary {
	c := &activitySummary{ID: a.ID, Title: a.Title, Attempts: a.Attempts, ActivityCompletion: a.ActivityCompletion,
		ActivitySuccess: a.ActivitySuccess, Score: a.Score, TimeTracked: a.TimeTracked, CompletionAmount: a.CompletionAmount,
		Suspended: a.Suspended, Children: []*activitySummary{}}
	for _, ch := range a.Children {
		c.Children = append(c.Children, summaryTree(ch))
	}
	return c
}
