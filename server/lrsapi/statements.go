package lrsapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/ingest"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/statements"
)

// StatementResult is the body of a statements query (documented for /openapi.json; the
// handler writes statements verbatim).
type StatementResult struct {
	Statements []json.RawMessage `json:"statements"`
	More       string            `json:"more"`
}

var statementQueryParams = []string{"statementId", "voidedStatementId", "agent", "verb", "activity", "registration",
	"related_activities", "related_agents", "since", "until", "limit", "format", "attachments", "ascending", "more"}

func mediaType(ct string) string { return ingest.MediaType(ct) }

// consistentThrough sets X-Experience-API-Consistent-Through to the record store's watermark:
// every statement stored at or before it is returned by the queries that follow (a query's
// answer replaces it with the watermark that query ran at, setConsistentThrough).
func (a *API) consistentThrough(c *fiber.Ctx) {
	t, err := a.d.Statements.ConsistentThrough(c.UserContext())
	if err != nil {
		// No watermark is better than a wrong one; the request goes on.
		a.d.Logger.Warn("consistent-through", "err", err)
		return
	}
	setConsistentThrough(c, t)
}

// setConsistentThrough writes t as X-Experience-API-Consistent-Through.
func setConsistentThrough(c *fiber.Ctx, t time.Time) {
	c.Set(hdrConsistentThrough, t.UTC().Format(time.RFC3339Nano))
}

// putStatement is PUT /statements?statementId=: one statement with the given id; 204.
func (a *API) putStatement(c *fiber.Ctx) error {
	a.consistentThrough(c)
	q := queryValues(c)
	if err := checkParams(q, "statementId"); err != nil {
		return err
	}
	id := q.Get("statementId")
	if id == "" {
		return httpx.BadRequest("statementId: the parameter is required to PUT a statement")
	}
	if !lexical.ValidUUID(id) {
		return httpx.BadRequest("statementId: %q is not a UUID", id)
	}
	if _, err := a.storeStatements(c, strings.ToLower(id)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// postStatements is POST /statements: one statement or an array; 200 with the ids.
func (a *API) postStatements(c *fiber.Ctx) error {
	a.consistentThrough(c)
	if err := checkParams(queryValues(c)); err != nil {
		return err
	}
	ids, err := a.storeStatements(c, "")
	if err != nil {
		return err
	}
	return c.JSON(ids)
}

// storeStatements runs the statement-write use case (lrs/ingest) on the request, then the
// hooks that follow a write.
func (a *API) storeStatements(c *fiber.Ctx, putID string) ([]string, error) {
	p := lrsPrincipalOf(c)
	tid := httpx.TenantOf(c)
	ctx := c.UserContext()
	req := ingest.Request{
		Tenant: tid, Version: xapiVersionOf(c), Authority: p.Authority,
		ContentType: c.Get(fiber.HeaderContentType), Body: c.Body(), PutID: putID,
		Define: lrsPermissionsOf(c).Define,
	}
	if _, none := a.hooks.Stored.(NoStoredHook); none {
		// The course engine reads only these (Engine.StatementsWritten).
		req.Keep = func(st *statements.Statement) bool {
			return a.d.Engine != nil && (st.Registration != "" || st.Voids != "")
		}
	}
	if p != nil && p.CMI5 != nil && a.d.Engine != nil {
		req.Check = func(original []json.RawMessage, batch []*statements.Statement) error {
			return a.d.Engine.CheckCMI5Statements(ctx, tid, p, original, batch)
		}
	}
	res, err := ingest.New(a.d.Statements, a.d.Logger, ingest.OnStored(a.d.Counted)).Write(ctx, req)
	if err != nil {
		return nil, lrsError(err)
	}
	a.hooks.Stored.StatementsStored(ctx, tid, res.Batch)
	if a.d.Engine != nil {
		a.d.Engine.StatementsWritten(ctx, tid, p, res.Batch)
	}
	return res.IDs, nil
}

// statementsMore is what a `more` link carries: the original filters and the cursor.
type statementsMore struct {
	Q           statements.Query `json:"q"`
	Format      string           `json:"f,omitempty"`
	Attachments bool             `json:"a,omitempty"`
	Own         string           `json:"o,omitempty"`
}

func parseBool(q url.Values, name string) (bool, error) {
	switch q.Get(name) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, httpx.BadRequest("%s: must be true or false, not %q", name, q.Get(name))
}

// getStatements is GET /statements: one statement (statementId, voidedStatementId) or a
// query with every filter of the spec; `more` continues a query.
func (a *API) getStatements(c *fiber.Ctx) error {
	a.consistentThrough(c)
	q := queryValues(c)
	if err := checkParams(q, statementQueryParams...); err != nil {
		return err
	}
	format := q.Get("format")
	switch format {
	case "", "exact", "ids", "canonical":
	default:
		return httpx.BadRequest("format: must be ids, exact or canonical, not %q", format)
	}
	if format == "" {
		format = "exact"
	}
	withAtts, err := parseBool(q, "attachments")
	if err != nil {
		return err
	}
	if q.Has("statementId") || q.Has("voidedStatementId") {
		for k := range q {
			switch k {
			case "statementId", "voidedStatementId", "format", "attachments":
			default:
				return httpx.BadRequest("%s: not allowed together with statementId or voidedStatementId", k)
			}
		}
		if q.Has("statementId") && q.Has("voidedStatementId") {
			return httpx.BadRequest("statementId: not allowed together with voidedStatementId")
		}
		return a.getOneStatement(c, q, format, withAtts)
	}
	perm := lrsPermissionsOf(c)
	p := lrsPrincipalOf(c)
	var tok statementsMore
	if q.Has("more") {
		if len(q) != 1 {
			return httpx.BadRequest("more: send the continuation alone; it carries the original parameters")
		}
		raw, err := base64.RawURLEncoding.DecodeString(q.Get("more"))
		if err != nil || json.Unmarshal(raw, &tok) != nil {
			return httpx.BadRequest("more: not a continuation token of this LRS")
		}
	} else {
		tok.Format, tok.Attachments = format, withAtts
		if tok.Q, err = a.statementQuery(c, q); err != nil {
			return err
		}
		if !perm.ReadAll {
			// The default read rule: only statements the principal appears in.
			if tok.Q.Agent == "" {
				tok.Q.Agent, tok.Q.RelatedAgents = p.IFI, true
			} else {
				tok.Own = p.IFI
			}
		}
	}
	if !perm.ReadAll {
		if tok.Own != "" {
			tok.Own = p.IFI
		} else if tok.Q.Agent != p.IFI || !tok.Q.RelatedAgents {
			return httpx.Errorf(fiber.StatusForbidden, "more: the continuation belongs to another principal")
		}
	}
	tok.Q.Tenant = httpx.TenantOf(c)
	page, err := a.d.Statements.Query(c.UserContext(), tok.Q)
	if err != nil {
		return lrsError(err)
	}
	if !page.ConsistentThrough.IsZero() {
		setConsistentThrough(c, page.ConsistentThrough)
	}
	more := ""
	if page.Next != "" {
		next := tok
		next.Q.Cursor = page.Next
		next.Q.Tenant = ""
		b, _ := json.Marshal(next)
		more = a.statementsPath(c) + "?more=" + base64.RawURLEncoding.EncodeToString(b)
	}
	langs := acceptLanguages(c.Get(fiber.HeaderAcceptLanguage))
	// The page is written straight into the response's body buffer, which fasthttp pools
	// across requests: a page of 25 realistic statements is some 50 KB, and growing a fresh
	// buffer to that size and handing it over allocated about twice that per request, which
	// made the garbage collector run every few queries (issue 12, the query latency tail).
	resp := c.Response()
	resp.ResetBody()
	resp.AppendBodyString(`{"statements":[`)
	var hashes []string
	last := time.Time{}
	n := 0
	for _, st := range page.Statements {
		if tok.Own != "" && !contains(st.RelatedAgents, tok.Own) {
			continue
		}
		out, err := xapi.Format(st.Raw, tok.Format, langs)
		if err != nil {
			return err
		}
		if n > 0 {
			resp.AppendBodyString(",")
		}
		resp.AppendBody(out)
		n++
		hashes = append(hashes, st.AttachmentHashes...)
		if st.Stored.After(last) {
			last = st.Stored
		}
	}
	resp.AppendBodyString(`],"more":`)
	m, _ := json.Marshal(more)
	resp.AppendBody(m)
	resp.AppendBodyString("}")
	if last.IsZero() {
		last = time.Now()
	}
	c.Set(fiber.HeaderLastModified, httpDate(last))
	if tok.Attachments {
		result := bytes.Clone(resp.Body())
		resp.ResetBody()
		return a.sendMultipart(c, result, hashes)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// statementsPath is the relative URL of the statements resource as the request addressed it.
func (a *API) statementsPath(c *fiber.Ctx) string {
	if t := c.Params("tenant"); t != "" {
		return Base + "/" + url.PathEscape(t) + "/statements"
	}
	return Base + "/statements"
}

// statementQuery validates the query parameters of a statements query.
func (a *API) statementQuery(c *fiber.Ctx, q url.Values) (statements.Query, error) {
	var out statements.Query
	v := xapiVersionOf(c)
	if ag := q.Get("agent"); q.Has("agent") {
		_, ifi, err := xapi.ParseAgent([]byte(ag), v)
		if err != nil {
			return out, httpx.BadRequest("agent: %v", err)
		}
		out.Agent = ifi
	}
	if vb := q.Get("verb"); q.Has("verb") {
		if !lexical.ValidIRI(vb) {
			return out, httpx.BadRequest("verb: %q is not an IRI", vb)
		}
		out.Verb = vb
	}
	if act := q.Get("activity"); q.Has("activity") {
		if !lexical.ValidIRI(act) {
			return out, httpx.BadRequest("activity: %q is not an IRI", act)
		}
		out.Activity = act
	}
	if r := q.Get("registration"); q.Has("registration") {
		if !lexical.ValidUUID(r) {
			return out, httpx.BadRequest("registration: %q is not a UUID", r)
		}
		out.Registration = strings.ToLower(r)
	}
	var err error
	if out.RelatedActivities, err = parseBool(q, "related_activities"); err != nil {
		return out, err
	}
	if out.RelatedAgents, err = parseBool(q, "related_agents"); err != nil {
		return out, err
	}
	if out.Ascending, err = parseBool(q, "ascending"); err != nil {
		return out, err
	}
	for _, name := range []string{"since", "until"} {
		if !q.Has(name) {
			continue
		}
		t, err := lexical.ParseTimestamp(q.Get(name))
		if err != nil {
			return out, httpx.BadRequest("%s: %q is not an ISO 8601 timestamp", name, q.Get(name))
		}
		if name == "since" {
			out.Since = t
		} else {
			out.Until = t
		}
	}
	if l := q.Get("limit"); q.Has("limit") {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return out, httpx.BadRequest("limit: must be a non-negative integer, not %q", l)
		}
		if n == 0 || n > statements.MaxLimit {
			n = statements.MaxLimit
		}
		out.Limit = n
	}
	return out, nil
}

// getOneStatement answers statementId / voidedStatementId.
func (a *API) getOneStatement(c *fiber.Ctx, q url.Values, format string, withAtts bool) error {
	id, voided := q.Get("statementId"), false
	name := "statementId"
	if q.Has("voidedStatementId") {
		id, voided, name = q.Get("voidedStatementId"), true, "voidedStatementId"
	}
	if !lexical.ValidUUID(id) {
		return httpx.BadRequest("%s: %q is not a UUID", name, id)
	}
	st, err := a.d.Statements.Get(c.UserContext(), httpx.TenantOf(c), strings.ToLower(id))
	if errors.Is(err, statements.ErrNotFound) || (err == nil && st.Voided != voided) {
		if voided {
			return httpx.NotFound("no voided statement with id %s", id)
		}
		return httpx.NotFound("no statement with id %s (voided statements are read with voidedStatementId)", id)
	}
	if err != nil {
		return lrsError(err)
	}
	if !lrsPermissionsOf(c).ReadAll && !contains(st.RelatedAgents, lrsPrincipalOf(c).IFI) {
		return httpx.NotFound("no statement with id %s that this credential may read", id)
	}
	out, err := xapi.Format(st.Raw, format, acceptLanguages(c.Get(fiber.HeaderAcceptLanguage)))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLastModified, httpDate(st.Stored))
	if withAtts {
		return a.sendMultipart(c, out, st.AttachmentHashes)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(out)
}

// sendMultipart answers multipart/mixed: the JSON result, then each attachment once.
func (a *API) sendMultipart(c *fiber.Ctx, result []byte, hashes []string) error {
	var uniq []string
	seen := map[string]bool{}
	for _, h := range hashes {
		if !seen[h] {
			seen[h] = true
			uniq = append(uniq, h)
		}
	}
	var parts []xapi.Part
	if len(uniq) > 0 {
		atts, err := a.d.Statements.Attachments(c.UserContext(), httpx.TenantOf(c), uniq)
		if err != nil {
			return lrsError(err)
		}
		for _, att := range atts {
			parts = append(parts, xapi.Part{ContentType: att.ContentType, Data: att.Data})
		}
	}
	var buf bytes.Buffer
	ct, err := xapi.WriteMultipart(&buf, result, parts)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, ct)
	return c.Send(buf.Bytes())
}

// acceptLanguages orders the Accept-Language tags by quality.
func acceptLanguages(h string) []string {
	type tag struct {
		name string
		q    float64
		i    int
	}
	var tags []tag
	for i, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > 0 {
			tags = append(tags, tag{name, q, i})
		}
	}
	sort.SliceStable(tags, func(a, b int) bool { return tags[a].q > tags[b].q })
	out := make([]string, len(tags))
	for i, t := range tags {
		out[i] = t.name
	}
	return out
}
