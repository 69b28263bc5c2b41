package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/server/lrsapi"
	"github.com/lectern-lms/lectern/workers/jobs"
)

// The console's record-store pages of a tenant: the xAPI statement viewer, the jobs and the
// webhook subscriptions with their delivery logs. Statements are read from the tenant's
// record store path (/lrs/TCAPI/{tenant}/statements), which accepts the same tenant and root
// credentials the console signs in with; jobs and webhooks from the content API with the
// tenant in header tenant_id.

func (co *Console) registerRecords(g fiber.Router) {
	co.addSection(section{Path: "statements", Label: "Statements", Tenant: true})
	co.addSection(section{Path: "jobs", Label: "Jobs", Tenant: true})
	co.addSection(section{Path: "webhooks", Label: "Webhooks", Tenant: true})
	need, h := co.sessionRequired, co.handler
	g.Get("/t/:tenant/statements", need, h(co.statements))
	g.Get("/t/:tenant/statements/:id", need, h(co.statement))
	g.Get("/t/:tenant/jobs", need, h(co.jobList))
	g.Get("/t/:tenant/jobs/:id", need, h(co.jobView))
	g.Get("/t/:tenant/webhooks", need, h(co.webhooks))
	g.Post("/t/:tenant/webhooks/auth", need, h(co.createAuth))
	g.Post("/t/:tenant/webhooks/auth/:id/delete", need, h(co.deleteAuth))
	g.Post("/t/:tenant/webhooks/subscriptions", need, h(co.createSubscription))
	g.Post("/t/:tenant/webhooks/subscriptions/:id/delete", need, h(co.deleteSubscription))
	g.Get("/t/:tenant/webhooks/subscriptions/:id", need, h(co.deliveries))
}

// prettyJSON indents a JSON document for a <pre> (the template escapes it).
func prettyJSON(raw []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

// --- Statements ---

// statementFilter is the viewer's form: the xAPI filters, the agent given by its mbox or
// its account.
type statementFilter struct {
	Mbox, AccountHome, AccountName string
	Verb, Activity, Registration   string
	Since, Until, Limit            string
}

// statementRow is one statement as the table shows it.
type statementRow struct {
	ID, Time, Actor, Verb, VerbID, Object, ObjectID string
}

type statementsData struct {
	Filter statementFilter
	Rows   []statementRow
	// More is the console link of the next page.
	More string
}

// lrsGet reads the tenant's record store; the version header is the one the console speaks.
func (co *Console) lrsGet(c *fiber.Ctx, query url.Values) (*apiResponse, error) {
	return co.api(c, apiRequest{Method: fiber.MethodGet,
		Path:   lrsapi.Base + "/" + url.PathEscape(c.Params("tenant")) + "/statements?" + query.Encode(),
		Header: map[string]string{"X-Experience-API-Version": "1.0.3"}}, nil)
}

func (f statementFilter) query() (url.Values, error) {
	q := url.Values{}
	switch {
	case f.Mbox != "" && (f.AccountHome != "" || f.AccountName != ""):
		return nil, httpx.BadRequest("give the agent either by its e-mail (mbox) or by its account, not both")
	case f.Mbox != "":
		m := f.Mbox
		if !strings.HasPrefix(m, "mailto:") {
			m = "mailto:" + m
		}
		b, _ := json.Marshal(map[string]string{"mbox": m})
		q.Set("agent", string(b))
	case f.AccountHome != "" || f.AccountName != "":
		b, _ := json.Marshal(map[string]any{"account": map[string]string{"homePage": f.AccountHome, "name": f.AccountName}})
		q.Set("agent", string(b))
	}
	for k, v := range map[string]string{"verb": f.Verb, "activity": f.Activity, "registration": f.Registration,
		"since": f.Since, "until": f.Until, "limit": f.Limit} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if q.Get("limit") == "" {
		q.Set("limit", "25")
	}
	return q, nil
}

func langMap(v any) string {
	m, _ := v.(map[string]any)
	if s, ok := m["en-US"].(string); ok {
		return s
	}
	if s, ok := m["en"].(string); ok {
		return s
	}
	for _, x := range m {
		if s, ok := x.(string); ok {
			return s
		}
	}
	return ""
}

func agentName(a map[string]any) string {
	if n, ok := a["name"].(string); ok && n != "" {
		return n
	}
	if m, ok := a["mbox"].(string); ok {
		return strings.TrimPrefix(m, "mailto:")
	}
	if acc, ok := a["account"].(map[string]any); ok {
		n, _ := acc["name"].(string)
		return n
	}
	if s, ok := a["mbox_sha1sum"].(string); ok {
		return s
	}
	if s, ok := a["openid"].(string); ok {
		return s
	}
	return ""
}

func statementRowOf(st map[string]any) statementRow {
	r := statementRow{}
	r.ID, _ = st["id"].(string)
	r.Time, _ = st["timestamp"].(string)
	if a, ok := st["actor"].(map[string]any); ok {
		r.Actor = agentName(a)
	}
	if v, ok := st["verb"].(map[string]any); ok {
		r.VerbID, _ = v["id"].(string)
		if r.Verb = langMap(v["display"]); r.Verb == "" {
			r.Verb = r.VerbID
		}
	}
	if o, ok := st["object"].(map[string]any); ok {
		r.ObjectID, _ = o["id"].(string)
		if d, ok := o["definition"].(map[string]any); ok {
			r.Object = langMap(d["name"])
		}
		if ot, _ := o["objectType"].(string); ot == "Agent" || ot == "Group" {
			r.Object = agentName(o)
		}
		if r.Object == "" {
			r.Object = r.ObjectID
		}
	}
	return r
}

func (co *Console) statements(c *fiber.Ctx) error {
	f := statementFilter{Mbox: strings.TrimSpace(c.Query("mbox")), AccountHome: strings.TrimSpace(c.Query("account_home")),
		AccountName: strings.TrimSpace(c.Query("account_name")), Verb: strings.TrimSpace(c.Query("verb")),
		Activity: strings.TrimSpace(c.Query("activity")), Registration: strings.TrimSpace(c.Query("registration")),
		Since: strings.TrimSpace(c.Query("since")), Until: strings.TrimSpace(c.Query("until")), Limit: strings.TrimSpace(c.Query("limit"))}
	v := &view{Title: "Statements", Section: "statements"}
	data := statementsData{Filter: f}
	var q url.Values
	if more := c.Query("more"); more != "" {
		// The record store's token carries the original filters.
		q = url.Values{"more": {more}}
	} else {
		var err error
		if q, err = f.query(); err != nil {
			var e *httpx.Error
			if !errors.As(err, &e) {
				return err
			}
			v.Error, v.Data = e.Message, data
			return co.render(c, e.Status, "statements", "", v)
		}
	}
	resp, err := co.lrsGet(c, q)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == fiber.StatusBadRequest {
		// A filter the record store refused: the form stays, with its message.
		v.Error, v.Data = ae.Message, data
		return co.render(c, fiber.StatusBadRequest, "statements", "", v)
	}
	if err != nil {
		return err
	}
	var res struct {
		Statements []map[string]any `json:"statements"`
		More       string           `json:"more"`
	}
	if err := json.Unmarshal(resp.Body, &res); err != nil {
		return err
	}
	for _, st := range res.Statements {
		data.Rows = append(data.Rows, statementRowOf(st))
	}
	if res.More != "" {
		if u, err := url.Parse(res.More); err == nil && u.Query().Get("more") != "" {
			data.More = tenantPath(c, "/statements") + "?" + url.Values{"more": {u.Query().Get("more")}}.Encode()
		}
	}
	v.Data = data
	return co.render(c, fiber.StatusOK, "statements", "", v)
}

type statementData struct {
	ID     string
	Voided bool
	JSON   string
	Row    statementRow
}

// statement shows one statement; a voided statement is only answered to
// voidedStatementId, which is how the page learns that it is voided.
func (co *Console) statement(c *fiber.Ctx) error {
	id := c.Params("id")
	voided := false
	resp, err := co.lrsGet(c, url.Values{"statementId": {id}})
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == fiber.StatusNotFound {
		voided = true
		resp, err = co.lrsGet(c, url.Values{"voidedStatementId": {id}})
	}
	if errors.As(err, &ae) && ae.Status == fiber.StatusNotFound {
		return httpx.NotFound("statement '%s' not found", id)
	}
	if err != nil {
		return err
	}
	var st map[string]any
	if err := json.Unmarshal(resp.Body, &st); err != nil {
		return err
	}
	return co.render(c, fiber.StatusOK, "statement", "", &view{Title: "Statement " + id, Section: "statements",
		Data: statementData{ID: id, Voided: voided, JSON: prettyJSON(resp.Body), Row: statementRowOf(st)}})
}

// --- Jobs ---

type jobsData struct {
	Status, Type string
	Statuses     []string
	Jobs         []*jobs.Job
	More         string
}

func (co *Console) jobList(c *fiber.Ctx) error {
	q := url.Values{}
	for _, k := range []string{"status", "type", "more"} {
		if v := strings.TrimSpace(c.Query(k)); v != "" {
			q.Set(k, v)
		}
	}
	q.Set("limit", "50")
	var list contentapi.JobList
	if err := co.tenantAPI(c, fiber.MethodGet, "/api/v1/jobs?"+q.Encode(), nil, &list); err != nil {
		return err
	}
	data := jobsData{Status: q.Get("status"), Type: q.Get("type"), Jobs: list.Jobs,
		Statuses: []string{jobs.StatusPending, jobs.StatusRunning, jobs.StatusCompleted, jobs.StatusFailed}}
	if list.More != "" {
		q.Set("more", list.More)
		q.Del("limit")
		data.More = tenantPath(c, "/jobs") + "?" + q.Encode()
	}
	return co.render(c, fiber.StatusOK, "jobs", "", &view{Title: "Jobs", Section: "jobs", Data: data})
}

type jobData struct {
	Job     *jobs.Job
	Results string
	// Running makes the page refresh itself until the job concludes.
	Running bool
}

func (co *Console) jobView(c *fiber.Ctx) error {
	var j jobs.Job
	if err := co.tenantAPI(c, fiber.MethodGet, "/api/v1/jobs/"+url.PathEscape(c.Params("id")), nil, &j); err != nil {
		return err
	}
	b, _ := json.Marshal(j.Results)
	return co.render(c, fiber.StatusOK, "job", "job-detail", &view{Title: "Job " + j.ID, Section: "jobs",
		Data: jobData{Job: &j, Results: prettyJSON(b), Running: !jobs.Concluded(j.Status)}})
}

// --- Webhooks ---

const (
	subscriptionAuthPath = "/api/v1/app_management/subscription_auth"
	subscriptionsPath    = "/api/v1/app_management/subscriptions"
)

type webhooksData struct {
	Subscriptions []contentapi.SubscriptionView
	Auth          []contentapi.SubscriptionAuth
	// Created is the subscription just created, with its signing secret (shown once).
	Created *contentapi.SubscriptionView
	// Form keeps what was typed when the API refused it.
	Form map[string]string
}

func (co *Console) renderWebhooks(c *fiber.Ctx, status int, d webhooksData, msg, notice string) error {
	var subs contentapi.SubscriptionList
	if err := co.tenantAPI(c, fiber.MethodGet, subscriptionsPath, nil, &subs); err != nil {
		return err
	}
	var auth contentapi.SubscriptionAuthList
	if err := co.tenantAPI(c, fiber.MethodGet, subscriptionAuthPath, nil, &auth); err != nil {
		return err
	}
	d.Subscriptions, d.Auth = subs.Subscriptions, auth.Configs
	if d.Form == nil {
		d.Form = map[string]string{}
	}
	return co.render(c, status, "webhooks", "", &view{Title: "Webhooks", Section: "webhooks", Error: msg, Notice: notice, Data: d})
}

func (co *Console) webhooks(c *fiber.Ctx) error {
	notice := ""
	switch c.Query("done") {
	case "auth":
		notice = "The authentication configuration was created."
	case "auth-deleted":
		notice = "The authentication configuration was deleted."
	case "deleted":
		notice = "The subscription was deleted."
	}
	return co.renderWebhooks(c, fiber.StatusOK, webhooksData{}, "", notice)
}

// formErr renders the webhooks page again with the API's 4xx message and the typed values;
// other errors become the error page.
func (co *Console) formErr(c *fiber.Ctx, err error, form map[string]string) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != fiber.StatusUnauthorized {
		return co.renderWebhooks(c, ae.Status, webhooksData{Form: form}, ae.Message, "")
	}
	return err
}

func optional(c *fiber.Ctx, name string) *string {
	if v := c.FormValue(name); v != "" {
		return &v
	}
	return nil
}

func (co *Console) createAuth(c *fiber.Ctx) error {
	body := contentapi.SubscriptionAuthBody{Type: c.FormValue("type"), Key: optional(c, "key"), Secret: optional(c, "secret"),
		Scope: optional(c, "scope"), TokenURL: optional(c, "token_url")}
	if err := co.tenantAPI(c, fiber.MethodPost, subscriptionAuthPath, body, nil); err != nil {
		// The secret is not sent back into the form.
		return co.formErr(c, err, map[string]string{"type": body.Type, "key": c.FormValue("key"), "scope": c.FormValue("scope"), "token_url": c.FormValue("token_url")})
	}
	return c.Redirect(tenantPath(c, "/webhooks?done=auth"), fiber.StatusSeeOther)
}

func (co *Console) deleteAuth(c *fiber.Ctx) error {
	if err := co.tenantAPI(c, fiber.MethodDelete, subscriptionAuthPath+"/"+url.PathEscape(c.Params("id")), nil, nil); err != nil {
		return co.formErr(c, err, nil)
	}
	return c.Redirect(tenantPath(c, "/webhooks?done=auth-deleted"), fiber.StatusSeeOther)
}

func (co *Console) createSubscription(c *fiber.Ctx) error {
	body := contentapi.SubscriptionBody{Topic: c.FormValue("topic"), URL: strings.TrimSpace(c.FormValue("url")), AuthConfigID: c.FormValue("auth_config_id")}
	var sub contentapi.SubscriptionView
	if err := co.tenantAPI(c, fiber.MethodPost, subscriptionsPath, body, &sub); err != nil {
		return co.formErr(c, err, map[string]string{"url": body.URL, "auth_config_id": body.AuthConfigID})
	}
	// The signing secret is shown on this response only, never on a page a redirect could reload.
	return co.renderWebhooks(c, fiber.StatusCreated, webhooksData{Created: &sub}, "", "")
}

func (co *Console) deleteSubscription(c *fiber.Ctx) error {
	if err := co.tenantAPI(c, fiber.MethodDelete, subscriptionsPath+"/"+url.PathEscape(c.Params("id")), nil, nil); err != nil {
		return co.formErr(c, err, nil)
	}
	return c.Redirect(tenantPath(c, "/webhooks?done=deleted"), fiber.StatusSeeOther)
}

type deliveriesData struct {
	Subscription contentapi.SubscriptionView
	Deliveries   []contentapi.DeliveryView
}

func (co *Console) deliveries(c *fiber.Ctx) error {
	id := c.Params("id")
	var subs contentapi.SubscriptionList
	if err := co.tenantAPI(c, fiber.MethodGet, subscriptionsPath, nil, &subs); err != nil {
		return err
	}
	var log contentapi.DeliveryList
	if err := co.tenantAPI(c, fiber.MethodGet, subscriptionsPath+"/"+url.PathEscape(id)+"/deliveries", nil, &log); err != nil {
		return err
	}
	d := deliveriesData{Deliveries: log.Deliveries}
	for _, sub := range subs.Subscriptions {
		if sub.SubscriptionID == id {
			d.Subscription = sub
		}
	}
	return co.render(c, fiber.StatusOK, "deliveries", "delivery-table", &view{Title: "Deliveries", Section: "webhooks", Data: d})
}
