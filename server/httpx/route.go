// Package httpx holds what the HTTP packages of server/ share: the route table's types and
// the registrar the root implements, the errors the central handler answers, the request
// readers (JSON bodies, uploads, query and path parameters), the authenticated principal and
// tenant of a request, and the helpers of the OpenAPI schemas. It sits below the root
// (server) and the product packages (contentapi, lrsapi, console), which cannot import the
// root because the root imports them.
package httpx

import "github.com/gofiber/fiber/v2"

// Scope says how a route finds its tenant and who may call it.
type Scope int

const (
	// ScopePublic routes need no credentials (health, API description).
	ScopePublic Scope = iota
	// ScopeRoot routes are app management: root credentials only.
	ScopeRoot
	// ScopeRootTenant routes are app management of one tenant named by :tenant_id (root only).
	ScopeRootTenant
	// ScopeEnginePath routes take the tenant from the :tenant path segment, lowercased.
	ScopeEnginePath
	// ScopeHeader routes take the tenant from the tenant_id header (content service).
	ScopeHeader
	// ScopeLRS routes are the xAPI record store's: LRS credentials (root, tenant credentials,
	// the tenant's LRS accounts, launch tokens), the tenant from the optional :tenant segment
	// or else the credential, and the X-Experience-API-Version rules.
	ScopeLRS
)

// Route is one registered endpoint with what /openapi.json says about it.
type Route struct {
	Method  string
	Path    string // Fiber syntax, :param
	Summary string
	Tag     string
	Scope   Scope
	// Body names the request schema (a key of the OpenAPI components), "" for none.
	Body string
	// Response names the success schema, "" for an empty body.
	Response string
	Success  int
	// Query lists the query parameters.
	Query []Param
	// AllowDisabled exempts a write from the disabled-tenant rule (the PUT that changes enabled).
	AllowDisabled bool
	// Head also answers HEAD on a GET route: the same headers without the body.
	Head bool
	// Media lists content types of the success body other than application/json (with
	// Response as its schema); "*/*" stands for any.
	Media []string
	// Answers are further success answers beside Success: the record store's alternate
	// request syntax makes one POST answer as each method of its resource does.
	Answers []Answer
	// Upload marks a route whose multipart body streams to the blob store, up to
	// the upload limit; its other bodies (JSON) and every other route's are read into memory
	// up to the JSON limit (the record store: its own limit).
	Upload bool
	// BodyLimit, when set, is the route's body limit in bytes instead of its kind's (the
	// OAuth token endpoint reads its form before the client is known: MaxCredentialsBody).
	BodyLimit int64
	// UploadSchema names the multipart body's schema when it is not a single 'file' part.
	UploadSchema string
	// FormBody names the schema of an application/x-www-form-urlencoded variant of the body.
	FormBody string
	// ErrorSchema, when set, names the schema of the route's own 400 and 401 bodies (the
	// OAuth token endpoint answers RFC 6749 error objects).
	ErrorSchema string
}

// Answer is one documented success answer of a route.
type Answer struct {
	Status int
	// Schema names the application/json body's schema, "" for none.
	Schema string
	Media  []string
}

// Param is one documented query parameter.
type Param struct {
	Name, Type, Description string
	Required                bool
}

// PageRoute is a browser route (not an API operation) with its body limit.
type PageRoute struct {
	Method, Path string
	Limit        int64
}

// Registrar is where a product package registers its routes; the root (server.Server)
// implements it, so that every route gets the same chain and feeds /openapi.json.
type Registrar interface {
	// Handle registers an API operation behind the chain its Scope asks for (the body limit,
	// then authentication and tenant scoping) and lists it in /openapi.json.
	Handle(r Route, h fiber.Handler)
	// Router is the application itself, for what is not an API operation: middleware under
	// a path prefix, browser pages.
	Router() fiber.Router
}

// IsWrite reports whether method changes data (the disabled-tenant rule, the permissions).
func IsWrite(method string) bool {
	return method == fiber.MethodPost || method == fiber.MethodPut || method == fiber.MethodDelete || method == fiber.MethodPatch
}
