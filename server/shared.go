package server

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
)

// The route table's types and the short helper names the engine's files (courses,
// registrations, configuration, the player, rollup and xAPI conversion) use; they stay in
// this package until the engine and the player move to packages of their own, and the
// helpers forward to httpx, which the product packages use directly.

type (
	// Route is one registered endpoint with what /openapi.json says about it (httpx.Route).
	Route = httpx.Route
	// Scope says how a route finds its tenant and who may call it (httpx.Scope).
	Scope = httpx.Scope
	// Param is one documented query parameter (httpx.Param).
	Param = httpx.Param
	// Answer is one documented success answer of a route (httpx.Answer).
	Answer = httpx.Answer
	// Error is an error with the HTTP status and the message the client sees (httpx.Error).
	Error = httpx.Error
)

// The scopes of httpx.
const (
	ScopePublic     = httpx.ScopePublic
	ScopeRoot       = httpx.ScopeRoot
	ScopeRootTenant = httpx.ScopeRootTenant
	ScopeEnginePath = httpx.ScopeEnginePath
	ScopeHeader     = httpx.ScopeHeader
	ScopeLRS        = httpx.ScopeLRS
)

func errorf(status int, format string, args ...any) *Error {
	return httpx.Errorf(status, format, args...)
}

func badRequest(format string, args ...any) *Error { return httpx.BadRequest(format, args...) }

func notFound(format string, args ...any) *Error { return httpx.NotFound(format, args...) }

func decodeJSON(c *fiber.Ctx, v any) error { return httpx.DecodeJSON(c, v) }

func requireHTTPURL(raw *string) error { return httpx.RequireHTTPURL(raw) }

func queryBool(c *fiber.Ctx, name string, def bool) (bool, error) {
	return httpx.QueryBool(c, name, def)
}

func queryInt(c *fiber.Ctx, name string, def, min, max int) (int, error) {
	return httpx.QueryInt(c, name, def, min, max)
}

func tenantOf(c *fiber.Ctx) string { return httpx.TenantOf(c) }

// uploadPart is a streamed upload the engine's import stores in the server's blob store.
type uploadPart struct{ *httpx.Upload }

func openUpload(c *fiber.Ctx, field string, head int) (*uploadPart, error) {
	up, err := httpx.OpenUpload(c, field, head)
	if err != nil {
		return nil, err
	}
	return &uploadPart{up}, nil
}

func (up *uploadPart) store(c *fiber.Ctx, s *Server, key string) error {
	return up.Store(c, s.deps.Blobs, key)
}

func (s *Server) dropUpload(ctx context.Context, key string) {
	httpx.DropUpload(ctx, s.deps.Blobs, s.log, key)
}

func obj(props map[string]any, required ...string) map[string]any {
	return httpx.Obj(props, required...)
}

func str() map[string]any      { return httpx.Str() }
func boolean() map[string]any  { return httpx.Bool() }
func dateTime() map[string]any { return httpx.DateTime() }
func ref(name string) map[string]any {
	return httpx.Ref(name)
}
