package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// maxJSONBody bounds JSON request bodies; uploads have their own, larger limit.
const maxJSONBody = 1 << 20

// decodeJSON decodes the request body into v, rejecting what the specs forbid: a body that
// is not one JSON object, properties v does not declare ("No other properties are allowed")
// and values of the wrong type, with a message naming the property.
func decodeJSON(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(body) > maxJSONBody {
		return errorf(fiber.StatusRequestEntityTooLarge, "JSON body is larger than %d bytes", maxJSONBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("request body is empty; a JSON object is required")
	}
	// The Content-Type is not checked: many clients (curl -d among them) label JSON as a form,
	// and the body must parse as JSON anyway.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("%s", describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("request body must hold exactly one JSON object")
	}
	return nil
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

// requireHTTPURL checks the url property of an import request: present, and an absolute
// http or https URL (the outbound client decides later which hosts it may reach).
func requireHTTPURL(raw *string) error {
	if raw == nil || *raw == "" {
		return badRequest("property url is required")
	}
	u, err := url.Parse(*raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badRequest("property url must be an absolute http or https URL")
	}
	return nil
}
