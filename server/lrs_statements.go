package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/xapi"
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

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

func (s *Server) consistentThrough(c *fiber.Ctx) {
	c.Set(hdrConsistentThrough, time.Now().UTC().Format(time.RFC3339Nano))
}

// putStatement is PUT /statements?statementId=: one statement with the given id; 204.
func (s *Server) putStatement(c *fiber.Ctx) error {
	s.consistentThrough(c)
	q := queryValues(c)
	if err := checkParams(q, "statementId"); err != nil {
		return err
	}
	id := q.Get("statementId")
	if id == "" {
		return badRequest("statementId: the parameter is required to PUT a statement")
	}
	if !xapi.ValidUUID(id) {
		return badRequest("statementId: %q is not a UUID", id)
	}
	if _, err := s.storeStatements(c, strings.ToLower(id)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// postStatements is POST /statements: one statement or an array; 200 with the ids.
func (s *Server) postStatements(c *fiber.Ctx) error {
	s.consistentThrough(c)
	if err := checkParams(queryValues(c)); err != nil {
		return err
	}
	ids, err := s.storeStatements(c, "")
	if err != nil {
		return err
	}
	return c.JSON(ids)
}

// storeStatements validates the request body (JSON or multipart/mixed with attachments),
// completes the statements and stores them as one batch.
func (s *Server) storeStatements(c *fiber.Ctx, putID string) ([]string, error) {
	v := xapiVersionOf(c)
	p := lrsPrincipalOf(c)
	tid := tenantOf(c)
	ctx := c.UserContext()
	body := bytes.Clone(c.Body())
	ct := c.Get(fiber.HeaderContentType)
	var parts map[string]xapi.Part
	switch mediaType(ct) {
	case "multipart/mixed":
		js, ps, err := xapi.ParseMultipart(ct, body)
		if err != nil {
			return nil, lrsBadRequest(err)
		}
		body, parts = js, ps
	case "application/json", "":
	default:
		// Lenient: the body must parse as statements anyway.
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("statement: the request body is empty")
	}
	stmts, isArray, err := xapi.ParseStatements(body, v)
	if err != nil {
		return nil, lrsBadRequest(err)
	}
	if putID != "" {
		if isArray || len(stmts) != 1 {
			return nil, badRequest("statement: PUT takes exactly one statement object, not an array")
		}
		if got := stmts[0].ID(); got != "" && !strings.EqualFold(got, putID) {
			return nil, badRequest("statement.id: %q differs from the statementId parameter %q", got, putID)
		}
		stmts[0].SetID(putID)
	}
	if len(stmts) == 0 {
		return nil, badRequest("statements: the array is empty")
	}
	// XAPI-00127: statements with attachments come as application/json (fileUrl only) or
	// multipart/mixed, never as another type the lenient path above lets through.
	if mt := mediaType(ct); mt != "application/json" && mt != "multipart/mixed" {
		for i, st := range stmts {
			if len(st.Attachments()) > 0 {
				return nil, badRequest("statements[%d].attachments: a request with attachments must have Content-Type application/json or multipart/mixed, not %q", i, mt)
			}
		}
	}
	seen := map[string]bool{}
	for i, st := range stmts {
		if id := strings.ToLower(st.ID()); id != "" {
			if seen[id] {
				return nil, badRequest("statements[%d].id: %s appears twice in the batch", i, id)
			}
			seen[id] = true
		}
	}

	// Attachments: every declared attachment without fileUrl needs its part; every part must
	// be declared; signatures must verify.
	used := map[string]bool{}
	data := map[string][]byte{}
	for sha, part := range parts {
		data[sha] = part.Data
	}
	var atts []*statements.Attachment
	for i, st := range stmts {
		for _, a := range st.Attachments() {
			part, ok := parts[a.SHA2]
			if !ok {
				if a.FileURL == "" || a.Signature {
					return nil, badRequest("statement[%d].attachments: no multipart part carries the attachment with sha2 %s", i, a.SHA2)
				}
				continue
			}
			if !used[a.SHA2] {
				ctype := part.ContentType
				if ctype == "" {
					ctype = a.ContentType
				}
				atts = append(atts, &statements.Attachment{SHA2: a.SHA2, ContentType: ctype, Data: part.Data})
			}
			used[a.SHA2] = true
		}
		if err := st.VerifySignature(data); err != nil {
			return nil, lrsBadRequest(err)
		}
	}
	for sha := range parts {
		if !used[sha] {
			return nil, badRequest("attachments: the multipart part with hash %s is not declared by any statement", sha)
		}
	}

	now := time.Now().UTC().Truncate(time.Millisecond)
	batch := make([]*statements.Statement, 0, len(stmts))
	ids := make([]string, 0, len(stmts))
	voids := map[string]string{}
	for _, st := range stmts {
		st.Complete(p.Authority, now, v)
		f := st.Fields()
		f.Tenant, f.Stored = tid, now
		if f.ID == "" {
			f.ID = st.ID()
		}
		if t := st.VoidTarget(); t != "" {
			f.Voids = strings.ToLower(t)
			voids[f.ID] = f.Voids
		}
		batch = append(batch, &f)
		ids = append(ids, f.ID)
	}
	// A voiding statement that targets another voiding statement is stored but voids nothing.
	for _, f := range batch {
		if f.Voids == "" {
			continue
		}
		if _, inBatch := voids[f.Voids]; inBatch {
			f.Voids = ""
			continue
		}
		target, err := s.deps.Statements.Get(ctx, tid, f.Voids)
		switch {
		case err == nil && target.Voids != "":
			f.Voids = ""
		case err != nil && !errors.Is(err, statements.ErrNotFound):
			return nil, err
		}
	}
	if err := s.deps.Statements.Put(ctx, tid, batch, atts); err != nil {
		return nil, lrsError(err)
	}
	if lrsPermissionsOf(c).Define {
		// Without the define permission (an OAuth client lacking the scope) the statements
		// keep their definitions but the canonical ones are left as they were.
		s.mergeActivities(ctx, tid, stmts)
	}
	s.hooks().Stored.StatementsStored(ctx, tid, batch)
	s.statementSession(ctx, tid, p)
	s.statementProgress(ctx, tid, batch)
	return ids, nil
}

// lrsBadRequest turns a validation error into a 400 naming the property.
func lrsBadRequest(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return badRequest("%s", err.Error())
}

// mergeActivities keeps the canonical definition of every activity the statements define.
// The batch's definitions are merged in memory first (statement order), so each activity is
// read and written once per batch, and not written at all when the merge changes nothing.
// Failures are logged: the statements are stored already.
func (s *Server) mergeActivities(ctx context.Context, tid string, stmts []*xapi.Statement) {
	batch := map[string]json.RawMessage{}
	var order []string
	for _, st := range stmts {
		for id, act := range st.Activities() {
			if old, ok := batch[id]; ok {
				batch[id] = xapi.MergeActivity(old, act)
				continue
			}
			batch[id] = act
			order = append(order, id)
		}
	}
	for _, id := range order {
		act := batch[id]
		old, err := s.deps.Statements.GetActivity(ctx, tid, id)
		if err != nil && !errors.Is(err, statements.ErrNotFound) {
			s.log.Warn("lrs: read activity", "tenant", tid, "activity", id, "error", err)
			continue
		}
		merged := act
		if old != nil {
			merged = xapi.MergeActivity(old, act)
			if bytes.Equal(merged, old) {
				continue
			}
		}
		if err := s.deps.Statements.PutActivity(ctx, tid, id, merged); err != nil {
			s.log.Warn("lrs: store activity", "tenant", tid, "activity", id, "error", err)
		}
	}
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
	return false, badRequest("%s: must be true or false, not %q", name, q.Get(name))
}

// getStatements is GET /statements: one statement (statementId, voidedStatementId) or a
// query with every filter of the spec; `more` continues a query.
func (s *Server) getStatements(c *fiber.Ctx) error {
	s.consistentThrough(c)
	q := queryValues(c)
	if err := checkParams(q, statementQueryParams...); err != nil {
		return err
	}
	format := q.Get("format")
	switch format {
	case "", "exact", "ids", "canonical":
	default:
		return badRequest("format: must be ids, exact or canonical, not %q", format)
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
				return badRequest("%s: not allowed together with statementId or voidedStatementId", k)
			}
		}
		if q.Has("statementId") && q.Has("voidedStatementId") {
			return badRequest("statementId: not allowed together with voidedStatementId")
		}
		return s.getOneStatement(c, q, format, withAtts)
	}
	perm := lrsPermissionsOf(c)
	p := lrsPrincipalOf(c)
	var tok statementsMore
	if q.Has("more") {
		if len(q) != 1 {
			return badRequest("more: send the continuation alone; it carries the original parameters")
		}
		raw, err := base64.RawURLEncoding.DecodeString(q.Get("more"))
		if err != nil || json.Unmarshal(raw, &tok) != nil {
			return badRequest("more: not a continuation token of this LRS")
		}
	} else {
		tok.Format, tok.Attachments = format, withAtts
		if tok.Q, err = s.statementQuery(c, q); err != nil {
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
			return errorf(fiber.StatusForbidden, "more: the continuation belongs to another principal")
		}
	}
	tok.Q.Tenant = tenantOf(c)
	page, err := s.deps.Statements.Query(c.UserContext(), tok.Q)
	if err != nil {
		return lrsError(err)
	}
	more := ""
	if page.Next != "" {
		next := tok
		next.Q.Cursor = page.Next
		next.Q.Tenant = ""
		b, _ := json.Marshal(next)
		more = s.statementsPath(c) + "?more=" + base64.RawURLEncoding.EncodeToString(b)
	}
	langs := acceptLanguages(c.Get(fiber.HeaderAcceptLanguage))
	var buf bytes.Buffer
	buf.WriteString(`{"statements":[`)
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
			buf.WriteByte(',')
		}
		buf.Write(out)
		n++
		hashes = append(hashes, st.AttachmentHashes...)
		if st.Stored.After(last) {
			last = st.Stored
		}
	}
	buf.WriteString(`],"more":`)
	m, _ := json.Marshal(more)
	buf.Write(m)
	buf.WriteByte('}')
	if last.IsZero() {
		last = time.Now()
	}
	c.Set(fiber.HeaderLastModified, httpDate(last))
	if tok.Attachments {
		return s.sendMultipart(c, buf.Bytes(), hashes)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(buf.Bytes())
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
func (s *Server) statementsPath(c *fiber.Ctx) string {
	if t := c.Params("tenant"); t != "" {
		return LRSBase + "/" + url.PathEscape(t) + "/statements"
	}
	return LRSBase + "/statements"
}

// statementQuery validates the query parameters of a statements query.
func (s *Server) statementQuery(c *fiber.Ctx, q url.Values) (statements.Query, error) {
	var out statements.Query
	v := xapiVersionOf(c)
	if a := q.Get("agent"); q.Has("agent") {
		_, ifi, err := xapi.ParseAgent([]byte(a), v)
		if err != nil {
			return out, badRequest("agent: %v", err)
		}
		out.Agent = ifi
	}
	if vb := q.Get("verb"); q.Has("verb") {
		if !xapi.ValidIRI(vb) {
			return out, badRequest("verb: %q is not an IRI", vb)
		}
		out.Verb = vb
	}
	if a := q.Get("activity"); q.Has("activity") {
		if !xapi.ValidIRI(a) {
			return out, badRequest("activity: %q is not an IRI", a)
		}
		out.Activity = a
	}
	if r := q.Get("registration"); q.Has("registration") {
		if !xapi.ValidUUID(r) {
			return out, badRequest("registration: %q is not a UUID", r)
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
		t, err := xapi.ParseTimestamp(q.Get(name))
		if err != nil {
			return out, badRequest("%s: %q is not an ISO 8601 timestamp", name, q.Get(name))
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
			return out, badRequest("limit: must be a non-negative integer, not %q", l)
		}
		if n == 0 || n > statements.MaxLimit {
			n = statements.MaxLimit
		}
		out.Limit = n
	}
	return out, nil
}

// getOneStatement answers statementId / voidedStatementId.
func (s *Server) getOneStatement(c *fiber.Ctx, q url.Values, format string, withAtts bool) error {
	id, voided := q.Get("statementId"), false
	name := "statementId"
	if q.Has("voidedStatementId") {
		id, voided, name = q.Get("voidedStatementId"), true, "voidedStatementId"
	}
	if !xapi.ValidUUID(id) {
		return badRequest("%s: %q is not a UUID", name, id)
	}
	st, err := s.deps.Statements.Get(c.UserContext(), tenantOf(c), strings.ToLower(id))
	if errors.Is(err, statements.ErrNotFound) || (err == nil && st.Voided != voided) {
		if voided {
			return notFound("no voided statement with id %s", id)
		}
		return notFound("no statement with id %s (voided statements are read with voidedStatementId)", id)
	}
	if err != nil {
		return lrsError(err)
	}
	if !lrsPermissionsOf(c).ReadAll && !contains(st.RelatedAgents, lrsPrincipalOf(c).IFI) {
		return notFound("no statement with id %s that this credential may read", id)
	}
	out, err := xapi.Format(st.Raw, format, acceptLanguages(c.Get(fiber.HeaderAcceptLanguage)))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLastModified, httpDate(st.Stored))
	if withAtts {
		return s.sendMultipart(c, out, st.AttachmentHashes)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(out)
}

// sendMultipart answers multipart/mixed: the JSON result, then each attachment once.
func (s *Server) sendMultipart(c *fiber.Ctx, result []byte, hashes []string) error {
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
		atts, err := s.deps.Statements.Attachments(c.UserContext(), tenantOf(c), uniq)
		if err != nil {
			return lrsError(err)
		}
		for _, a := range atts {
			parts = append(parts, xapi.Part{ContentType: a.ContentType, Data: a.Data})
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
