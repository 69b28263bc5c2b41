package player

import (
	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/lrs/launch"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/storage/blob"
	"github.com/lectern-lms/lectern/tenant"
)

// Deps is what the player's HTTP side works on; the learner's path does the rest.
type Deps struct {
	Tenants       *tenant.Registry
	Courses       *course.Store
	Registrations *registration.Store
	Settings      *settings.Store
	Blobs         blob.Store
	// Launch signs and verifies launch links, player sessions and cmi5 fetch URLs.
	Launch *course.LaunchSigner
	// LaunchTokens issues the record-store credential a cmi5 fetch URL hands out.
	LaunchTokens *launch.Issuer
	Learner      *learner.Service
	// PublicURL is the APIs' origin: the record store's endpoint handed to xAPI and cmi5
	// content. ContentURL is the player's own origin (server/origin.go): HACP's URL, the cmi5
	// fetch and return URLs. Empty takes the request's.
	PublicURL  string
	ContentURL string
}

// API is the player's HTTP side: the launch page, the player page, the course files on the
// player's origin and the runtime endpoints the content calls (SCORM commits, HACP, cmi5).
type API struct {
	deps Deps
	app  fiber.Router
	// limits are the routes Register added, with their body limits (Limits).
	limits []httpx.PageRoute
}

// New returns the player over d; Register adds its routes.
func New(d Deps) *API { return &API{deps: d} }
