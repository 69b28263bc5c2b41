package engineapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/record"
)

// The registration endpoints of the course engine. The records and their rules live in
// course/registration; this file only translates HTTP.

var instanceParam = httpx.Param{Name: "instance", Type: "integer", Description: "registration instance; -1 (the default) means the latest"}

func (a *API) registerRegistrations(r httpx.Registrar, engine string) {
	const tag = "registrations"
	regs := engine + "/registrations"
	one := regs + "/:registrationId"
	cfg := []httpx.Param{configurationParam}
	withInstance := []httpx.Param{instanceParam, configurationParam}
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: regs, Summary: "Create a registration (JSON, or the form-encoded variant)", Tag: tag,
		Scope: httpx.ScopeEnginePath, Body: "RegistrationCreate", FormBody: "RegistrationCreateForm", Success: 204, Query: cfg}, a.createRegistration)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: regs, Summary: "List registrations", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "RegistrationList", Query: []httpx.Param{
			{Name: "courseId", Type: "string", Description: "only registrations of this course"},
			{Name: "learnerId", Type: "string", Description: "only registrations of this learner"},
			{Name: "since", Type: "string", Description: "ISO 8601 timestamp: only registrations updated at or after it"},
			{Name: "more", Type: "string", Description: "the previous page's more token, sent alone: it carries courseId, learnerId and since (a different value beside it is a 400)"}, configurationParam}}, a.listRegistrations)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one, Summary: "Whether a registration exists", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "ExistsBody", Query: cfg}, a.registrationExists)
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: one, Summary: "Delete a registration with all its instances", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 204, Query: cfg}, a.deleteRegistration)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one + "/lastInstance", Summary: "The registration's latest instance number", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "LastInstanceBody", Query: cfg}, a.registrationLastInstance)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one + "/xapiRegistrationId", Summary: "The xAPI registration id of a registration instance (instance 0: the registration's xapiRegistrationId)", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "IDBody", Query: withInstance}, a.registrationXAPIID)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one + "/progress", Summary: "Progress of a registration instance", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "RegistrationSummary", Query: withInstance}, a.registrationProgress(false))
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one + "/progress/detail", Summary: "Progress with the activity tree (activityDetails)", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "RegistrationSummary", Query: withInstance}, a.registrationProgress(true))
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: one + "/progress", Summary: "Reset a registration: clear its progress and history, pin it to the latest course version", Tag: tag,
		Scope: httpx.ScopeEnginePath, Success: 204, Query: cfg}, a.resetRegistration)
	a.registerCMI5(r, one)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one + "/configuration", Summary: "Effective registration configuration", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "ConfigurationList", Query: withInstance}, a.getConfiguration(a.registrationConfig))
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: one + "/configuration/:settingId", Summary: "One registration setting", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "SettingBody", Query: withInstance}, a.getSetting(a.registrationConfig))
	r.Handle(httpx.Route{Method: fiber.MethodPut, Path: one + "/configuration/:settingId", Summary: "Set a registration setting", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Body: "SettingBody", Success: 204, Query: withInstance}, a.putSetting(a.registrationConfig))
}

func registrationSchemas() map[string]any {
	learner := httpx.Obj(map[string]any{"id": httpx.Str(), "firstName": httpx.Str(), "lastName": httpx.Str()}, "id")
	status := func(vals ...string) map[string]any { return map[string]any{"type": "string", "enum": vals} }
	scaled := httpx.Obj(map[string]any{"scaled": map[string]any{"type": "number"}})
	return map[string]any{
		"Learner": learner,
		"RegistrationCreate": httpx.Obj(map[string]any{"courseId": httpx.Str(), "learner": httpx.Ref("Learner"), "registrationId": httpx.Str(),
			"forCredit": map[string]any{"type": "boolean", "default": true}, "xapiRegistrationId": map[string]any{"type": "string", "format": "uuid"},
			"postBack": httpx.Obj(map[string]any{"url": httpx.Str(), "authType": status("FORM", "HTTPBASIC"), "userName": httpx.Str(), "password": httpx.Str(),
				"resultsFormat": status("COURSE", "ACTIVITY", "FULL")})}, "courseId", "learner", "registrationId"),
		"RegistrationCreateForm": map[string]any{"type": "object", "description": "the form variant of older systems: the learner id is the registration id",
			"properties": map[string]any{"registration": httpx.Str(), "packageId": httpx.Str(), "forCredit": httpx.Bool()}, "required": []string{"registration", "packageId"}},
		"RegistrationSummary": httpx.Obj(map[string]any{"id": httpx.Str(), "instance": map[string]any{"type": "integer"}, "updated": httpx.DateTime(),
			"registrationCompletion": status("UNKNOWN", "COMPLETED", "INCOMPLETE"), "registrationCompletionAmount": map[string]any{"type": "number"},
			"registrationSuccess": status("UNKNOWN", "PASSED", "FAILED"), "score": scaled, "totalSecondsTracked": map[string]any{"type": "number"},
			"firstAccessDate": httpx.DateTime(), "lastAccessDate": httpx.DateTime(), "completedDate": httpx.DateTime(), "createdDate": httpx.DateTime(),
			"course": httpx.Ref("CourseSummary"), "learner": httpx.Ref("Learner"), "globalObjectives": map[string]any{"type": "array", "items": httpx.Ref("ObjectiveResult"), "description": "the global objectives a SCORM 2004 course's activities share through objective maps, as its sequencing holds them"},
			"activityDetails": map[string]any{"type": "object", "description": "the activity tree with results and runtime data (progress/detail only)"}},
			"id", "instance", "registrationCompletion", "registrationSuccess", "course", "learner"),
		"ObjectiveResult": httpx.Obj(map[string]any{"id": httpx.Str(), "primary": httpx.Bool(), "score": scaled,
			"objectiveCompletion": status("UNKNOWN", "COMPLETED", "INCOMPLETE"), "objectiveSuccess": status("UNKNOWN", "PASSED", "FAILED")},
			"id", "primary", "objectiveCompletion", "objectiveSuccess"),
		"RegistrationList": httpx.Obj(map[string]any{"registrations": map[string]any{"type": "array", "items": httpx.Ref("RegistrationSummary")}, "more": httpx.Str()}, "registrations"),
		"ExistsBody":       httpx.Obj(map[string]any{"exists": httpx.Bool()}, "exists"),
		"LastInstanceBody": httpx.Obj(map[string]any{"result": map[string]any{"type": "integer"}}, "result"),
	}
}

// RegistrationCreate is the JSON body of POST /registrations.
type RegistrationCreate struct {
	CourseID           string                 `json:"courseId"`
	Learner            *registration.Learner  `json:"learner"`
	RegistrationID     string                 `json:"registrationId"`
	ForCredit          *bool                  `json:"forCredit"`
	XAPIRegistrationID string                 `json:"xapiRegistrationId"`
	PostBack           *registration.PostBack `json:"postBack"`
}

// ExistsBody answers GET /registrations/{id}.
type ExistsBody struct {
	Exists bool `json:"exists"`
}

// LastInstanceBody answers GET /registrations/{id}/lastInstance.
type LastInstanceBody struct {
	Result int `json:"result"`
}

// ScoreBody is a score on the API's 0-100 scale.
type ScoreBody struct {
	Scaled float64 `json:"scaled"`
}

// RegistrationSummary is the progress of one registration instance (and an item of the list).
type RegistrationSummary struct {
	ID                           string                         `json:"id"`
	Instance                     int                            `json:"instance"`
	Updated                      string                         `json:"updated"`
	RegistrationCompletion       string                         `json:"registrationCompletion"`
	RegistrationCompletionAmount *float64                       `json:"registrationCompletionAmount,omitempty"`
	RegistrationSuccess          string                         `json:"registrationSuccess"`
	Score                        *ScoreBody                     `json:"score,omitempty"`
	TotalSecondsTracked          float64                        `json:"totalSecondsTracked"`
	FirstAccessDate              string                         `json:"firstAccessDate,omitempty"`
	LastAccessDate               string                         `json:"lastAccessDate,omitempty"`
	CompletedDate                string                         `json:"completedDate,omitempty"`
	CreatedDate                  string                         `json:"createdDate"`
	Course                       CourseSummary                  `json:"course"`
	Learner                      registration.Learner           `json:"learner"`
	GlobalObjectives             []registration.ObjectiveResult `json:"globalObjectives"`
	ActivityDetails              *registration.ActivityResult   `json:"activityDetails,omitempty"`
}

// RegistrationList is a page of registrations.
type RegistrationList struct {
	Registrations []RegistrationSummary `json:"registrations"`
	More          string                `json:"more,omitempty"`
}

func (a *API) createRegistration(c *fiber.Ctx) error {
	ctx := c.UserContext()
	var q registration.CreateRequest
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	if strings.HasPrefix(ct, fiber.MIMEApplicationForm) {
		// The form variant of older systems: the registration id doubles as the learner id.
		args := c.Request().PostArgs()
		q = registration.CreateRequest{ID: string(args.Peek("registration")), CourseID: string(args.Peek("packageId")), ForCredit: true}
		for _, k := range []string{"registration", "packageId"} {
			if len(args.Peek(k)) == 0 {
				return httpx.BadRequest("form field %s is required", k)
			}
		}
		q.Learner = registration.Learner{ID: q.ID}
		if v := string(args.Peek("forCredit")); v != "" {
			switch strings.ToLower(v) {
			case "true":
			case "false":
				q.ForCredit = false
			default:
				return httpx.BadRequest("form field forCredit must be true or false, not %q", v)
			}
		}
	} else {
		var body RegistrationCreate
		if err := httpx.DecodeJSON(c, &body); err != nil {
			return err
		}
		if body.Learner == nil {
			return httpx.BadRequest("property learner is required")
		}
		q = registration.CreateRequest{ID: body.RegistrationID, CourseID: body.CourseID, Learner: *body.Learner, ForCredit: true,
			XAPIRegistrationID: body.XAPIRegistrationID, PostBack: body.PostBack}
		if body.ForCredit != nil {
			q.ForCredit = *body.ForCredit
		}
	}
	if err := q.Check(); err != nil {
		return err
	}
	if q.PostBack != nil && q.PostBack.URL != "" {
		if u, err := url.Parse(q.PostBack.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return httpx.BadRequest("property postBack.url must be an absolute http or https URL")
		}
		if err := a.d.Outbound.CheckSaved(ctx, q.PostBack.URL); err != nil {
			return httpx.BadRequest("property postBack.url is not a destination this server may send to: %v", err)
		}
	}
	// An unknown course is the client's mistake in the body, hence 400 rather than 404 (as
	// Rustici Engine answers).
	v, err := a.d.Courses.Version(ctx, httpx.TenantOf(c), q.CourseID, -1)
	if errors.Is(err, course.ErrCourseNotFound) {
		return httpx.BadRequest("course '%s' does not exist", q.CourseID)
	}
	if err != nil {
		return err
	}
	reg, err := a.d.Registrations.Create(ctx, httpx.TenantOf(c), q, v.Version, learner.CourseRef(v))
	if err != nil {
		if errors.Is(err, registration.ErrExists) {
			return httpx.BadRequest("registration '%s' already exists", q.ID)
		}
		return err
	}
	// cmi5: the moveOn criteria are evaluated at registration (cmi5 9.6.1.1-3).
	if err := a.d.Learner.CMI5Registered(ctx, httpx.TenantOf(c), reg); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *API) listRegistrations(c *fiber.Ctx) error {
	tok, since, limit, err := a.listPaging(c, "courseId", "learnerId")
	if err != nil {
		return err
	}
	q := registration.ListQuery{CourseID: tok.Filters["courseId"], LearnerID: tok.Filters["learnerId"], Since: since, Cursor: tok.Cursor, Limit: limit}
	page, err := a.d.Registrations.List(c.UserContext(), httpx.TenantOf(c), q)
	if errors.Is(err, record.ErrInvalid) {
		return httpx.BadRequest("'more' value is not a continuation token from this server")
	}
	if err != nil {
		return err
	}
	out := RegistrationList{Registrations: make([]RegistrationSummary, 0, len(page.Registrations))}
	for _, reg := range page.Registrations {
		sum, err := a.registrationSummary(c, reg, reg.Current(), false)
		if err != nil {
			return err
		}
		out.Registrations = append(out.Registrations, *sum)
	}
	out.More = tok.next(page.Next)
	return c.JSON(out)
}

// registration reads the path's registration; ErrNotFound becomes the 404.
func (a *API) registration(c *fiber.Ctx) (*registration.Registration, error) {
	id, err := param(c, "registrationId")
	if err != nil {
		return nil, err
	}
	return a.d.Registrations.Get(c.UserContext(), httpx.TenantOf(c), id)
}

// registrationInstance reads the path's registration and the instance the query names.
func (a *API) registrationInstance(c *fiber.Ctx) (*registration.Registration, registration.Instance, error) {
	reg, err := a.registration(c)
	if err != nil {
		return nil, registration.Instance{}, err
	}
	n, err := httpx.QueryInt(c, "instance", -1, -1, 1<<31-1)
	if err != nil {
		return nil, registration.Instance{}, err
	}
	in, err := reg.Instance(n)
	return reg, in, err
}

func (a *API) registrationExists(c *fiber.Ctx) error {
	if _, err := a.registration(c); err != nil {
		return err
	}
	return c.JSON(ExistsBody{Exists: true})
}

func (a *API) deleteRegistration(c *fiber.Ctx) error {
	id, err := param(c, "registrationId")
	if err != nil {
		return err
	}
	if err := a.d.Registrations.Delete(c.UserContext(), httpx.TenantOf(c), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *API) registrationLastInstance(c *fiber.Ctx) error {
	reg, err := a.registration(c)
	if err != nil {
		return err
	}
	return c.JSON(LastInstanceBody{Result: reg.Current().Number})
}

func (a *API) registrationXAPIID(c *fiber.Ctx) error {
	reg, in, err := a.registrationInstance(c)
	if err != nil {
		return err
	}
	layers, err := a.registrationLayers(c, reg)
	if err != nil {
		return err
	}
	if on, _ := a.d.Settings.Catalogue().Resolve("xAPIEnabled", layers...); on != "true" {
		return httpx.NotFound("xAPI is not enabled for registration '%s' (setting xAPIEnabled)", reg.ID)
	}
	return c.JSON(IDBody{ID: reg.XAPIRegistrationOf(in)})
}

func optionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return isoTime(*t)
}

// registrationSummary builds the progress answer of one instance from the registration
// record alone; with detail, it reads the instance's course version for the activity tree.
func (a *API) registrationSummary(c *fiber.Ctx, reg *registration.Registration, in registration.Instance, detail bool) (*RegistrationSummary, error) {
	p := in.Progress
	sum := &RegistrationSummary{ID: reg.ID, Instance: in.Number, Updated: isoTime(reg.Updated),
		RegistrationCompletion: p.Completion, RegistrationCompletionAmount: p.CompletionAmount, RegistrationSuccess: p.Success,
		TotalSecondsTracked: p.TotalSecondsTracked, FirstAccessDate: optionalTime(p.FirstAccess), LastAccessDate: optionalTime(p.LastAccess),
		CompletedDate: optionalTime(p.CompletedAt), CreatedDate: isoTime(reg.Created),
		Course: CourseSummary{ID: reg.CourseID, Version: in.CourseVersion, Title: in.Course.Title,
			CourseLearningStandard: in.Course.Standard, Updated: isoTime(in.Course.Updated)},
		Learner: reg.Learner}
	g, err := a.d.Learner.GlobalObjectives(c.UserContext(), httpx.TenantOf(c), reg, in)
	if err != nil {
		return nil, err
	}
	sum.GlobalObjectives = g
	if p.ScoreScaled != nil {
		sum.Score = &ScoreBody{Scaled: *p.ScoreScaled}
	}
	if detail {
		// The activity tree of the one rollup, as the ACTIVITY and FULL post-backs report it.
		tree, err := a.d.Learner.Detail(c.UserContext(), httpx.TenantOf(c), reg, in)
		if err != nil {
			return nil, err
		}
		sum.ActivityDetails = tree
	}
	return sum, nil
}

// registrationProgress answers progress, or with detail progress/detail.
func (a *API) registrationProgress(detail bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		reg, in, err := a.registrationInstance(c)
		if err != nil {
			return err
		}
		sum, err := a.registrationSummary(c, reg, in, detail)
		if err != nil {
			return err
		}
		if !detail {
			return c.JSON(sum)
		}
		return sendLargeJSON(c, sum)
	}
}

// largeJSON holds the buffers of sendLargeJSON between requests.
var largeJSON = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// sendLargeJSON answers v as c.JSON does, encoded into a buffer kept between requests and
// copied into the response's own (pooled) body: progress/detail of a registration with
// 10,000 interactions is 2.5 MB, which c.JSON copies out of encoding/json's buffer into new
// memory every time.
func sendLargeJSON(c *fiber.Ctx, v any) error {
	buf := largeJSON.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 64<<20 {
			largeJSON.Put(buf)
		}
	}()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return err
	}
	// Encode ends the value with a newline, which json.Marshal does not write.
	c.Response().SetBody(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}

func (a *API) resetRegistration(c *fiber.Ctx) error {
	ctx := c.UserContext()
	reg, err := a.registration(c)
	if err != nil {
		return err
	}
	latest, err := a.d.Courses.Version(ctx, httpx.TenantOf(c), reg.CourseID, -1)
	if err != nil {
		return err
	}
	if _, err := a.d.Registrations.Reset(ctx, httpx.TenantOf(c), reg.ID, latest.Version, learner.CourseRef(latest)); err != nil {
		return err
	}
	for _, in := range reg.Instances {
		if err := a.d.Runtime.DeleteInstance(ctx, httpx.TenantOf(c), reg.ID, in.Key); err != nil {
			return err
		}
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// registrationLayers is the cascade tenant → course → registration of a request.
func (a *API) registrationLayers(c *fiber.Ctx, reg *registration.Registration) ([]settings.Layer, error) {
	return a.d.Learner.RegistrationLayers(c.UserContext(), httpx.TenantOf(c), reg)
}

// registrationConfig is the configuration scope of the path's registration (checking the
// instance the query names).
func (a *API) registrationConfig(c *fiber.Ctx) (settings.Scope, []settings.Layer, error) {
	reg, _, err := a.registrationInstance(c)
	if err != nil {
		return settings.Scope{}, nil, err
	}
	layers, err := a.registrationLayers(c, reg)
	return settings.RegistrationScope(reg.ID), layers, err
}
