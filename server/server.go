// Package server is the root of Lectern's HTTP layer on Fiber: New, the routing with
// authentication and tenant scoping, the central error handler, body limits and framing,
// /openapi.json, health, the metrics middleware and the queue console. Each product has a
// package of its own below it, with its own Deps built here from this package's (products.go):
// server/engineapi (the course engine API), server/player (the player and the runtime
// endpoints content calls), server/contentapi (the content service), server/lrsapi (the xAPI
// record store) and server/console (the web console); what they share is server/httpx.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gofiber/fiber/v2/middleware/requestid"
	"github.com/valyala/fasthttp"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/subscription"
	"github.com/lectern-lms/lectern/content/taxonomy"
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/indexer"
	"github.com/lectern-lms/lectern/indexer/embed"
	"github.com/lectern-lms/lectern/internal/throttle"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/lrs/forward"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/lrs/oauth"
	"github.com/lectern-lms/lectern/server/contentapi"
	"github.com/lectern-lms/lectern/server/engineapi"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/server/lrsapi"
	"github.com/lectern-lms/lectern/server/player"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/storage/record"
	"github.com/lectern-lms/lectern/storage/statements"
	"github.com/lectern-lms/lectern/tenant"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Check is one readiness probe (a backend's ping).
type Check struct {
	Name string
	Ping func(ctx context.Context) error
}

// RootCredentials is the platform's root account.
type RootCredentials = httpx.RootCredentials

// Deps is everything the HTTP layer needs; cmd/lectern builds it from configuration.
type Deps struct {
	Records  record.Store
	Blobs    blob.Store
	Queue    queue.Queue
	Tenants  *tenant.Registry
	Settings *settings.Store
	Jobs     *jobs.Store
	Courses  *course.Store
	// Registrations keeps registrations, their instances and progress.
	Registrations *registration.Store
	Launch        *course.LaunchSigner
	// Runtime keeps the SCORM run-time data the player commits.
	Runtime *scormrt.Store
	// Learner is the learner's path (launch, sessions, commits, rollup, post-backs,
	// conversion) the player and the registration endpoints call.
	Learner *learner.Service
	// Content holds content items and versions; Index is the content search index.
	Content *content.Store
	Index   indexer.Index
	// Embedder embeds semantic search terms; nil answers semantic searches with 503 and
	// NoEmbedder as the message.
	Embedder   embed.Embedder
	NoEmbedder string
	// Taxonomies keeps the tenants' skills taxonomies; ContentConfig the content service's
	// settings (GENERATION__SKILL_TAXONOMY); ContentFields the generated fields.
	Taxonomies    *taxonomy.Store
	ContentConfig *content.Config
	ContentFields *content.FieldStore
	// IndexQueue receives the index tasks of field generation jobs.
	IndexQueue queue.Queue
	// Statements is the xAPI record store's backend (statements, documents, activities).
	Statements statements.Backend
	// Forward keeps the statement forwarding pairs (the forwarder itself runs in the worker).
	Forward *forward.Manager
	// Subscriptions keeps the content service's webhook subscriptions; Outbound checks their
	// URLs against the outbound policy when they are created.
	Subscriptions *subscription.Store
	Outbound      *outbound.Client
	// LRS overrides the record store's extension points; zero fields use the defaults.
	LRS    LRSHooks
	Root   RootCredentials
	Checks []Check
	Logger *slog.Logger
	// PublicURL is the origin of the APIs and the console, used in absolute links.
	PublicURL string
	// ContentURL is the content origin: the player, its runtime endpoints and the course
	// files are served there and nowhere else (origin.go). Empty serves them on every origin,
	// unisolated; cmd/lectern always sets it.
	ContentURL string
	// BodyLimit is the largest upload in bytes (the multipart body of a course or content
	// import), streamed to the blob store; other bodies have smaller limits of their own.
	BodyLimit int
	Version   string
	// LaunchTokens signs the record-store credentials of launched content; nil rejects them.
	LaunchTokens *launch.Issuer
	// OAuth keeps the record store's OAuth 2.0 clients and issues their access tokens; nil
	// leaves the token endpoint answering 503 and OAuth credentials rejected.
	OAuth *oauth.Service
	// XAPIDefaultVersion is the xAPI version ("1.0.3" or "2.0.0", the default) the record
	// store reports on a request that names none.
	XAPIDefaultVersion string
	// RecordBodyLimit is the largest request body of the xAPI record store in bytes
	// (statements with attachments, documents), which is held in memory.
	RecordBodyLimit int
	// Metrics receives request timings and stored-statement counts and serves GET /metrics
	// (root credentials); nil measures nothing and leaves /metrics answering 404.
	Metrics Metrics
	// QueueConsole, when set, is a web console of the job queues (asynqmon in the
	// distributed mode) served to root under QueueConsolePath.
	QueueConsole http.Handler
	// Guard throttles failed attempts to prove a secret (API credentials, console sign-in,
	// LRS accounts, OAuth client secrets) per account and per source; nil uses
	// throttle.NewGuard.
	Guard *throttle.Guard
	// PreAuth bounds the memory of the bodies read before their sender is known, together
	// (sign-in, the OAuth token form, the record store's alternate syntax); nil: New makes
	// one of 64 MiB.
	PreAuth *httpx.Budget
	// ConsoleSealer seals the web console's session cookies (the signed-in credentials); nil
	// leaves /console/ answering 503.
	ConsoleSealer *settings.Sealer
}

// Metrics is what the HTTP layer measures and exposes; internal/metrics implements it over
// a Prometheus registry, which this package never imports.
type Metrics interface {
	// ObserveRequest records one request under its route pattern (never the raw path).
	ObserveRequest(method, route string, status int, d time.Duration)
	// StatementsStored counts statements stored by the statement-write use case.
	StatementsStored(n int)
	// Handler serves the exposition format.
	Handler() http.Handler
}

// Server is the Fiber application with its route table.
type Server struct {
	app    *fiber.App
	deps   Deps
	log    *slog.Logger
	routes []httpx.Route
	// contentHost is ContentURL's host (and port): a request naming it is on the content
	// origin.
	contentHost string
	// handler is the application's request handler, taken once the routes are registered;
	// the console dispatches its API calls to it in process.
	handler fasthttp.RequestHandler
	// The products' HTTP sides; the console is built with the routes (consoleDeps).
	lrs     *lrsapi.API
	content *contentapi.API
	engine  *engineapi.API
	player  *player.API
}

// New builds the application and registers every route.
func New(deps Deps) *Server {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.BodyLimit <= 0 {
		deps.BodyLimit = defaultUploadLimit
	}
	if deps.RecordBodyLimit <= 0 {
		deps.RecordBodyLimit = defaultRecordLimit
	}
	if deps.Guard == nil {
		deps.Guard = throttle.NewGuard()
	}
	if deps.PreAuth == nil {
		deps.PreAuth = httpx.NewBudget(defaultPreAuthBudget)
	}
	s := &Server{deps: deps, log: deps.Logger, contentHost: hostOf(deps.ContentURL)}
	s.content = contentapi.New(s.contentDeps())
	s.lrs = lrsapi.New(s.lrsDeps())
	s.engine = engineapi.New(s.engineDeps())
	s.player = player.New(s.playerDeps())
	s.app = fiber.New(fiber.Config{
		AppName:               "lectern",
		ErrorHandler:          s.errorHandler,
		BodyLimit:             max(deps.BodyLimit, deps.RecordBodyLimit, httpx.MaxJSONBody),
		DisableStartupMessage: true,
		ReadTimeout:           5 * time.Minute,
		IdleTimeout:           2 * time.Minute,

		// Bodies are read by the routes, each up to its own limit and after authentication
		// (body.go); fasthttp itself neither buffers them nor parses multipart forms into
		// memory or temp files, and its header hook keeps it from reading ahead.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	s.app.Server().HeaderReceived = s.headerReceived
	s.app.Server().Handler = knownMethods(s.app.Server().Handler)
	s.app.Use(recover.New())
	s.app.Use(requestid.New(requestid.Config{ContextKey: httpx.LocalsRequestID}))
	s.app.Use(s.accessLog)
	s.app.Use(s.framingCheck)
	s.app.Use(s.originGate)
	s.registerRoutes()
	s.app.Use(func(c *fiber.Ctx) error {
		c.Locals(routeLocal, unmatchedRoute)
		return httpx.NotFound("no route for %s %s", c.Method(), c.Path())
	})
	// Handler builds the route tree; taking it once here keeps the console's in-process
	// calls from rebuilding the tree while requests are served.
	s.handler = s.app.Handler()
	return s
}

// App returns the Fiber application (for Listen and for tests).
func (s *Server) App() *fiber.App { return s.app }

// Routes lists every API route with its OpenAPI metadata.
func (s *Server) Routes() []httpx.Route { return s.routes }

func (s *Server) accessLog(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		// Let the central handler write the response now so the logged status is the real one.
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	took := time.Since(start)
	s.log.Info("http", "request_id", httpx.RequestID(c), "method", c.Method(), "path", c.Path(),
		"status", c.Response().StatusCode(), "duration_ms", took.Milliseconds())
	if s.deps.Metrics != nil {
		s.deps.Metrics.ObserveRequest(methodLabel(c.Method()), routeOf(c), c.Response().StatusCode(), took)
	}
	return nil
}

// methodLabel is the request method as a metrics label: one of the constant strings of the
// HTTP methods Lectern serves, or "OTHER". Fiber's c.Method() points into the request buffer,
// which later requests overwrite, and Prometheus keeps a label string for the life of its
// series: handing it c.Method() turned GET into "GETT" and POST into "POS" on later scrapes.
// A fixed vocabulary also keeps a client inventing methods from creating series.
func methodLabel(m string) string {
	for _, known := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete,
		fiber.MethodHead, fiber.MethodOptions, fiber.MethodPatch} {
		if m == known {
			return known
		}
	}
	return "OTHER"
}

// routeLocal marks a request no route matched; unmatchedRoute is its route label.
const (
	routeLocal     = "metrics_route"
	unmatchedRoute = "unmatched"
)

// routeOf is the request's route pattern for the metrics: the matched route's path (":param"
// segments, not their values), the prefix of the middleware that answered before routing (the
// record store's prelude), or "unmatched", so the label's values are bounded by the route table.
func routeOf(c *fiber.Ctx) string {
	if v, ok := c.Locals(routeLocal).(string); ok {
		return v
	}
	if r := c.Route(); r != nil && r.Path != "" {
		return r.Path
	}
	return unmatchedRoute
}

// registrar is the httpx.Registrar the product packages register their routes with.
type registrar struct{ s *Server }

func (r registrar) Handle(rt httpx.Route, h fiber.Handler) { r.s.handle(rt, h) }
func (r registrar) Router() fiber.Router                   { return r.s.app }

// handle registers an API operation: the body limit (a declared length over it is refused
// before anything else), the chain of its scope, the body read, the handler.
func (s *Server) handle(r httpx.Route, h fiber.Handler) {
	s.routes = append(s.routes, r)
	chain := []fiber.Handler{s.limitBody(r)}
	switch r.Scope {
	case httpx.ScopePublic:
	case httpx.ScopeLRS:
		chain = append(chain, s.lrs.Chain(r)...)
	default:
		chain = append(chain, s.authenticate, s.scopeTenant(r))
	}
	chain = append(chain, s.readBody(r), h)
	s.app.Add(r.Method, r.Path, chain...)
	if r.Head {
		s.app.Add(fiber.MethodHead, r.Path, chain...)
	}
}

// scopeTenant enforces, in order: root-only routes (403 for tenant credentials), a tenant
// credential used on another tenant (403), an unknown tenant (404) and writes to a disabled
// tenant (409). The resolved tenant id is stored in Locals("tenant").
func (s *Server) scopeTenant(r httpx.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := httpx.PrincipalOf(c)
		var id string
		switch r.Scope {
		case httpx.ScopeRoot, httpx.ScopeRootTenant:
			if !p.Root {
				return httpx.Errorf(fiber.StatusForbidden, "this operation needs the root credentials")
			}
			if r.Scope == httpx.ScopeRoot {
				return c.Next()
			}
			id = c.Params("tenant_id")
		case httpx.ScopeEnginePath:
			id = strings.ToLower(c.Params("tenant"))
		case httpx.ScopeHeader:
			id = c.Get("tenant_id")
			if id == "" && p.Root {
				// Root may address system-wide resources (a tenant-deletion job) without a tenant.
				return c.Next()
			}
			if id == "" {
				id = p.Tenant
			}
		}
		if !p.Root && p.Tenant != id {
			return httpx.Errorf(fiber.StatusForbidden, "the credential of tenant '%s' cannot access tenant '%s'", p.Tenant, id)
		}
		t, err := s.deps.Tenants.Get(c.UserContext(), id)
		if err != nil {
			return err
		}
		if !t.Enabled && httpx.IsWrite(r.Method) && !r.AllowDisabled {
			return httpx.Errorf(fiber.StatusConflict, "tenant '%s' is disabled; enable it before changing its data", id)
		}
		httpx.SetTenant(c, t.ID)
		return c.Next()
	}
}
