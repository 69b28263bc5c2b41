package server

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

func (s *Server) registerSubscriptions() {
	const auth, subs = "/api/v1/app_management/subscription_auth", "/api/v1/app_management/subscriptions"
	s.handle(Route{Method: fiber.MethodPost, Path: auth, Summary: "Create a subscription authentication configuration (BASIC_AUTH, OAUTH_2_CLIENT_CREDENTIALS, NO_AUTH)", Tag: "subscriptions",
		Scope: ScopeHeader, Body: "SubscriptionAuthBody", Success: 201, Response: "SubscriptionAuth"}, s.createSubscriptionAuth)
	s.handle(Route{Method: fiber.MethodGet, Path: auth, Summary: "List the tenant's subscription authentication configurations (never their secrets)", Tag: "subscriptions",
		Scope: ScopeHeader, Success: 200, Response: "SubscriptionAuthList"}, s.listSubscriptionAuth)
	s.handle(Route{Method: fiber.MethodDelete, Path: auth + "/:auth_config_id", Summary: "Delete a subscription authentication configuration; 409 while a subscription uses it", Tag: "subscriptions",
		Scope: ScopeHeader, Success: 204}, s.deleteSubscriptionAuth)
	s.handle(Route{Method: fiber.MethodPost, Path: subs, Summary: "Subscribe a URL to a topic (JOB_PROCESSED); the response alone carries the signing secret", Tag: "subscriptions",
		Scope: ScopeHeader, Body: "SubscriptionBody", Success: 201, Response: "Subscription"}, s.createSubscription)
	s.handle(Route{Method: fiber.MethodGet, Path: subs, Summary: "List the tenant's webhook subscriptions", Tag: "subscriptions",
		Scope: ScopeHeader, Success: 200, Response: "SubscriptionList"}, s.listSubscriptions)
	s.handle(Route{Method: fiber.MethodDelete, Path: subs + "/:subscription_id", Summary: "Delete a subscription with its delivery log; pending deliveries stop", Tag: "subscriptions",
		Scope: ScopeHeader, Success: 204}, s.deleteSubscription)
	s.handle(Route{Method: fiber.MethodGet, Path: subs + "/:subscription_id/deliveries", Summary: "A subscription's delivery log: every attempt with its time, HTTP status or error, and message_id", Tag: "subscriptions",
		Scope: ScopeHeader, Success: 200, Response: "DeliveryList"}, s.listDeliveries)
}

func subscriptionErr(err error) error {
	switch {
	case errors.Is(err, subscription.ErrInvalid):
		return badRequest("%s", err.Error())
	case errors.Is(err, subscription.ErrNotFound):
		return notFound("%s", err.Error())
	case errors.Is(err, subscription.ErrInUse):
		return errorf(fiber.StatusConflict, "%s", err.Error())
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

func (s *Server) createSubscriptionAuth(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	var body SubscriptionAuthBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	a := &subscription.Auth{Tenant: tenantID, Type: body.Type, Key: body.Key, Secret: body.Secret, Scope: body.Scope, TokenURL: body.TokenURL}
	if a.TokenURL != nil {
		if err := s.deps.Outbound.Check(*a.TokenURL); err != nil {
			return badRequest("token_url: %v", err)
		}
	}
	if err := s.deps.Subscriptions.CreateAuth(c.UserContext(), a); err != nil {
		return subscriptionErr(err)
	}
	return c.Status(fiber.StatusCreated).JSON(showAuth(a))
}

func (s *Server) listSubscriptionAuth(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	as, err := s.deps.Subscriptions.ListAuth(c.UserContext(), tenantID)
	if err != nil {
		return err
	}
	return c.JSON(SubscriptionAuthList{Configs: httpx.ShowAll(as, showAuth)})
}

func (s *Server) deleteSubscriptionAuth(c *fiber.Ctx) error {
	return httpx.DeleteItem(c, contentTenant, "auth_config_id", s.deps.Subscriptions.DeleteAuth, subscriptionErr)
}

func (s *Server) createSubscription(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	var body SubscriptionBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.URL == "" {
		return badRequest("url is required")
	}
	if err := s.deps.Outbound.Check(body.URL); err != nil {
		return badRequest("url: %v", err)
	}
	sub := &subscription.Subscription{Tenant: tenantID, Topic: body.Topic, URL: body.URL, AuthConfigID: body.AuthConfigID}
	if err := s.deps.Subscriptions.CreateSubscription(c.UserContext(), sub); err != nil {
		return subscriptionErr(err)
	}
	v := showSubscription(sub)
	v.SigningSecret = sub.Secret
	return c.Status(fiber.StatusCreated).JSON(v)
}

func (s *Server) listSubscriptions(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	subs, err := s.deps.Subscriptions.ListSubscriptions(c.UserContext(), tenantID)
	if err != nil {
		return err
	}
	return c.JSON(SubscriptionList{Subscriptions: httpx.ShowAll(subs, showSubscription)})
}

func (s *Server) deleteSubscription(c *fiber.Ctx) error {
	return httpx.DeleteItem(c, contentTenant, "subscription_id", s.deps.Subscriptions.DeleteSubscription, subscriptionErr)
}

func (s *Server) listDeliveries(c *fiber.Ctx) error {
	tenantID, err := contentTenant(c)
	if err != nil {
		return err
	}
	ds, err := s.deps.Subscriptions.Deliveries(c.UserContext(), tenantID, c.Params("subscription_id"))
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
		"SubscriptionAuthBody": obj(map[string]any{"type": authType,
			"key":       nullStr("BASIC_AUTH user, or the OAuth client id; null for NO_AUTH"),
			"secret":    nullStr("BASIC_AUTH password, or the OAuth client secret; write-only, stored encrypted; null for NO_AUTH"),
			"scope":     nullStr("OAUTH_2_CLIENT_CREDENTIALS only"),
			"token_url": nullStr("OAUTH_2_CLIENT_CREDENTIALS only: the token endpoint (outbound policy applies)")}, "type"),
		"SubscriptionAuth": obj(map[string]any{"auth_config_id": str(), "tenant_id": str(), "type": authType,
			"key": nullStr(""), "scope": nullStr(""), "token_url": nullStr(""), "create_dt": str()}),
		"SubscriptionAuthList": obj(map[string]any{"subscription_auth": map[string]any{"type": "array", "items": ref("SubscriptionAuth")}}),
		"SubscriptionBody": obj(map[string]any{"topic": map[string]any{"type": "string", "enum": []string{subscription.TopicJobProcessed}},
			"url": str(), "auth_config_id": str()}, "topic", "url", "auth_config_id"),
		"Subscription": obj(map[string]any{"subscription_id": str(), "tenant_id": str(), "topic": str(), "url": str(), "auth_config_id": str(),
			"signing_secret": map[string]any{"type": "string", "description": "creation response only: the HMAC-SHA256 key of X-Lectern-Signature"},
			"create_dt":      str()}),
		"SubscriptionList": obj(map[string]any{"subscriptions": map[string]any{"type": "array", "items": ref("Subscription")}}),
		"DeliveryList": obj(map[string]any{"deliveries": map[string]any{"type": "array", "items": obj(map[string]any{
			"message_id": str(), "attempt": intT, "attempt_dt": dateTime(),
			"status": map[string]any{"type": "integer", "description": "the receiver's HTTP status; 0 when none arrived"},
			"error":  str(), "final": boolean()})}}),
	}
}
