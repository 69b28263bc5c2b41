package lrsapi

import (
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/report"
	"github.com/lectern-lms/lectern/lrs/xapi"
	"github.com/lectern-lms/lectern/lrs/xapi/lexical"
	"github.com/lectern-lms/lectern/server/httpx"
)

// The report extension endpoints (spec/002 "Endpoints"): GET Report/results, Report/activities
// and Report/actors, below Base and Base/<tenant> like every LRS resource, so they share
// authentication, the context hooks (tenant resolution), permissions, the version header and
// CORS. The use case is lrs/report.Service over the backend's aggregation port
// (statements.Reports); these handlers parse parameters and write answers. See
// docs/decisions.md "LRS reports".

// ReportResults is the body of Report/results.
type ReportResults struct {
	Results []report.Result `json:"results"`
	More    string          `json:"more"`
}

// ReportActivities is the body of Report/activities.
type ReportActivities struct {
	Results []report.Activity `json:"results"`
	More    string            `json:"more"`
}

// ReportActors is the body of Report/actors.
type ReportActors struct {
	Results []report.Actor `json:"results"`
	More    string         `json:"more"`
}

func (a *API) lrsReportResources() []lrsResource {
	agentP := httpx.Param{Name: "agent", Type: "string", Description: "JSON agent object"}
	activityP := httpx.Param{Name: "activity", Type: "string", Description: "activity IRI (the statement object)"}
	moreP := httpx.Param{Name: "more", Type: "string", Description: "continuation from the previous page; sent alone"}
	return []lrsResource{
		{path: "/Report/results", methods: []lrsMethod{{method: fiber.MethodGet,
			summary: "Report: score, success, completion and duration of the statements of an agent and/or activity (at least one; 404 when nothing matches)",
			success: 200, response: "XAPIReportResults", h: a.getReportResults,
			query: []httpx.Param{agentP, activityP, moreP}}}},
		{path: "/Report/activities", methods: []lrsMethod{{method: fiber.MethodGet,
			summary: "Report: the activities of an agent's statements, or of all statements, by id (pages of 1000 linked by more)",
			success: 200, response: "XAPIReportActivities", h: a.getReportActivities, query: []httpx.Param{agentP, moreP}}}},
		{path: "/Report/actors", methods: []lrsMethod{{method: fiber.MethodGet,
			summary: "Report: the actors of an activity's statements, or of all statements, by identifier (pages of 1000 linked by more; 404 when nothing matches)",
			success: 200, response: "XAPIReportActors", h: a.getReportActors, query: []httpx.Param{activityP, moreP}}}},
	}
}

// reportSchemas are the OpenAPI components of the report endpoints.
func reportSchemas() map[string]any {
	langMap := map[string]any{"type": "object", "additionalProperties": httpx.Str()}
	num := map[string]any{"type": "number"}
	actor := httpx.Obj(map[string]any{"objectType": httpx.Str(), "name": httpx.Str(), "mbox": httpx.Str(), "mbox_sha1sum": httpx.Str(), "openid": httpx.Str(),
		"account": httpx.Obj(map[string]any{"homePage": httpx.Str(), "name": httpx.Str()}, "homePage", "name")}, "objectType")
	activity := httpx.Obj(map[string]any{"objectType": httpx.Str(), "id": httpx.Str(), "definition": httpx.Obj(map[string]any{"name": langMap})}, "objectType", "id")
	entry := httpx.Obj(map[string]any{"date": httpx.DateTime(),
		"result": httpx.Obj(map[string]any{"score": httpx.Obj(map[string]any{"raw": num}), "success": httpx.Bool(), "completion": httpx.Bool(),
			"duration": map[string]any{"type": "string", "description": "ISO 8601 duration"}}),
		"actor": httpx.Ref("XAPIReportActor"), "activity": httpx.Ref("XAPIReportActivity")}, "date", "result", "actor", "activity")
	return map[string]any{
		"XAPIReportActor":      actor,
		"XAPIReportActivity":   activity,
		"XAPIReportResult":     entry,
		"XAPIReportResults":    httpx.Obj(map[string]any{"results": map[string]any{"type": "array", "items": httpx.Ref("XAPIReportResult")}, "more": httpx.Str()}, "results", "more"),
		"XAPIReportActivities": httpx.Obj(map[string]any{"results": map[string]any{"type": "array", "items": httpx.Ref("XAPIReportActivity")}, "more": httpx.Str()}, "results", "more"),
		"XAPIReportActors":     httpx.Obj(map[string]any{"results": map[string]any{"type": "array", "items": httpx.Ref("XAPIReportActor")}, "more": httpx.Str()}, "results", "more"),
	}
}

// reportAgent validates the optional agent parameter and returns its IFI.
func reportAgent(c *fiber.Ctx, q url.Values) (string, error) {
	if !q.Has("agent") {
		return "", nil
	}
	_, ifi, err := xapi.ParseAgent([]byte(q.Get("agent")), xapiVersionOf(c))
	if err != nil {
		return "", httpx.BadRequest("agent: %v", err)
	}
	return ifi, nil
}

// reportActivity validates the optional activity parameter.
func reportActivity(q url.Values) (string, error) {
	a := q.Get("activity")
	if q.Has("activity") && !lexical.ValidIRI(a) {
		return "", httpx.BadRequest("activity: %q is not an IRI", a)
	}
	return a, nil
}

// reportRequest parses a report call's parameters (those of names; more alone) into a
// request of the caller's tenant, with the read rule's viewer.
func reportRequest(c *fiber.Ctx, names ...string) (report.Request, error) {
	q := queryValues(c)
	r := report.Request{Tenant: httpx.TenantOf(c)}
	if err := checkParams(q, append(names, "more")...); err != nil {
		return r, err
	}
	if !lrsPermissionsOf(c).ReadAll {
		r.Viewer = lrsPrincipalOf(c).IFI
	}
	if q.Has("more") {
		if len(q) != 1 {
			return r, httpx.BadRequest("more: send the continuation alone; it carries the original parameters")
		}
		r.More = q.Get("more")
		return r, nil
	}
	var err error
	if r.Agent, err = reportAgent(c, q); err != nil {
		return r, err
	}
	r.Activity, err = reportActivity(q)
	return r, err
}

// reportError maps the use case's sentinels to HTTP answers; the message is what the use
// case says after the sentinel's own text.
func reportError(err error) error {
	detail := func(sentinel error) string {
		return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
	}
	switch {
	case errors.Is(err, report.ErrNotFound):
		return httpx.NotFound("%s", detail(report.ErrNotFound))
	case errors.Is(err, report.ErrInvalid):
		return httpx.BadRequest("%s", detail(report.ErrInvalid))
	case errors.Is(err, report.ErrForbidden):
		return httpx.Errorf(fiber.StatusForbidden, "more: the continuation belongs to another principal")
	}
	return lrsError(err)
}

// reportMore is the `more` link of a continuation token, as the request addressed the
// resource ("" stays "").
func reportMore(c *fiber.Ctx, name, token string) string {
	if token == "" {
		return ""
	}
	return reportPath(c, name) + "?more=" + token
}

// reportPath is the relative URL of a report resource as the request addressed it.
func reportPath(c *fiber.Ctx, name string) string {
	if t := c.Params("tenant"); t != "" {
		return Base + "/" + url.PathEscape(t) + "/Report/" + name
	}
	return Base + "/Report/" + name
}

// getReportResults is GET Report/results?agent=&activity= (at least one) or ?more=.
func (a *API) getReportResults(c *fiber.Ctx) error {
	r, err := reportRequest(c, "agent", "activity")
	if err != nil {
		return err
	}
	page, err := a.reports().Results(c.UserContext(), r)
	if err != nil {
		return reportError(err)
	}
	return c.JSON(ReportResults{Results: page.Results, More: reportMore(c, "results", page.More)})
}

// getReportActivities is GET Report/activities[?agent=] or ?more=.
func (a *API) getReportActivities(c *fiber.Ctx) error {
	r, err := reportRequest(c, "agent")
	if err != nil {
		return err
	}
	page, err := a.reports().Activities(c.UserContext(), r)
	if err != nil {
		return reportError(err)
	}
	return c.JSON(ReportActivities{Results: page.Results, More: reportMore(c, "activities", page.More)})
}

// getReportActors is GET Report/actors[?activity=] or ?more=.
func (a *API) getReportActors(c *fiber.Ctx) error {
	r, err := reportRequest(c, "activity")
	if err != nil {
		return err
	}
	page, err := a.reports().Actors(c.UserContext(), r)
	if err != nil {
		return reportError(err)
	}
	return c.JSON(ReportActors{Results: page.Results, More: reportMore(c, "actors", page.More)})
}

func (a *API) reports() report.Service { return report.Service{Store: a.d.Statements} }
