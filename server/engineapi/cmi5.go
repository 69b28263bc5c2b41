package engineapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
)

// The LMS's cmi5 operations on a registration (cmi5 9.3.6 abandoned, 9.3.7 waived): Lectern
// extensions of the engine API; the statements are the learner's part (learner/cmi5.go).

// CMI5Waive is the body of POST …/registrations/{id}/cmi5/waive.
type CMI5Waive struct {
	// ActivityID is the AU: its id in the course's activity tree or its cmi5.xml id.
	ActivityID string `json:"activityId"`
	// Reason is the cmi5 reason: Tested Out, Equivalent AU, Equivalent Outside Activity or
	// Administrative.
	Reason string `json:"reason"`
}

// CMI5Abandon is the body of POST …/registrations/{id}/cmi5/abandon.
type CMI5Abandon struct {
	// SessionID is the cmi5 session id (LMS.LaunchData's contextTemplate extension).
	SessionID string `json:"sessionId"`
}

func (a *API) registerCMI5(r httpx.Registrar, one string) {
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: one + "/cmi5/waive", Summary: "Lectern extension: waive a cmi5 AU of the registration's latest instance (the LMS's waived and satisfied statements)",
		Tag: "registrations", Scope: httpx.ScopeEnginePath, Body: "CMI5Waive", Success: 204, Query: []httpx.Param{configurationParam}}, a.cmi5Waive)
	r.Handle(httpx.Route{Method: fiber.MethodPost, Path: one + "/cmi5/abandon", Summary: "Lectern extension: abandon a cmi5 session of the registration's latest instance (the LMS's abandoned statement; nothing more is recorded for the session)",
		Tag: "registrations", Scope: httpx.ScopeEnginePath, Body: "CMI5Abandon", Success: 204, Query: []httpx.Param{configurationParam}}, a.cmi5Abandon)
}

func cmi5Schemas() map[string]any {
	return map[string]any{
		"CMI5Waive":   httpx.Obj(map[string]any{"activityId": httpx.Str(), "reason": httpx.Str()}, "activityId", "reason"),
		"CMI5Abandon": httpx.Obj(map[string]any{"sessionId": httpx.Str()}, "sessionId"),
	}
}

func (a *API) cmi5Waive(c *fiber.Ctx) error {
	reg, err := a.registration(c)
	if err != nil {
		return err
	}
	var body CMI5Waive
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.ActivityID == "" {
		return httpx.BadRequest("property activityId is required")
	}
	if err := a.d.Learner.WaiveCMI5(c.UserContext(), httpx.TenantOf(c), reg.ID, body.ActivityID, body.Reason); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *API) cmi5Abandon(c *fiber.Ctx) error {
	reg, err := a.registration(c)
	if err != nil {
		return err
	}
	var body CMI5Abandon
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.SessionID == "" {
		return httpx.BadRequest("property sessionId is required")
	}
	if err := a.d.Learner.AbandonCMI5(c.UserContext(), httpx.TenantOf(c), reg.ID, body.SessionID); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
