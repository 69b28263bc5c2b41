package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/report"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/storage/statements"
)

// The report extension endpoints (spec/002 "Endpoints"): GET Report/results, Report/activities
// and Report/actors, below LRSBase and LRSBase/<tenant> like every LRS resource, so they share
// authentication, the context hooks (tenant resolution), permissions, the version header and
// CORS. The reports are built by lrs/report from pages of statements.Store.Query; see
// docs/decisions.md "LRS reports".

// ReportResults is the body of Report/results.
type ReportResults struct {
	Results []report.Result `json:"results"`
	More    string          `json:"more"`
}

// ReportActivities is the body of Report/activities.
type ReportActivities struct {
	Results []report.Activity `json:"results"`
}

// ReportActors is the body of Report/actors.
type ReportActors struct {
	Results []report.Actor `json:"results"`
}

const (
	// reportPageSize is the statements read per store page by Report/results.
	reportPageSize = 100
	// reportMaxPages bounds the store pages one Report/results request reads: a page of
	// entries may be short (statements without a result object give none), and `more`
	// continues after the last page read.
	reportMaxPages = 10
)

// reportMore is what a Report/results `more` link carries.
type reportMore struct {
	Q   statements.Query `json:"q"`
	Own string           `json:"o,omitempty"`
}

func (s *Server) lrsReportResources() []lrsResource {
	agentP := Param{Name: "agent", Type: "string", Description: "JSON agent object"}
	activityP := Param{Name: "activity", Type: "string", Description: "activity IRI (the statement object)"}
	return []lrsResource{
		{path: "/Report/results", methods: []lrsMethod{{method: fiber.MethodGet,
			summary: "Report: score, success, completion and duration of the statements of an agent and/or activity (at least one; 404 when nothing matches)",
			success: 200, response: "XAPIReportResults", h: s.getReportResults,
			query: []Param{agentP, activityP, {Name: "more", Type: "string", Description: "continuation from the previous page; sent alone"}}}}},
		{path: "/Report/activities", methods: []lrsMethod{{method: fiber.MethodGet,
			summary: "Report: the activities of an agent's statements, or of all statements",
			success: 200, response: "XAPIReportActivities", h: s.getReportActivities, query: []Param{agentP}}}},
		{path: "/Report/actors", methods: []lrsMethod{{method: fiber.MethodGet,
			summary: "Report: the actors of an activity's statements, or of all statements (404 when nothing matches)",
			success: 200, response: "XAPIReportActors", h: s.getReportActors, query: []Param{activityP}}}},
	}
}

// reportSchemas are the OpenAPI components of the report endpoints.
func reportSchemas() map[string]any {
	langMap := map[string]any{"type": "object", "additionalProperties": str()}
	num := map[string]any{"type": "number"}
	actor := obj(map[string]any{"objectType": str(), "name": str(), "mbox": str(), "mbox_sha1sum": str(), "openid": str(),
		"account": obj(map[string]any{"homePage": str(), "name": str()}, "homePage", "name")}, "objectType")
	activity := obj(map[string]any{"objectType": str(), "id": str(), "definition": obj(map[string]any{"name": langMap})}, "objectType", "id")
	entry := obj(map[string]any{"date": dateTime(),
		"result": obj(map[string]any{"score": obj(map[string]any{"raw": num}), "success": boolean(), "completion": boolean(),
			"duration": map[string]any{"type": "string", "description": "ISO 8601 duration"}}),
		"actor": ref("XAPIReportActor"), "activity": ref("XAPIReportActivity")}, "date", "result", "actor", "activity")
	return map[string]any{
		"XAPIReportActor":      actor,
		"XAPIReportActivity":   activity,
		"XAPIReportResult":     entry,
		"XAPIReportResults":    obj(map[string]any{"results": map[string]any{"type": "array", "items": ref("XAPIReportResult")}, "more": str()}, "results", "more"),
		"XAPIReportActivities": obj(map[string]any{"results": map[string]any{"type": "array", "items": ref("XAPIReportActivity")}}, "results"),
		"XAPIReportActors":     obj(map[string]any{"results": map[string]any{"type": "array", "items": ref("XAPIReportActor")}}, "results"),
	}
}

// reportAgent validates the optional agent parameter and returns its IFI.
func reportAgent(c *fiber.Ctx, q url.Values) (string, error) {
	if !q.Has("agent") {
		return "", nil
	}
	_, ifi, err := xapi.ParseAgent([]byte(q.Get("agent")), xapiVersionOf(c))
	if err != nil {
		return "", badRequest("agent: %v", err)
	}
	return ifi, nil
}

// reportActivity validates the optional activity parameter.
func reportActivity(q url.Values) (string, error) {
	a := q.Get("activity")
	if q.Has("activity") && !xapi.ValidIRI(a) {
		return "", badRequest("activity: %q is not an IRI", a)
	}
	return a, nil
}

// reportRestrict applies the default read rule (a principal without ReadAll sees only the
// statements it appears in) as GET /statements does: without an agent filter the query
// becomes the principal's related-agents query; with one, the returned own IFI filters pages.
func reportRestrict(c *fiber.Ctx, q *statements.Query) (own string) {
	if lrsPermissionsOf(c).ReadAll {
		return ""
	}
	p := lrsPrincipalOf(c)
	if q.Agent == "" {
		q.Agent, q.RelatedAgents = p.IFI, true
		return ""
	}
	return p.IFI
}

func ownOnly(page []*statements.Statement, own string) []*statements.Statement {
	if own == "" {
		return page
	}
	out := page[:0:0]
	for _, st := range page {
		if contains(st.RelatedAgents, own) {
			out = append(out, st)
		}
	}
	return out
}

// reportScan pages through every statement matching q (a full scan of the filter's
// statements) and hands each page to add.
func (s *Server) reportScan(c *fiber.Ctx, q statements.Query, own string, add func([]*statements.Statement)) error {
	q.Tenant, q.Limit = tenantOf(c), statements.MaxLimit
	for {
		page, err := s.deps.Statements.Query(c.UserContext(), q)
		if err != nil {
			return lrsError(err)
		}
		add(ownOnly(page.Statements, own))
		if page.Next == "" {
			return nil
		}
		q.Cursor = page.Next
	}
}

// reportPath is the relative URL of a report resource as the request addressed it.
func reportPath(c *fiber.Ctx, name string) string {
	if t := c.Params("tenant"); t != "" {
		return LRSBase + "/" + url.PathEscape(t) + "/Report/" + name
	}
	return LRSBase + "/Report/" + name
}

// getReportResults is GET Report/results?agent=&activity= (at least one) or ?more=.
func (s *Server) getReportResults(c *fiber.Ctx) error {
	q := queryValues(c)
	if err := checkParams(q, "agent", "activity", "more"); err != nil {
		return err
	}
	var tok reportMore
	continued := q.Has("more")
	if continued {
		if len(q) != 1 {
			return badRequest("more: send the continuation alone; it carries the original parameters")
		}
		raw, err := base64.RawURLEncoding.DecodeString(q.Get("more"))
		if err != nil || json.Unmarshal(raw, &tok) != nil || tok.Q.Cursor == "" {
			return badRequest("more: not a continuation token of this LRS")
		}
		if !lrsPermissionsOf(c).ReadAll {
			ifi := lrsPrincipalOf(c).IFI
			if tok.Own != "" {
				tok.Own = ifi
			} else if tok.Q.Agent != ifi || !tok.Q.RelatedAgents {
				return errorf(fiber.StatusForbidden, "more: the continuation belongs to another principal")
			}
		}
	} else {
		var err error
		if tok.Q.Agent, err = reportAgent(c, q); err != nil {
			return err
		}
		if tok.Q.Activity, err = reportActivity(q); err != nil {
			return err
		}
		if tok.Q.Agent == "" && tok.Q.Activity == "" {
			return badRequest("agent or activity: at least one of the parameters is required")
		}
		tok.Own = reportRestrict(c, &tok.Q)
	}
	tok.Q.Tenant, tok.Q.Limit = tenantOf(c), reportPageSize
	out := ReportResults{Results: []report.Result{}}
	for pages := 0; pages < reportMaxPages && len(out.Results) < reportPageSize; pages++ {
		page, err := s.deps.Statements.Query(c.UserContext(), tok.Q)
		if err != nil {
			return lrsError(err)
		}
		out.Results = append(out.Results, report.Results(ownOnly(page.Statements, tok.Own))...)
		tok.Q.Cursor = page.Next
		if page.Next == "" {
			break
		}
	}
	if tok.Q.Cursor != "" {
		next := tok
		next.Q.Tenant = ""
		b, _ := json.Marshal(next)
		out.More = reportPath(c, "results") + "?more=" + base64.RawURLEncoding.EncodeToString(b)
	}
	if len(out.Results) == 0 && out.More == "" && !continued {
		return notFound("no statement with a result matches the agent and activity")
	}
	return c.JSON(out)
}

// getReportActivities is GET Report/activities[?agent=]: the distinct statement objects,
// each with its canonical definition when the LRS has one.
func (s *Server) getReportActivities(c *fiber.Ctx) error {
	q := queryValues(c)
	if err := checkParams(q, "agent"); err != nil {
		return err
	}
	var sq statements.Query
	var err error
	if sq.Agent, err = reportAgent(c, q); err != nil {
		return err
	}
	own := reportRestrict(c, &sq)
	var acts report.Activities
	if err := s.reportScan(c, sq, own, acts.Add); err != nil {
		return err
	}
	list := acts.List()
	for i := range list {
		raw, err := s.deps.Statements.GetActivity(c.UserContext(), tenantOf(c), list[i].ID)
		if errors.Is(err, statements.ErrNotFound) {
			continue
		}
		if err != nil {
			return lrsError(err)
		}
		if a, ok := report.ActivityOf(raw); ok {
			list[i] = a
		}
	}
	return c.JSON(ReportActivities{Results: list})
}

// getReportActors is GET Report/actors[?activity=].
func (s *Server) getReportActors(c *fiber.Ctx) error {
	q := queryValues(c)
	if err := checkParams(q, "activity"); err != nil {
		return err
	}
	var sq statements.Query
	var err error
	if sq.Activity, err = reportActivity(q); err != nil {
		return err
	}
	own := reportRestrict(c, &sq)
	var actors report.Actors
	if err := s.reportScan(c, sq, own, actors.Add); err != nil {
		return err
	}
	list := actors.List()
	if len(list) == 0 {
		return notFound("no statement about an activity matches")
	}
	return c.JSON(ReportActors{Results: list})
}
