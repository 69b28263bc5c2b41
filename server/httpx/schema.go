package httpx

// Helpers of the OpenAPI components each product describes its bodies with.

// Obj is a closed object schema: the properties, of which required are required, and no
// other.
func Obj(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// Str is the string schema.
func Str() map[string]any { return map[string]any{"type": "string"} }

// Bool is the boolean schema.
func Bool() map[string]any { return map[string]any{"type": "boolean"} }

// DateTime is the schema of an RFC 3339 timestamp.
func DateTime() map[string]any { return map[string]any{"type": "string", "format": "date-time"} }

// Ref refers to the component schema name.
func Ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}
