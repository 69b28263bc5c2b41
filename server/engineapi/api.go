// Package engineapi is the HTTP side of the course engine API (/engine/api/v1/{tenant}/...):
// configuration at tenant, course and registration level, course import jobs and course
// versions, registrations with their progress, and launch links. It translates HTTP to
// course/, course/registration, course/settings and the learner's path; the player
// (server/player) serves what a launch link opens. Its routes go through the root's
// registrar.
package engineapi

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	scormrt "github.com/lectern-lms/lectern/course/runtime"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/workers/outbound"
	"github.com/lectern-lms/lectern/workers/queue"
)

// Deps is what the engine API works on; the root builds it from server.Deps.
type Deps struct {
	Courses *course.Store
	// Registrations keeps registrations, their instances and progress; Runtime the SCORM
	// run-time data a registration reset clears.
	Registrations *registration.Store
	Runtime       *scormrt.Store
	Settings      *settings.Store
	// Learner computes progress/detail (the one rollup) and the registration's settings
	// cascade.
	Learner *learner.Service
	// Queue receives import jobs and historical xAPI conversions; Blobs the uploaded packages
	// (and loses the course files of a deleted course).
	Queue queue.Queue
	Blobs blob.Store
	// Outbound vets the destinations a request saves (a registration's postBack.url, an
	// import URL) by the policy that sends to them.
	Outbound *outbound.Client
	// Launch signs launch links; PlayerURL is their origin (the content origin, where the
	// player runs).
	Launch    *course.LaunchSigner
	PlayerURL string
	Logger    *slog.Logger
}

// API is the course engine's HTTP side.
type API struct {
	d Deps
}

// New returns the engine API over d.
func New(d Deps) *API {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &API{d: d}
}

// Base is the mount path of the engine API; :tenant is the tenant id.
const Base = "/engine/api/v1/:tenant"

var configurationParam = httpx.Param{Name: "configuration", Type: "string",
	Description: "external configuration with custom properties of the integrating LMS; accepted by every engine operation"}

// Register registers the engine's routes: configuration, courses, registrations and launch
// links.
func (a *API) Register(r httpx.Registrar) {
	const engine = Base
	cfg := []httpx.Param{configurationParam}
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/configuration", Summary: "Effective tenant configuration", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "ConfigurationList", Query: cfg}, a.getTenantConfiguration)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/configuration/:settingId", Summary: "One tenant setting", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "SettingBody", Query: cfg}, a.getTenantSetting)
	r.Handle(httpx.Route{Method: fiber.MethodPut, Path: engine + "/configuration/:settingId", Summary: "Set a tenant setting", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Body: "SettingBody", Success: 204, Query: cfg}, a.putTenantSetting)

	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: engine + "/courses/importJobs", Summary: "Import a course package (multipart 'file' or JSON import request); runs as a job", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Body: "ImportRequest", Success: 200, Response: "ImportJobID", Upload: true,
		Query: []httpx.Param{{Name: "course", Type: "string", Required: true, Description: "id of the course after import"},
			{Name: "mayCreateNewVersion", Type: "boolean", Description: "when the course exists: true adds a version, false fails the import"}, configurationParam}}, a.createImportJob)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/importJobs/:importJobId", Summary: "Status of an import job", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "ImportResult", Query: cfg}, a.getImportJob)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses", Summary: "Course versions, one entry per version", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "CourseList",
		Query: []httpx.Param{{Name: "since", Type: "string", Description: "ISO 8601, inclusive; UTC without a zone"},
			{Name: "more", Type: "string", Description: "the previous page's more token, sent alone: it carries since (a different since beside it is a 400)"}, configurationParam}}, a.listCourses)
	versionParam := httpx.Param{Name: "version", Type: "integer", Description: "course version, -1 (default) for the latest"}
	r.Handle(httpx.Route{Method: fiber.MethodDelete, Path: engine + "/courses/:courseId", Summary: "Delete a course with its versions, registrations and files", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 204, Query: cfg}, a.deleteCourse)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/title", Summary: "Title of the latest course version", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "TitleBody", Query: cfg}, a.courseTitle)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/xapiActivityId", Summary: "xAPI activity id of a course version", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "IDBody", Query: []httpx.Param{versionParam, configurationParam}}, a.courseXAPIActivityID)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/preview", Summary: "Launch link previewing a course", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "LaunchLinkBody",
		Query: []httpx.Param{versionParam, {Name: "expiry", Type: "integer", Description: "seconds until the link expires; 0 never"},
			{Name: "forceReview", Type: "boolean"}, {Name: "startSco", Type: "string"}, {Name: "redirectOnExitUrl", Type: "string"}, configurationParam}}, a.coursePreview)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/detail", Summary: "Lectern extension: a course version with its activity tree and parser warnings", Tag: "courses",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "CourseDetail", Query: []httpx.Param{versionParam, configurationParam}}, a.courseDetail)
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/configuration", Summary: "Effective course configuration", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "ConfigurationList", Query: []httpx.Param{versionParam, configurationParam}}, a.getConfiguration(a.courseConfig))
	r.Handle(httpx.Route{Method: fiber.MethodGet, Path: engine + "/courses/:courseId/configuration/:settingId", Summary: "One course setting", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Success: 200, Response: "SettingBody", Query: []httpx.Param{versionParam, configurationParam}}, a.getSetting(a.courseConfig))
	r.Handle(httpx.Route{Method: fiber.MethodPut, Path: engine + "/courses/:courseId/configuration/:settingId", Summary: "Set a course setting", Tag: "configuration",
		Scope: httpx.ScopeEnginePath, Body: "SettingBody", Success: 204, Query: cfg}, a.putSetting(a.courseConfig))

	a.registerRegistrations(r, engine)
	a.registerLaunchLink(r, engine)
}

// Schemas are the OpenAPI components of the engine's bodies, for /openapi.json.
func Schemas() map[string]any {
	courseSummary := map[string]any{"id": httpx.Str(), "version": map[string]any{"type": "integer"}, "title": httpx.Str(),
		"courseLearningStandard": map[string]any{"type": "string", "enum": []string{"SCORM_11", "SCORM_12", "SCORM_2004_2ND_EDITION", "SCORM_2004_3RD_EDITION", "SCORM_2004_4TH_EDITION", "AICC", "XAPI", "CMI5"}},
		"updated":                httpx.DateTime()}
	courseDetail := map[string]any{"parserWarnings": map[string]any{"type": "array", "items": httpx.Str()},
		"rootActivity": map[string]any{"type": "object", "description": "the activity tree (id, title, launchUrl, masteryScore, completionThreshold, objectives, sequencing, children)"}}
	for k, v := range courseSummary {
		courseDetail[k] = v
	}
	out := map[string]any{
		"ConfigurationList": httpx.Obj(map[string]any{"configurationItems": map[string]any{"type": "array",
			"items": httpx.Obj(map[string]any{"id": httpx.Str(), "value": httpx.Str()}, "id", "value")}}, "configurationItems"),
		"SettingBody": httpx.Obj(map[string]any{"value": httpx.Str()}, "value"),
		"ImportRequest": httpx.Obj(map[string]any{"url": httpx.Str(), "courseName": httpx.Str(),
			"webPathToCourse": map[string]any{"type": "string", "description": "only when url names a manifest: where the content lives"}}, "url", "courseName"),
		"ImportJobID": httpx.Obj(map[string]any{"result": httpx.Str()}, "result"),
		"ImportResult": httpx.Obj(map[string]any{"status": map[string]any{"type": "string", "enum": []string{"RUNNING", "COMPLETE", "ERROR"}}, "message": httpx.Str(), "courseTitle": httpx.Str(), "parserWarnings": map[string]any{"type": "array", "items": httpx.Str()},
			"progress": map[string]any{"type": "object", "description": "Lectern extension: how far the job got. stage is QUEUED, RECEIVED, PARSED, STORING_FILES or DONE (a failed job keeps the stage it failed in); percent weighs receiving 10, parsing 10, storing files 75 (by filesStored of filesTotal), the commit the rest",
				"required": []string{"stage", "filesStored", "filesTotal", "percent"},
				"properties": map[string]any{"stage": map[string]any{"type": "string", "enum": []string{"QUEUED", "RECEIVED", "PARSED", "STORING_FILES", "DONE"}},
					"filesStored": map[string]any{"type": "integer"}, "filesTotal": map[string]any{"type": "integer"}, "percent": map[string]any{"type": "integer", "minimum": 0, "maximum": 100}}}}),
		"CourseSummary":  httpx.Obj(courseSummary),
		"CourseList":     httpx.Obj(map[string]any{"courses": map[string]any{"type": "array", "items": httpx.Ref("CourseSummary")}, "more": httpx.Str()}, "courses"),
		"TitleBody":      httpx.Obj(map[string]any{"title": httpx.Str()}, "title"),
		"IDBody":         httpx.Obj(map[string]any{"id": httpx.Str()}, "id"),
		"LaunchLinkBody": httpx.Obj(map[string]any{"launchLink": httpx.Str()}, "launchLink"),
		// The detail is the summary's members and two more, in one closed object: an allOf
		// of the closed summary and an extension would admit no course at all.
		"CourseDetail": httpx.Obj(courseDetail),
	}
	for k, v := range registrationSchemas() {
		out[k] = v
	}
	for k, v := range cmi5Schemas() {
		out[k] = v
	}
	return out
}
