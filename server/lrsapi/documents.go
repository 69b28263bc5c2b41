package lrsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/statements"
)

// docResource describes one of the three document resources: which parameters address a
// document and which one names it.
type docResource struct {
	kind        statements.DocKind
	activity    bool // activityId required
	agent       bool // agent required
	registrable bool // registration accepted
	idParam     string
}

var (
	stateDocs           = docResource{kind: statements.State, activity: true, agent: true, registrable: true, idParam: "stateId"}
	activityProfileDocs = docResource{kind: statements.ActivityProfile, activity: true, idParam: "profileId"}
	agentProfileDocs    = docResource{kind: statements.AgentProfile, agent: true, idParam: "profileId"}
)

func (d docResource) params() []string {
	out := []string{d.idParam, "since"}
	if d.activity {
		out = append(out, "activityId")
	}
	if d.agent {
		out = append(out, "agent")
	}
	if d.registrable {
		out = append(out, "registration")
	}
	return out
}

// key validates the addressing parameters; the id may be absent.
func (d docResource) key(c *fiber.Ctx, q url.Values) (statements.DocKey, error) {
	k := statements.DocKey{Tenant: httpx.TenantOf(c), Kind: d.kind, ID: q.Get(d.idParam)}
	if err := checkParams(q, d.params()...); err != nil {
		return k, err
	}
	if d.activity {
		a := q.Get("activityId")
		if a == "" {
			return k, httpx.BadRequest("activityId: the parameter is required")
		}
		if !lexical.ValidIRI(a) {
			return k, httpx.BadRequest("activityId: %q is not an IRI", a)
		}
		k.ActivityID = a
	}
	if d.agent {
		if !q.Has("agent") {
			return k, httpx.BadRequest("agent: the parameter is required")
		}
		_, ifi, err := xapi.ParseAgent([]byte(q.Get("agent")), xapiVersionOf(c))
		if err != nil {
			return k, httpx.BadRequest("agent: %v", err)
		}
		k.Agent = ifi
	}
	if r := q.Get("registration"); q.Has("registration") {
		if !lexical.ValidUUID(r) {
			return k, httpx.BadRequest("registration: %q is not a UUID", r)
		}
		k.Registration = strings.ToLower(r)
	}
	if q.Has(d.idParam) && k.ID == "" {
		return k, httpx.BadRequest("%s: must not be empty", d.idParam)
	}
	return k, nil
}

func precondition(c *fiber.Ctx) statements.Precondition {
	return statements.Precondition{IfMatch: strings.TrimSpace(c.Get(fiber.HeaderIfMatch)),
		IfNoneMatch: strings.TrimSpace(c.Get(fiber.HeaderIfNoneMatch))}
}

func (a *API) getDocument(d docResource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q := queryValues(c)
		k, err := d.key(c, q)
		if err != nil {
			return err
		}
		ctx := c.UserContext()
		if k.ID == "" {
			var since time.Time
			if q.Has("since") {
				if since, err = lexical.ParseTimestamp(q.Get("since")); err != nil {
					return httpx.BadRequest("since: %q is not an ISO 8601 timestamp", q.Get("since"))
				}
			}
			ids, err := a.d.Statements.ListDocs(ctx, k, since)
			if err != nil {
				return lrsError(err)
			}
			if ids == nil {
				ids = []string{}
			}
			c.Set(fiber.HeaderLastModified, httpDate(time.Now()))
			return c.JSON(ids)
		}
		if q.Has("since") {
			return httpx.BadRequest("since: not allowed together with %s", d.idParam)
		}
		if err := a.cmi5Document(c, k, nil); err != nil {
			return err
		}
		doc, err := a.d.Statements.GetDoc(ctx, k)
		if errors.Is(err, statements.ErrNotFound) {
			return httpx.NotFound("no document with %s %q", d.idParam, k.ID)
		}
		if err != nil {
			return lrsError(err)
		}
		ct := doc.ContentType
		if ct == "" {
			ct = fiber.MIMEOctetStream
		}
		c.Set(fiber.HeaderContentType, ct)
		c.Set(fiber.HeaderETag, doc.ETag)
		c.Set(fiber.HeaderLastModified, httpDate(doc.Updated))
		return c.Send(doc.Body)
	}
}

// putDocument serves PUT (replace) and POST (merge JSON objects).
func (a *API) putDocument(d docResource, merge bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q := queryValues(c)
		k, err := d.key(c, q)
		if err != nil {
			return err
		}
		if k.ID == "" {
			return httpx.BadRequest("%s: the parameter is required", d.idParam)
		}
		if q.Has("since") {
			return httpx.BadRequest("since: only allowed when listing documents")
		}
		ctx := c.UserContext()
		body := bytes.Clone(c.Body())
		ct := c.Get(fiber.HeaderContentType)
		if ct == "" {
			ct = fiber.MIMEOctetStream
		}
		if err := a.cmi5Document(c, k, body); err != nil {
			return err
		}
		cond := precondition(c)
		var existing *statements.Document
		if merge || (cond.IfMatch == "" && cond.IfNoneMatch == "") {
			existing, err = a.d.Statements.GetDoc(ctx, k)
			if err != nil && !errors.Is(err, statements.ErrNotFound) {
				return lrsError(err)
			}
		}
		if merge {
			if mediaType(ct) != fiber.MIMEApplicationJSON || !isJSONObject(body) {
				return httpx.BadRequest("document: POST merges JSON: the body must be a JSON object sent as application/json")
			}
			if existing != nil && (mediaType(existing.ContentType) != fiber.MIMEApplicationJSON || !isJSONObject(existing.Body)) {
				return httpx.BadRequest("document: the stored document is not a JSON object, so it cannot be merged; PUT replaces it")
			}
			ct = fiber.MIMEApplicationJSON
		} else if cond.IfMatch == "" && cond.IfNoneMatch == "" && (d.kind != statements.State || xapiVersionOf(c) == xapi.V200) {
			// The concurrency rule: 2.0 applies it to all three resources, 1.0.x to the profiles,
			// where a PUT without either header is refused even for a new document.
			if existing != nil {
				return httpx.Errorf(fiber.StatusConflict, "document %s %q exists: send If-Match with its ETag (or If-None-Match: *) to change it", d.idParam, k.ID)
			}
			if xapiVersionOf(c) != xapi.V200 {
				return httpx.BadRequest("If-Match: a PUT of a profile document needs If-Match (its ETag) or If-None-Match: * under xAPI 1.0.x")
			}
		}
		doc, err := a.d.Statements.PutDoc(ctx, &statements.Document{Key: k, ContentType: ct, Body: body}, cond, merge && existing != nil)
		if err != nil {
			return lrsError(err)
		}
		if doc != nil && doc.ETag != "" {
			c.Set(fiber.HeaderETag, doc.ETag)
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// cmi5Document runs the engine's cmi5 document check for a cmi5 AU session's credential.
func (a *API) cmi5Document(c *fiber.Ctx, k statements.DocKey, body []byte) error {
	p := lrsPrincipalOf(c)
	if p == nil || p.CMI5 == nil || a.d.Engine == nil {
		return nil
	}
	return lrsError(a.d.Engine.CheckCMI5Document(c.UserContext(), httpx.TenantOf(c), p, c.Method(), k, c.Get(fiber.HeaderContentType), body))
}

func isJSONObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

func (a *API) deleteDocument(d docResource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q := queryValues(c)
		k, err := d.key(c, q)
		if err != nil {
			return err
		}
		if q.Has("since") {
			return httpx.BadRequest("since: only allowed when listing documents")
		}
		ctx := c.UserContext()
		if err := a.cmi5Document(c, k, nil); err != nil {
			return err
		}
		if k.ID == "" {
			if d.kind != statements.State {
				return httpx.BadRequest("%s: the parameter is required", d.idParam)
			}
			if err := a.d.Statements.DeleteDocs(ctx, k); err != nil {
				return lrsError(err)
			}
			return c.SendStatus(fiber.StatusNoContent)
		}
		err = a.d.Statements.DeleteDoc(ctx, k, precondition(c))
		if err != nil && !errors.Is(err, statements.ErrNotFound) {
			return lrsError(err)
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// getActivity is GET /activities?activityId=: the canonical definition gathered from
// statements, or an Activity with only its id when none is known.
func (a *API) getActivity(c *fiber.Ctx) error {
	q := queryValues(c)
	if err := checkParams(q, "activityId"); err != nil {
		return err
	}
	id := q.Get("activityId")
	if id == "" {
		return httpx.BadRequest("activityId: the parameter is required")
	}
	if !lexical.ValidIRI(id) {
		return httpx.BadRequest("activityId: %q is not an IRI", id)
	}
	act, err := a.d.Statements.GetActivity(c.UserContext(), httpx.TenantOf(c), id)
	if errors.Is(err, statements.ErrNotFound) {
		act, _ = json.Marshal(map[string]string{"objectType": "Activity", "id": id})
	} else if err != nil {
		return lrsError(err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(act)
}

// getAgents is GET /agents?agent=: the Person object of an agent.
func (a *API) getAgents(c *fiber.Ctx) error {
	q := queryValues(c)
	if err := checkParams(q, "agent"); err != nil {
		return err
	}
	if !q.Has("agent") {
		return httpx.BadRequest("agent: the parameter is required")
	}
	agent, _, err := xapi.ParseAgent([]byte(q.Get("agent")), xapiVersionOf(c))
	if err != nil {
		return httpx.BadRequest("agent: %v", err)
	}
	return c.JSON(xapi.Person(agent))
}

// About is the body of GET /about.
type About struct {
	Version    []string       `json:"version"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// getAbout is GET /about: public, no version header needed; it lists both versions.
func (a *API) getAbout(c *fiber.Ctx) error {
	if err := checkParams(queryValues(c)); err != nil {
		return err
	}
	return c.JSON(About{Version: []string{string(xapi.V103), string(xapi.V200)}})
}

// lrsResources is the resource table of the record store.
func (a *API) lrsResources() []lrsResource {
	docs := func(path, what string, d docResource, query []httpx.Param) lrsResource {
		idq := append([]httpx.Param{{Name: d.idParam, Type: "string", Description: "document id; without it GET lists ids"}}, query...)
		listq := append(idq, httpx.Param{Name: "since", Type: "string", Description: "list only documents updated after (ISO 8601)"})
		return lrsResource{path: path, methods: []lrsMethod{
			{method: fiber.MethodGet, summary: "Get a " + what + " document (in the content type it was stored with), or list ids (a JSON array)", media: []string{"*/*"}, success: 200, query: listq, h: a.getDocument(d)},
			{method: fiber.MethodPut, summary: "Store a " + what + " document (If-Match / If-None-Match)", body: "XAPIDocument", success: 204, query: idq, h: a.putDocument(d, false)},
			{method: fiber.MethodPost, summary: "Merge a JSON " + what + " document", body: "XAPIDocument", success: 204, query: idq, h: a.putDocument(d, true)},
			{method: fiber.MethodDelete, summary: "Delete a " + what + " document", success: 204, query: idq, h: a.deleteDocument(d)},
		}}
	}
	agentP := httpx.Param{Name: "agent", Type: "string", Required: true, Description: "JSON agent object"}
	activityP := httpx.Param{Name: "activityId", Type: "string", Required: true, Description: "activity IRI"}
	regP := httpx.Param{Name: "registration", Type: "string", Description: "registration UUID"}
	var stmtQuery []httpx.Param
	for _, n := range statementQueryParams {
		t := "string"
		switch n {
		case "related_activities", "related_agents", "attachments", "ascending":
			t = "boolean"
		case "limit":
			t = "integer"
		}
		stmtQuery = append(stmtQuery, httpx.Param{Name: n, Type: t})
	}
	return []lrsResource{
		{path: "/statements", methods: []lrsMethod{
			{method: fiber.MethodPut, summary: "Store one statement with the given id", body: "XAPIStatement", success: 204,
				query: []httpx.Param{{Name: "statementId", Type: "string", Required: true}}, h: a.putStatement},
			{method: fiber.MethodPost, summary: "Store statements (JSON or multipart/mixed with attachments); alternate request syntax under 1.0.x", body: "XAPIStatement", success: 200, response: "XAPIStatementIDs",
				query: []httpx.Param{{Name: "method", Type: "string", Description: "alternate request syntax (xAPI 1.0.x only)"}}, h: a.postStatements},
			{method: fiber.MethodGet, summary: "Get a statement (statementId, voidedStatementId) or query statements; multipart/mixed with attachments=true",
				success: 200, response: "XAPIStatementOrResult", media: []string{"multipart/mixed"}, query: stmtQuery, h: a.getStatements},
		}},
		docs("/activities/state", "state", stateDocs, []httpx.Param{activityP, agentP, regP}),
		docs("/activities/profile", "activity profile", activityProfileDocs, []httpx.Param{activityP}),
		docs("/agents/profile", "agent profile", agentProfileDocs, []httpx.Param{agentP}),
		{path: "/activities", methods: []lrsMethod{{method: fiber.MethodGet, summary: "The canonical definition of an activity", success: 200, response: "XAPIObject",
			query: []httpx.Param{activityP}, h: a.getActivity}}},
		{path: "/agents", methods: []lrsMethod{{method: fiber.MethodGet, summary: "The Person object of an agent", success: 200, response: "XAPIObject",
			query: []httpx.Param{agentP}, h: a.getAgents}}},
		{path: "/about", methods: []lrsMethod{{method: fiber.MethodGet, summary: "Versions of the LRS (public)", success: 200, response: "XAPIAbout", h: a.getAbout}}},
	}
}

// lrsSchemas are the OpenAPI components of the record store.
func lrsSchemas() map[string]any {
	anyObj := map[string]any{"type": "object", "additionalProperties": true}
	return map[string]any{
		"XAPIStatement": map[string]any{"description": "an xAPI statement, or (POST) an array of them; validated against the version of the request",
			"oneOf": []any{anyObj, map[string]any{"type": "array", "items": anyObj}}},
		"XAPIStatementIDs":    map[string]any{"type": "array", "items": httpx.Str()},
		"XAPIStoredStatement": map[string]any{"type": "object", "additionalProperties": true, "required": []string{"id", "actor", "verb", "object", "stored", "timestamp"}},
		"XAPIStatementResult": httpx.Obj(map[string]any{"statements": map[string]any{"type": "array", "items": httpx.Ref("XAPIStoredStatement")}, "more": httpx.Str()}, "statements"),
		"XAPIStatementOrResult": map[string]any{"description": "one statement when statementId or voidedStatementId is given, else a StatementResult",
			"oneOf": []any{httpx.Ref("XAPIStatementResult"), httpx.Ref("XAPIStoredStatement")}},
		"XAPIDocument": map[string]any{"description": "any content; POST merges JSON objects", "type": "object", "additionalProperties": true},
		"XAPIObject":   anyObj,
		"XAPIAbout":    httpx.Obj(map[string]any{"version": map[string]any{"type": "array", "items": httpx.Str()}, "extensions": anyObj}, "version"),
	}
}
