package contentapi

import (
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/content/subscription"
	"github.com/lectern-lms/lectern/server/httpx"
)

// Webhook subscriptions of the content service (spec/001 "Subscription authentication
// configuration", "Webhook message", "Events"), per tenant in header tenant_id like the other
// content endpoints. See docs/decisions.md "Subscriptions and webhooks".

// SubscriptionAuthBody is the body of POST /api/v1/app_management/subscription_auth.
type SubscriptionAuthBody struct {
	Type     string  `json:"type"`
	Key      *string `json:"key"`
	Secret   *string `json:"secret"`
	Scope    *string `json:"scope"`
	TokenURL *string `json:"token_url"`
}

// SubscriptionAuth is one authentication configuration as the API shows it: never the secret.
type SubscriptionAuth struct {
	AuthConfigID string  `json:"auth_config_id"`
	TenantID     string  `json:"tenant_id"`
	Type         string  `json:"type"`
	Key          *string `json:"key"`
	Scope        *string `json:"scope"`
	TokenURL     *string `json:"token_url"`
	Created      string  `json:"create_dt"`
}

// SubscriptionAuthList is the body of GET .../subscription_auth.
type SubscriptionAuthList struct {
	Configs []SubscriptionAuth `json:"subscription_auth"`
}

// SubscriptionBody is the body of POST /api/v1/app_management/subscriptions.
type SubscriptionBody struct {
	Topic        string `json:"topic"`
	URL          string `json:"url"`
	AuthConfigID string `json:"auth_config_id"`
}

// SubscriptionView is one subscription. SigningSecret is set in the creation response only.
type SubscriptionView struct {
	SubscriptionID string `json:"subscription_id"`
	TenantID       string `json:"tenant_id"`
	Topic          string `json:"topic"`
	URL            string `json:"url"`
	AuthConfigID   string `json:"auth_config_id"`
	SigningSecret  string `json:"signing_secret,omitempty"`
	Created        string `json:"create_dt"`
}

// SubscriptionList is the body of GET .../subscriptions.
type SubscriptionList struct {
	Subscriptions []SubscriptionView `json:"subscriptions"`
}

// DeliveryView is one delivery attempt in a subscription's log.
type DeliveryView struct {
	MessageID string `json:"message_id"`
	Attempt   int    `json:"attempt"`
	Time      string `json:"attempt_dt"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Final     bool   `json:"final"`
}

// DeliveryList is the body of GET .../subscriptions/{subscription_id}/deliveries.
type DeliveryList struct {
	Deliveries []DeliveryView `json:"deliveries"`
}

func (a *API) registerSubscriptions(r httpx.Registrar) {
	const auth, subs = "/api/v1/app_management/subscription_auth", "/api/v1/app_management/subscriptions"
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: auth, Summary: "Create a subscription authentication configuration (BASIC_AUTH, OAUTH_2_CLIENT_CREDENTIALS, NO_AUTH)", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Body: "SubscriptionAuthBody", Success: 201, Response: "SubscriptionAuth"}, a.createSubscriptionAuth)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: auth, Summary: "List the tenant's subscription authentication configurations (never their secrets)", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Success: 200, Response: "SubscriptionAuthList"}, a.listSubscriptionAuth)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: auth + "/:auth_config_id", Summary: "Delete a subscription authentication configuration; 409 while a subscription uses it", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Success: 204}, a.deleteSubscriptionAuth)
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: subs, Summary: "Subscribe a URL to a topic (JOB_PROCESSED); the response alone carries the signing secret", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Body: "SubscriptionBody", Success: 201, Response: "Subscription"}, a.createSubscription)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: subs, Summary: "List the tenant's webhook subscriptions", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Success: 200, Response: "SubscriptionList"}, a.listSubscriptions)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: subs + "/:subscription_id", Summary: "Delete a subscription with its delivery log; pending deliveries stop", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Success: 204}, a.deleteSubscription)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: subs + "/:subscription_id/deliveries", Summary: "A subscription's delivery log: every attempt with its time, HTTP status or error, and message_id", Tag: "subscriptions",
		Scope: httpx.ScopeHeader, Success: 200, Response: "DeliveryList"}, a.listDeliveries)
}

func subscriptionErr(err error) error {
	switch {
	case errors.Is(err, subscription.ErrInvalid):
		return httpx.BadRequest("%s", err.Error())
	case errors.Is(err, subscription.ErrNotFound):
		return httpx.NotFound("%s", err.Error())
	case errors.Is(err, subscription.ErrInUse):
		return httpx.Errorf(fiber.StatusConflict, "%s", err.Error())
	}
	return err
}

func showAuth(a *subscription.Auth) SubscriptionAuth {
	return SubscriptionAuth{AuthConfigID: a.ID, TenantID: a.Tenant, Type: a.Type, Key: a.Key, Scope: a.Scope, TokenURL: a.TokenURL,
		Created: localTime(a.Created)}
}

func showSubscription(sub *subscription.Subscription) SubscriptionView {
	return SubscriptionView{SubscriptionID: sub.ID, TenantID: sub.Tenant, Topic: sub.Topic, URL: sub.URL, AuthConfigID: sub.AuthConfigID,
		Created: localTime(sub.Created)}
}

func showDelivery(d subscription.Delivery) DeliveryView {
	return DeliveryView{MessageID: d.MessageID, Attempt: d.Attempt, Time: d.Time.UTC().Format(time.RFC3339Nano),
		Status: d.Status, Error: d.Error, Final: d.Final}
}

func (a *API) createSubscriptionAuth(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	var body SubscriptionAuthBody
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	auth := &subscription.Auth{Tenant: tenantID, Type: body.Type, Key: body.Key, Secret: body.Secret, Scope: body.Scope, TokenURL: body.TokenURL}
	if auth.TokenURL != nil {
		if err := a.d.Outbound.CheckSaved(c.UserContext(), *auth.TokenURL); err != nil {
			return httpx.BadRequest("token_url: %v", err)
		}
	}
	if err := a.d.Subscriptions.CreateAuth(c.UserContext(), auth); err != nil {
		return subscriptionErr(err)
	}
	return c.Status(fiber.StatusCreated).JSON(showAuth(auth))
}

func (a *API) listSubscriptionAuth(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	as, err := a.d.Subscriptions.ListAuth(c.UserContext(), tenantID)
	if err != nil {
		return err
	}
	return c.JSON(SubscriptionAuthList{Configs: httpx.ShowAll(as, showAuth)})
}

func (a *API) deleteSubscriptionAuth(c *fiber.Ctx) error {
	return httpx.DeleteItem(c, contentTenant, "auth_config_id", a.d.Subscriptions.DeleteAuth, subscriptionErr)
}

func (a *API) createSubscription(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	var body SubscriptionBody
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.URL == "" {
		return httpx.BadRequest("url is required")
	}
	if err := a.d.Outbound.CheckSaved(c.UserContext(), body.URL); err != nil {
		return httpx.BadRequest("url: %v", err)
	}
	sub := &subscription.Subscription{Tenant: tenantID, Topic: body.Topic, URL: body.URL, AuthConfigID: body.AuthConfigID}
	if err := a.d.Subscriptions.CreateSubscription(c.UserContext(), sub); err != nil {
		return subscriptionErr(err)
	}
	v := showSubscription(sub)
	v.SigningSecret = sub.Secret
	return c.Status(fiber.StatusCreated).JSON(v)
}

func (a *API) listSubscriptions(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	subs, err := a.d.Subscriptions.ListSubscriptions(c.UserContext(), tenantID)
	if err != nil {
		return err
	}
	return c.JSON(SubscriptionList{Subscriptions: httpx.ShowAll(subs, showSubscription)})
}

func (a *API) deleteSubscription(c *fiber.Ctx) error {
	return httpx.DeleteItem(c, contentTenant, "subscription_id", a.d.Subscriptions.DeleteSubscription, subscriptionErr)
}

func (a *API) listDeliveries(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	ds, err := a.d.Subscriptions.Deliveries(c.UserContext(), tenantID, c.Params("subscription_id"))
	if err != nil {
		return subscriptionErr(err)
	}
	return c.JSON(DeliveryList{Deliveries: httpx.ShowAll(ds, showDelivery)})
}

func subscriptionSchemas() map[string]any {
	nullStr := func(desc string) map[string]any {
		return map[string]any{"type": "string", "nullable": true, "description": desc}
	}
	authType := map[string]any{"type": "string", "enum": []string{subscription.AuthOAuth2, subscription.AuthBasic, subscription.AuthNone}}
	intT := map[string]any{"type": "integer"}
	return map[string]any{
		"SubscriptionAuthBody": httpx.Obj(map[string]any{"type": authType,
			"key":       nullStr("BASIC_AUTH user, or the OAuth client id; null for NO_AUTH"),
			"secret":    nullStr("BASIC_AUTH password, or the OAuth client secret; write-only, stored encrypted; null for NO_AUTH"),
			"scope":     nullStr("OAUTH_2_CLIENT_CREDENTIALS only"),
			"token_url": nullStr("OAUTH_2_CLIENT_CREDENTIALS only: the token endpoint (outbound policy applies)")}, "type"),
		"SubscriptionAuth": httpx.Obj(map[string]any{"auth_config_id": httpx.Str(), "tenant_id": httpx.Str(), "type": authType,
			"key": nullStr(""), "scope": nullStr(""), "token_url": nullStr(""), "create_dt": httpx.Str()}),
		"SubscriptionAuthList": httpx.Obj(map[string]any{"subscription_auth": map[string]any{"type": "array", "items": httpx.Ref("SubscriptionAuth")}}),
		"SubscriptionBody": httpx.Obj(map[string]any{"topic": map[string]any{"type": "string", "enum": []string{subscription.TopicJobProcessed}},
			"url": httpx.Str(), "auth_config_id": httpx.Str()}, "topic", "url", "auth_config_id"),
		"Subscription": httpx.Obj(map[string]any{"subscription_id": httpx.Str(), "tenant_id": httpx.Str(), "topic": httpx.Str(), "url": httpx.Str(), "auth_config_id": httpx.Str(),
			"signing_secret": map[string]any{"type": "string", "description": "creation response only: the HMAC-SHA256 key of X-Lectern-Signature"},
			"create_dt":      httpx.Str()}),
		"SubscriptionList": httpx.Obj(map[string]any{"subscriptions": map[string]any{"type": "array", "items": httpx.Ref("Subscription")}}),
		"DeliveryList": httpx.Obj(map[string]any{"deliveries": map[string]any{"type": "array", "items": httpx.Obj(map[string]any{
			"message_id": httpx.Str(), "attempt": intT, "attempt_dt": httpx.DateTime(),
			"status": map[string]any{"type": "integer", "description": "the receiver's HTTP status; 0 when none arrived"},
			"error":  httpx.Str(), "final": httpx.Bool()})}}),
	}
}
