package lrsapi

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/lrs/forward"
	"github.com/lectern-lms/lectern/server/httpx"
)

// Statement forwarding management (spec/002 "Forwarding management"): Engine's
// AddTinCanForwardingPath / UpdateTinCanForwardingPath / DeleteTinCanForwardingPath as
// app-management routes of the tenant that owns the source store, beside its credentials.
// See docs/decisions.md "Statement forwarding".

// ForwardCredentials are the destination's Basic credentials; the password is write-only.
type ForwardCredentials struct {
	Username string  `json:"username"`
	Password *string `json:"password,omitempty"`
}

// ForwardPairBody is the body of POST and PUT .../forwarding_pairs.
type ForwardPairBody struct {
	ID                     string              `json:"id,omitempty"`
	SourceQuery            string              `json:"source_query"`
	DestinationURL         string              `json:"destination_url"`
	DestinationCredentials *ForwardCredentials `json:"destination_credentials,omitempty"`
	Enabled                *bool               `json:"enabled,omitempty"`
}

// ForwardPair is one pair as the API shows it (never the password).
type ForwardPair struct {
	ID                     string             `json:"id"`
	TenantID               string             `json:"tenant_id"`
	SourceQuery            string             `json:"source_query"`
	DestinationURL         string             `json:"destination_url"`
	DestinationCredentials ForwardCredentials `json:"destination_credentials"`
	Enabled                bool               `json:"enabled"`
	Status                 ForwardStatus      `json:"status"`
	Created                time.Time          `json:"create_dt"`
	Updated                time.Time          `json:"update_dt"`
}

// ForwardStatus is a pair's progress (forward.Status); the instants are null until set.
type ForwardStatus struct {
	Position    *time.Time `json:"position"`
	Forwarded   int64      `json:"forwarded"`
	Failures    int        `json:"failures"`
	LastAttempt *time.Time `json:"last_attempt"`
	NextAttempt *time.Time `json:"next_attempt"`
	LastError   string     `json:"last_error"`
}

func instant(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// ForwardPairList is the body of GET .../forwarding_pairs.
type ForwardPairList struct {
	Pairs []ForwardPair `json:"forwarding_pairs"`
}

func showPair(p *forward.Pair) ForwardPair {
	return ForwardPair{ID: p.ID, TenantID: p.Tenant, SourceQuery: p.SourceQuery, DestinationURL: p.DestinationURL,
		DestinationCredentials: ForwardCredentials{Username: p.Username}, Enabled: p.Enabled,
		Status: ForwardStatus{Position: instant(p.Status.Position), Forwarded: p.Status.Forwarded, Failures: p.Status.Failures,
			LastAttempt: instant(p.Status.LastAttempt), NextAttempt: instant(p.Status.NextAttempt), LastError: p.Status.LastError},
		Created: p.Created, Updated: p.Updated}
}

func (a *API) registerForwarding(r httpx.Registrar) {
	const tenants, pairs = "/api/v1/app_management/tenants", "/forwarding_pairs"
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: tenants + "/:tenant_id" + pairs, Summary: "Add a statement forwarding pair (spec/002 AddTinCanForwardingPath)", Tag: "forwarding",
		Scope: httpx.ScopeRootTenant, Body: "ForwardPairBody", Success: 201, Response: "ForwardPair"}, a.createForwardPair)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: tenants + "/:tenant_id" + pairs, Summary: "List a tenant's statement forwarding pairs with their progress", Tag: "forwarding",
		Scope: httpx.ScopeRootTenant, Success: 200, Response: "ForwardPairList"}, a.listForwardPairs)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: tenants + "/:tenant_id" + pairs + "/:pair_id", Summary: "One statement forwarding pair with its progress", Tag: "forwarding",
		Scope: httpx.ScopeRootTenant, Success: 200, Response: "ForwardPair"}, a.getForwardPair)
	r.Handle(httpx.Route{Method: fiber.MethodPut, Path: tenants + "/:tenant_id" + pairs + "/:pair_id", Summary: "Replace a statement forwarding pair (spec/002 UpdateTinCanForwardingPath); an omitted password is kept", Tag: "forwarding",
		Scope: httpx.ScopeRootTenant, Body: "ForwardPairBody", Success: 200, Response: "ForwardPair"}, a.updateForwardPair)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: tenants + "/:tenant_id" + pairs + "/:pair_id", Summary: "Delete a statement forwarding pair (spec/002 DeleteTinCanForwardingPath)", Tag: "forwarding",
		Scope: httpx.ScopeRootTenant, Success: 204}, a.deleteForwardPair)
}

// forwardErr maps the forward package's sentinels to HTTP answers.
func forwardErr(err error) error {
	switch {
	case errors.Is(err, forward.ErrInvalid):
		return httpx.BadRequest("%s", err.Error())
	case errors.Is(err, forward.ErrNotFound):
		return httpx.Errorf(fiber.StatusNotFound, "%s", err.Error())
	case errors.Is(err, forward.ErrConflict):
		return httpx.Errorf(fiber.StatusConflict, "%s", err.Error())
	}
	return err
}

func pairFromBody(c *fiber.Ctx, body *ForwardPairBody) (p *forward.Pair, keepPassword bool, err error) {
	if err := httpx.DecodeJSON(c, body); err != nil {
		return nil, false, err
	}
	p = &forward.Pair{Tenant: httpx.TenantOf(c), ID: body.ID, SourceQuery: body.SourceQuery, DestinationURL: body.DestinationURL, Enabled: true}
	if body.Enabled != nil {
		p.Enabled = *body.Enabled
	}
	keepPassword = true
	if cr := body.DestinationCredentials; cr != nil {
		p.Username = cr.Username
		if cr.Password != nil {
			p.Password, keepPassword = *cr.Password, false
		}
	}
	return p, keepPassword, nil
}

func (a *API) createForwardPair(c *fiber.Ctx) error {
	var body ForwardPairBody
	p, _, err := pairFromBody(c, &body)
	if err != nil {
		return err
	}
	if err := a.d.Forward.Create(c.UserContext(), p); err != nil {
		return forwardErr(err)
	}
	return c.Status(fiber.StatusCreated).JSON(showPair(p))
}

func (a *API) listForwardPairs(c *fiber.Ctx) error {
	ps, err := a.d.Forward.List(c.UserContext(), httpx.TenantOf(c))
	if err != nil {
		return err
	}
	return c.JSON(ForwardPairList{Pairs: httpx.ShowAll(ps, showPair)})
}

func (a *API) getForwardPair(c *fiber.Ctx) error {
	p, err := a.d.Forward.Get(c.UserContext(), httpx.TenantOf(c), c.Params("pair_id"))
	if err != nil {
		return forwardErr(err)
	}
	return c.JSON(showPair(p))
}

func (a *API) updateForwardPair(c *fiber.Ctx) error {
	var body ForwardPairBody
	p, keep, err := pairFromBody(c, &body)
	if err != nil {
		return err
	}
	id := c.Params("pair_id")
	if p.ID != "" && p.ID != id {
		return httpx.BadRequest("id %q in the body differs from the path's %q", p.ID, id)
	}
	p.ID = id
	if err := a.d.Forward.Update(c.UserContext(), p, keep); err != nil {
		return forwardErr(err)
	}
	got, err := a.d.Forward.Get(c.UserContext(), p.Tenant, id)
	if err != nil {
		return forwardErr(err)
	}
	return c.JSON(showPair(got))
}

func (a *API) deleteForwardPair(c *fiber.Ctx) error {
	return httpx.DeleteItem(c, httpx.PathTenant, "pair_id", a.d.Forward.Delete, forwardErr)
}

func forwardSchemas() map[string]any {
	nullableTime := map[string]any{"type": "string", "format": "date-time", "nullable": true}
	creds := httpx.Obj(map[string]any{"username": httpx.Str(), "password": map[string]any{"type": "string", "description": "write-only; stored encrypted, never returned"}})
	pair := httpx.Obj(map[string]any{"id": httpx.Str(), "tenant_id": httpx.Str(), "source_query": httpx.Str(), "destination_url": httpx.Str(),
		"destination_credentials": creds, "enabled": httpx.Bool(),
		"status": httpx.Obj(map[string]any{"position": nullableTime, "forwarded": map[string]any{"type": "integer"},
			"failures": map[string]any{"type": "integer"}, "last_attempt": nullableTime, "next_attempt": nullableTime, "last_error": httpx.Str()}),
		"create_dt": httpx.DateTime(), "update_dt": httpx.DateTime()})
	return map[string]any{
		"ForwardPairBody": httpx.Obj(map[string]any{
			"id":                      map[string]any{"type": "string", "description": "optional on POST (a random id otherwise); on PUT equal to the path's or absent"},
			"source_query":            map[string]any{"type": "string", "description": "GET /statements filter parameters (agent, verb, activity, registration, related_activities, related_agents) as a query string; empty forwards every statement"},
			"destination_url":         map[string]any{"type": "string", "description": "the destination's xAPI endpoint; batches are POSTed to <destination_url>/statements"},
			"destination_credentials": creds,
			"enabled":                 map[string]any{"type": "boolean", "default": true}}, "destination_url"),
		"ForwardPair":     pair,
		"ForwardPairList": httpx.Obj(map[string]any{"forwarding_pairs": map[string]any{"type": "array", "items": httpx.Ref("ForwardPair")}}),
	}
}
