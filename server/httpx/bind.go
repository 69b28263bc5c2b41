package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// MaxJSONBody bounds JSON request bodies; uploads have their own, larger limit.
const MaxJSONBody = 1 << 20

// DecodeJSON decodes the request body into v, rejecting what the specs forbid: a body that
// is not one JSON object, properties v does not declare ("No other properties are allowed")
// and values of the wrong type, with a message naming the property.
func DecodeJSON(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(body) > MaxJSONBody {
		return Errorf(fiber.StatusRequestEntityTooLarge, "JSON body is larger than %d bytes", MaxJSONBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return BadRequest("request body is empty; a JSON object is required")
	}
	// The Content-Type is not checked: many clients (curl -d among them) label JSON as a form,
	// and the body must parse as JSON anyway. The whole body is checked first, so a body that
	// is not JSON (truncated, or cut at the front so that it starts with a string) is called
	// that, not judged by its first value.
	if !json.Valid(body) {
		return BadRequest("%s", invalidJSON(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return BadRequest("%s", describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return BadRequest("request body must hold exactly one JSON object")
	}
	return nil
}

// invalidJSON says why body, which json.Valid refused, is not JSON: truncated (it ends
// before its first value is complete), a syntax error at a byte offset, or more after a
// complete first value (a body cut at the front, which then starts with a string).
func invalidJSON(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	err := dec.Decode(&v)
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Sprintf("request body is not valid JSON: it is truncated (its %d bytes end before the JSON value is complete)", len(body))
	case errors.As(err, &syn):
		return fmt.Sprintf("request body is not valid JSON (at byte %d): %v", syn.Offset, syn)
	case err != nil:
		return "request body is not valid JSON: " + err.Error()
	}
	return fmt.Sprintf("request body is not valid JSON: it goes on after the JSON value that ends at byte %d", dec.InputOffset())
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("request body is not valid JSON (at byte %d): %v", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("request body must be a JSON object, not %s", typ.Value)
		}
		return fmt.Sprintf("property %q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "request body is truncated JSON"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Sprintf("unknown property %s; no other properties are allowed", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return "request body is not valid JSON: " + err.Error()
}

func jsonKind(k string) string {
	switch k {
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "int", "int64", "int32", "float64":
		return "a number"
	case "ptr":
		return "a value of the documented type"
	}
	return "a " + k
}

// RequireHTTPURL checks the url property of an import request: present, and an absolute
// http or https URL (the outbound client decides later which hosts it may reach).
func RequireHTTPURL(raw *string) error {
	if raw == nil || *raw == "" {
		return BadRequest("property url is required")
	}
	u, err := url.Parse(*raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return BadRequest("property url must be an absolute http or https URL")
	}
	return nil
}

// QueryBool reads a boolean query parameter (true, 1, yes or false, 0, no), def when absent.
func QueryBool(c *fiber.Ctx, name string, def bool) (bool, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	}
	return false, BadRequest("query parameter %s must be true or false, not %q", name, v)
}

// QueryInt reads an integer query parameter from min to max, def when absent.
func QueryInt(c *fiber.Ctx, name string, def, min, max int) (int, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		return 0, BadRequest("query parameter %s must be an integer from %d to %d, not %q", name, min, max, v)
	}
	return n, nil
}

// PathValue returns a path parameter with its percent-encoding undone (course and content
// ids may contain any printable character).
func PathValue(c *fiber.Ctx, name string) (string, error) {
	v, err := url.PathUnescape(c.Params(name))
	if err != nil {
		return "", BadRequest("path parameter %s is not valid percent-encoding", name)
	}
	return v, nil
}

// ParseSince reads an inclusive ISO 8601 timestamp; without a zone it is UTC.
func ParseSince(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, BadRequest("'%s' is either not a timestamp or seems to be not formatted according to ISO 8601", v)
}

// SettingBody is the body of GET/PUT of one setting, in the engine's configuration and in
// the content service's; no other properties are allowed.
type SettingBody struct {
	Value *string `json:"value"`
}

// Handler pieces shared by the small per-tenant collections (forwarding pairs, webhook
// subscriptions and their auth configurations): their list and delete handlers differ only
// in the store call, the view and the error mapping.

// ShowAll returns the views of items in order: an empty array, never null, when there are none.
func ShowAll[T, V any](items []T, show func(T) V) []V {
	out := make([]V, 0, len(items))
	for _, it := range items {
		out = append(out, show(it))
	}
	return out
}

// DeleteItem answers DELETE of the item named by the path parameter param in the tenant
// that tenant reads from the request: 204 once del removed it, else mapErr's answer to del's
// error.
func DeleteItem(c *fiber.Ctx, tenant func(*fiber.Ctx) (string, error), param string,
	del func(ctx context.Context, tenant, id string) error, mapErr func(error) error) error {
	tenantID, err := tenant(c)
	if err != nil {
		return err
	}
	if err := del(c.UserContext(), tenantID, c.Params(param)); err != nil {
		return mapErr(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// PathTenant is the tenant of a route under /tenants/:tenant_id (always set there).
func PathTenant(c *fiber.Ctx) (string, error) { return TenantOf(c), nil }
