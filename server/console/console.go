package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/internal/throttle"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/server/player"
	"github.com/lectern-lms/lectern/tenant"
)

// The web console (/console/) renders HTML on the server with Go templates and updates parts
// of a page with htmx. It holds no logic of its own: every read and write is a request to
// this server's own JSON API, dispatched in process with the signed-in credentials, so the
// console sees exactly what an API client with those credentials sees (root every tenant, a
// tenant credential its own) and every rule of the API (validation, scoping, disabled
// tenants) applies unchanged. The credentials live in an AES-GCM sealed, HttpOnly,
// SameSite=Strict cookie; nothing is kept on the server, so any API process can serve any
// console request.

// Path is where the web console is served.
const Path = "/console"

const (
	cookieName = "lectern_console"
	// sessionTTL is how long a sign-in lasts; the cookie carries its own expiry.
	sessionTTL = 8 * time.Hour
)

// session is what the sealed cookie carries.
type session struct {
	Key     string `json:"k"`
	Secret  string `json:"s"`
	Root    bool   `json:"r,omitempty"`
	Tenant  string `json:"t,omitempty"`
	Expires int64  `json:"e"`
}

// section is one entry of the console's navigation: a page of a tenant (Tenant set,
// under /console/t/{tenant}/{Path}) or a page of the root account.
type section struct {
	Path  string
	Label string
	// Tenant marks a section that lives under a tenant.
	Tenant bool
}

// view is what every page template receives.
type view struct {
	Title    string
	Section  string
	Session  *session
	Tenant   string
	Sections []section
	// QueueConsole links asynqmon for root when it is mounted.
	QueueConsole bool
	Error        string
	Notice       string
	Data         any
}

// Deps is what the console needs; the root builds it.
type Deps struct {
	// Dispatch serves a request of the console's own in-process API calls through the
	// application's whole handler chain, as if a client had sent it.
	Dispatch fasthttp.RequestHandler
	// SignIn checks a key and secret at sign-in: the root account or a tenant's credential,
	// tenant.ErrBadCredentials when neither.
	SignIn func(ctx context.Context, key, secret string) (httpx.Principal, error)
	// Guard throttles failed sign-ins per account and per source (429 with Retry-After).
	Guard *throttle.Guard
	// PreAuth is the server's budget for bodies read before their sender is known: the
	// sign-in form is read inside it.
	PreAuth *httpx.Budget
	// Sealer seals the session cookies (the signed-in credentials); nil leaves /console/
	// answering 503.
	Sealer *settings.Sealer
	// QueueConsole links the queue console (asynqmon) for root: the root mounts one.
	QueueConsole bool
	// UploadLimit is the largest import (course or content package) in bytes.
	UploadLimit int64
	Logger      *slog.Logger
}

// Console is the web console's HTTP side.
type Console struct {
	d        Deps
	tpl      *Templates
	sections []section
}

// New returns the console over d.
func New(d Deps) *Console {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Console{d: d}
}

// Register mounts the console under Path when the binary was built with its assets and
// the server has a key to seal sessions with; otherwise /console/ explains what is missing.
// Anything the application serves under Path (the queue console) is registered before.
func (co *Console) Register(app fiber.Router) {
	co.sections = []section{{Path: "tenants", Label: "Tenants"}}
	tpl, err := Load()
	if err != nil {
		panic(fmt.Sprintf("console templates: %v", err)) // the templates are embedded: a bug, not input
	}
	co.tpl = tpl
	g := app.Group(Path)
	// Every console route has a body limit: a declared length over it is refused before the
	// page's handler runs; the body is read once the session is checked (sessionRequired,
	// uploadRequired), except the sign-in form, which carries the credentials.
	g.Use(co.limit)
	g.Get("/assets/:name", co.asset)
	if co.d.Sealer == nil || !Installed() {
		why := "This server has no secret key to seal console sessions with (LECTERN_SECRET_KEY)."
		if !Installed() {
			why = "This server was built without the console's scripts (run scripts/web-assets.sh before building)."
		}
		g.All("/*", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderCacheControl, "no-store")
			c.Type("html", "utf-8")
			return c.Status(fiber.StatusServiceUnavailable).Send(player.ErrorPage("The console is not available", why))
		})
		return
	}
	g.Get("/signin", co.signInPage)
	g.Post("/signin", co.signIn)
	g.Post("/signout", co.signOut)
	g.Get("/", co.sessionRequired, co.home)
	co.registerTenants(g)
	co.registerCourses(g)
	co.registerContent(g)
	co.registerRecords(g)
	// A request the routes above do not know gets a page, not the API's JSON 404. Mounted
	// last, it leaves /console/queues (asynqmon, registered before) alone.
	g.All("/*", func(c *fiber.Ctx) error {
		return co.errorPage(c, httpx.NotFound("there is no console page at %s", c.Path()))
	})
}

// addSection adds a navigation entry; sections appear in the order they were added.
func (co *Console) addSection(sec section) {
	co.sections = append(co.sections, sec)
}

func (co *Console) asset(c *fiber.Ctx) error {
	name := c.Params("name")
	b, ok := Asset(name)
	if !ok {
		return httpx.NotFound("no console asset %q", name)
	}
	switch {
	case strings.HasSuffix(name, ".js"):
		c.Type("js", "utf-8")
	case strings.HasSuffix(name, ".css"):
		c.Type("css", "utf-8")
	default:
		return httpx.NotFound("no console asset %q", name)
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.Send(b)
}

// pageHeaders keeps the console's pages out of frames and caches and limits what they
// may load to this origin (Pico's icons are data: images).
func pageHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set("Referrer-Policy", "same-origin")
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
}

// render writes a page, or only the named fragment of it for an htmx request that asks for
// one (fragment != "").
func (co *Console) render(c *fiber.Ctx, status int, page, fragment string, v *view) error {
	pageHeaders(c)
	if v.Session == nil {
		v.Session = sessionOf(c)
	}
	if v.Tenant == "" {
		v.Tenant = c.Params("tenant")
	}
	v.Sections = co.sections
	v.QueueConsole = co.d.QueueConsole
	var buf bytes.Buffer
	var err error
	if fragment != "" && c.Get("HX-Request") == "true" {
		err = co.tpl.Fragment(&buf, page, fragment, v)
	} else {
		err = co.tpl.Page(&buf, page, v)
	}
	if err != nil {
		return fmt.Errorf("console page %s: %w", page, err)
	}
	c.Type("html", "utf-8")
	return c.Status(status).Send(buf.Bytes())
}

// errorPage shows an error as a page (or, for htmx, as an alert fragment) with the API's
// status and message.
func (co *Console) errorPage(c *fiber.Ctx, err error) error {
	status, msg := fiber.StatusInternalServerError, "internal error"
	var e *httpx.Error
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		status, msg = ae.Status, ae.Message
	case errors.As(err, &e):
		status, msg = e.Status, e.Message
	default:
		co.d.Logger.Error("console", "request_id", httpx.RequestID(c), "path", c.Path(), "error", err)
	}
	if status == fiber.StatusUnauthorized {
		// The credentials were revoked while the session lasted.
		clearCookie(c)
		if c.Get("HX-Request") == "true" {
			c.Set("HX-Redirect", Path+"/signin")
			return c.SendStatus(fiber.StatusNoContent)
		}
		return c.Redirect(Path+"/signin", fiber.StatusSeeOther)
	}
	if c.Get("HX-Request") == "true" {
		// htmx swaps 2xx only; an error is shown in the page's alert region instead.
		pageHeaders(c)
		c.Set("HX-Retarget", "#alert")
		c.Set("HX-Reswap", "innerHTML")
		c.Type("html", "utf-8")
		return c.Status(fiber.StatusOK).SendString(`<p role="alert" class="error">` + html.EscapeString(msg) + `</p>`)
	}
	return co.render(c, status, "error", "", &view{Title: "Error", Error: msg})
}

// handler adapts a console handler: its errors become console pages.
func (co *Console) handler(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := h(c); err != nil {
			return co.errorPage(c, err)
		}
		return nil
	}
}

func (co *Console) sealSession(sess session) (string, error) {
	b, err := json.Marshal(sess)
	if err != nil {
		return "", err
	}
	return co.d.Sealer.Seal(string(b)), nil
}

// openSession reads the cookie; nil when there is none, it does not decrypt or it expired.
//
// Two cookies of the console's name also count as none. Browsers keep cookies per host, not
// per port, so a script on the content origin's port (a course package's) can set a cookie
// of this name with a longer path, which the browser sends first: a session the package's
// author sealed for themselves, to be used in the viewer's console (cookie tossing). It
// cannot read or replace the real one (HttpOnly), so the real one is still sent beside it.
func (co *Console) openSession(c *fiber.Ctx) *session {
	raw, n := "", 0
	c.Request().Header.VisitAllCookie(func(k, v []byte) {
		if string(k) == cookieName {
			raw, n = string(v), n+1
		}
	})
	if raw == "" || n > 1 {
		return nil
	}
	plain, err := co.d.Sealer.Open(raw)
	if err != nil {
		return nil
	}
	var sess session
	if json.Unmarshal([]byte(plain), &sess) != nil || time.Now().Unix() >= sess.Expires {
		return nil
	}
	return &sess
}

// RootTool lets a root-only tool mounted under the console's path (the queue console) be
// used from a console sign-in, as docs/console.md promises: a request without an
// Authorization header that carries root's console session goes on with the session's
// credentials as its Basic Authorization, which the tool's own authentication then checks; a
// write must come from the console's origin, as every console form must. A browser opening
// a page without a session is sent to the sign-in page, and back afterwards. Everything else
// goes on unchanged (an API client's Basic credentials, or none: 401 from the authentication).
func (co *Console) RootTool(c *fiber.Ctx) error {
	if len(c.Request().Header.Peek(fiber.HeaderAuthorization)) > 0 || co.d.Sealer == nil {
		return c.Next()
	}
	sess := co.openSession(c)
	if sess == nil || !sess.Root {
		if c.Method() == fiber.MethodGet && (c.Get("Sec-Fetch-Mode") == "navigate" || strings.Contains(c.Get(fiber.HeaderAccept), "text/html")) {
			return c.Redirect(Path+"/signin?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
		}
		return c.Next()
	}
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
		if msg := crossSite(c, "a queue console request"); msg != "" {
			return httpx.Errorf(fiber.StatusForbidden, "%s", msg)
		}
	}
	c.Request().Header.Set(fiber.HeaderAuthorization, "Basic "+httpx.BasicAuth(sess.Key, sess.Secret))
	return c.Next()
}

func sessionOf(c *fiber.Ctx) *session {
	sess, _ := c.Locals("session").(*session)
	return sess
}

// sessionRequired sends a visitor without a session to the sign-in page, and rejects
// a write that another site made the browser send (SameSite=Strict already keeps the cookie
// off such requests; Sec-Fetch-Site is the second lock).
func (co *Console) sessionRequired(c *fiber.Ctx) error {
	sess := co.openSession(c)
	if sess == nil {
		if c.Get("HX-Request") == "true" {
			c.Set("HX-Redirect", Path+"/signin")
			return c.SendStatus(fiber.StatusNoContent)
		}
		return c.Redirect(Path+"/signin?next="+url.QueryEscape(c.OriginalURL()), fiber.StatusSeeOther)
	}
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
		// Same-site is not enough: the content origin (another port of this host) is
		// same-site, and its pages are course packages' (docs/security.md).
		if msg := crossSite(c, "a console form"); msg != "" {
			return co.errorPage(c, httpx.Errorf(fiber.StatusForbidden, "%s", msg))
		}
	}
	if t := c.Params("tenant"); t != "" && !sess.Root && !strings.EqualFold(t, sess.Tenant) {
		return co.errorPage(c, httpx.Errorf(fiber.StatusForbidden, "the credential of tenant '%s' cannot access tenant '%s'", sess.Tenant, t))
	}
	c.Locals("session", sess)
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead && !isImport(c.Path()) {
		if err := httpx.ReadBody(c, httpx.MaxJSONBody); err != nil {
			return err
		}
	}
	return c.Next()
}

// limit sets the body limit of every console request before its route runs (BodyLimit).
// Bodies are read later, once the session is known.
func (co *Console) limit(c *fiber.Ctx) error {
	if err := httpx.Limit(c, BodyLimit(c.Method(), c.Path(), co.d.UploadLimit)); err != nil {
		return err
	}
	return c.Next()
}

// BodyLimit is the body limit of a console request: upload (the server's upload limit) on the
// import routes, the largest a console route takes; the sign-in form's on sign-in; the form
// limit on any other write; none on reads. The server also asks it from a request's header
// alone, to refuse an Expect: 100-continue over the limit at once.
func BodyLimit(method, path string, upload int64) int64 {
	switch {
	case method == fiber.MethodGet || method == fiber.MethodHead:
		return httpx.MaxNoBody
	case strings.EqualFold(path, Path+"/signin"):
		return httpx.MaxCredentialsBody
	case isImport(path):
		return upload
	default:
		return httpx.MaxJSONBody
	}
}

// isImport reports whether path is one of the console's import forms (multipart uploads).
func isImport(path string) bool {
	p := strings.Split(strings.Trim(path, "/"), "/")
	return len(p) == 5 && p[1] == "t" && (p[3] == "courses" && p[4] == "import") ||
		len(p) == 4 && p[1] == "t" && p[3] == "content"
}

// uploadRequired is sessionRequired for the import forms: their multipart body is read by
// the handler (to temporary files past 8 KiB a part), up to the upload limit, so its length
// must be declared; browsers always declare it.
func (co *Console) uploadRequired(c *fiber.Ctx) error {
	if co.openSession(c) != nil && httpx.DeclaredLength(c) < 0 {
		return httpx.Errorf(fiber.StatusLengthRequired, "an import form needs a Content-Length")
	}
	return co.sessionRequired(c)
}

func clearCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: cookieName, Value: "", Path: Path, MaxAge: -1,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
}

type signInData struct {
	Key  string
	Next string
}

func (co *Console) signInPage(c *fiber.Ctx) error {
	return co.render(c, fiber.StatusOK, "signin", "", &view{Title: "Sign in",
		Data: signInData{Next: safeNext(c.Query("next"))}})
}

// safeNext keeps a post-sign-in redirect inside the console.
func safeNext(next string) string {
	if strings.HasPrefix(next, Path+"/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return Path + "/"
}

func (co *Console) signIn(c *fiber.Ctx) error {
	// The form carries the credentials: it is read before anything is known of its sender,
	// with the smallest limit a sign-in needs, inside the server's budget for such reads.
	return co.d.PreAuth.Read(c, httpx.MaxCredentialsBody, func() error { return co.signInForm(c) })
}

// signInForm checks a read sign-in form.
func (co *Console) signInForm(c *fiber.Ctx) error {
	key, secret := strings.TrimSpace(c.FormValue("key")), c.FormValue("secret")
	next := safeNext(c.FormValue("next"))
	fail := func(status int, msg string) error {
		return co.render(c, status, "signin", "", &view{Title: "Sign in", Error: msg,
			Data: signInData{Key: key, Next: next}})
	}
	// Signing in is a write like any other: another site must not sign a visitor in to an
	// account of its choosing (login CSRF), so a cross-site post is refused before the
	// credentials are even looked at.
	if msg := crossSite(c, "the sign-in form"); msg != "" {
		return fail(fiber.StatusForbidden, msg)
	}
	if key == "" || secret == "" {
		return fail(fiber.StatusBadRequest, "enter the key and the secret of an API credential (or the root user and password)")
	}
	if e := httpx.Throttle(c, co.d.Guard, key); e != nil {
		return fail(e.Status, e.Message)
	}
	p, err := co.d.SignIn(c.UserContext(), key, secret)
	if errors.Is(err, tenant.ErrBadCredentials) {
		httpx.Attempted(c, co.d.Guard, key, false)
		return fail(fiber.StatusUnauthorized, "invalid credentials")
	}
	if err != nil {
		return co.errorPage(c, err)
	}
	httpx.Attempted(c, co.d.Guard, key, true)
	sealed, err := co.sealSession(session{Key: key, Secret: secret, Root: p.Root, Tenant: p.Tenant,
		Expires: time.Now().Add(sessionTTL).Unix()})
	if err != nil {
		return err
	}
	c.Cookie(&fiber.Cookie{Name: cookieName, Value: sealed, Path: Path, MaxAge: int(sessionTTL / time.Second),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode, Secure: c.Protocol() == "https"})
	return c.Redirect(next, fiber.StatusSeeOther)
}

// crossSite says why a form post (what) did not come from the console's own origin, or ""
// when it did: the browser's Sec-Fetch-Site when it sends one (same-origin or none), else an
// Origin that is not this host and port. A client that sends neither (a script, an old
// browser) is let through: only browsers carry the visitor's cookies, and every current one
// sends at least one of the two on a post.
func crossSite(c *fiber.Ctx, what string) string {
	if site := c.Get("Sec-Fetch-Site"); site != "" {
		if site != "same-origin" && site != "none" {
			return what + " was sent from another site (Sec-Fetch-Site: " + site + ")"
		}
		return ""
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return ""
	}
	if u, err := url.Parse(origin); err != nil || origin == "null" || !strings.EqualFold(u.Host, string(c.Request().Host())) {
		return what + " was sent from another site (Origin: " + origin + ")"
	}
	return ""
}

func (co *Console) signOut(c *fiber.Ctx) error {
	clearCookie(c)
	return c.Redirect(Path+"/signin", fiber.StatusSeeOther)
}

// home sends root to the tenants and a tenant credential to its own first section.
func (co *Console) home(c *fiber.Ctx) error {
	sess := sessionOf(c)
	if sess.Root {
		return c.Redirect(Path+"/tenants", fiber.StatusSeeOther)
	}
	for _, sec := range co.sections {
		if sec.Tenant {
			return c.Redirect(Path+"/t/"+url.PathEscape(sess.Tenant)+"/"+sec.Path, fiber.StatusSeeOther)
		}
	}
	return co.render(c, fiber.StatusOK, "error", "", &view{Title: "Console", Tenant: sess.Tenant,
		Notice: "Signed in as a credential of tenant " + sess.Tenant + "."})
}

// apiError is a non-2xx answer of the in-process API, with its message.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// apiRequest is one in-process call of the JSON API.
type apiRequest struct {
	Method string
	// Path is the API path with its query string.
	Path string
	// Body is sent with ContentType (JSON when ContentType is empty and Body is set).
	Body        []byte
	BodyStream  io.Reader
	BodySize    int
	ContentType string
	Header      map[string]string
}

// apiResponse is the API's answer.
type apiResponse struct {
	Status int
	Body   []byte
	Header map[string]string
}

// api dispatches a request to this server's own routes with the session's credentials. A
// non-2xx answer is an *apiError with the API's message; out, when set, receives the JSON.
func (co *Console) api(c *fiber.Ctx, r apiRequest, out any) (*apiResponse, error) {
	sess := sessionOf(c)
	if sess == nil {
		return nil, httpx.Errorf(fiber.StatusUnauthorized, "not signed in")
	}
	// Init copies a request but never its body stream, so the request is built in place.
	var fc fasthttp.RequestCtx
	fc.Init(&fasthttp.Request{}, c.Context().RemoteAddr(), nil)
	req := &fc.Request
	req.Header.SetMethod(r.Method)
	req.SetRequestURI(r.Path)
	req.Header.SetHost(string(c.Request().Host()))
	req.Header.Set(fiber.HeaderAuthorization, "Basic "+httpx.BasicAuth(sess.Key, sess.Secret))
	req.Header.Set("X-Request-ID", httpx.RequestID(c))
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	switch {
	case r.BodyStream != nil:
		req.SetBodyStream(r.BodyStream, r.BodySize)
		req.Header.SetContentType(r.ContentType)
	case r.Body != nil:
		req.SetBody(r.Body)
		if r.ContentType == "" {
			r.ContentType = fiber.MIMEApplicationJSON
		}
		req.Header.SetContentType(r.ContentType)
	}
	fc.SetUserValue("console", true)
	co.d.Dispatch(&fc)
	resp := &apiResponse{Status: fc.Response.StatusCode(), Body: append([]byte(nil), fc.Response.Body()...), Header: map[string]string{}}
	fc.Response.Header.VisitAll(func(k, v []byte) { resp.Header[string(k)] = string(v) })
	if resp.Status < 200 || resp.Status > 299 {
		var m httpx.Message
		if json.Unmarshal(resp.Body, &m) != nil || m.Message == "" {
			m.Message = strings.TrimSpace(string(resp.Body))
		}
		return resp, &apiError{Status: resp.Status, Message: m.Message}
	}
	if out != nil && len(resp.Body) > 0 {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return resp, fmt.Errorf("console: decoding %s %s: %w", r.Method, r.Path, err)
		}
	}
	return resp, nil
}

// apiJSON is api with a JSON body marshalled from in (nil for none).
func (co *Console) apiJSON(c *fiber.Ctx, method, path string, in, out any) error {
	return co.callJSON(c, apiRequest{Method: method, Path: path}, in, out)
}

// tenantAPI calls the JSON API for the page's tenant (header tenant_id).
func (co *Console) tenantAPI(c *fiber.Ctx, method, path string, in, out any) error {
	return co.callJSON(c, apiRequest{Method: method, Path: path, Header: map[string]string{"tenant_id": c.Params("tenant")}}, in, out)
}

// callJSON sends r with a JSON body marshalled from in (nil for none) and decodes into out.
func (co *Console) callJSON(c *fiber.Ctx, r apiRequest, in, out any) error {
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		r.Body = b
	}
	_, err := co.api(c, r, out)
	return err
}

// tenantPath is a console path under the page's tenant; rest starts with a slash.
func tenantPath(c *fiber.Ctx, rest string) string {
	return Path + "/t/" + url.PathEscape(c.Params("tenant")) + rest
}
