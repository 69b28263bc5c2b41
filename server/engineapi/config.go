package engineapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/course/settings"
	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/workers/convertjob"
)

// ConfigurationList is the engine's configuration list body.
type ConfigurationList struct {
	ConfigurationItems []ConfigurationItem `json:"configurationItems"`
}

// ConfigurationItem is one entry of a configuration list. The spec names its members id
// and value: the settings package's Item has no JSON names of its own, and encoding it
// directly wrote "ID" and "Value".
type ConfigurationItem struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// configurationList is the response body for the effective settings items.
func configurationList(items []settings.Item) ConfigurationList {
	out := ConfigurationList{ConfigurationItems: make([]ConfigurationItem, len(items))}
	for i, it := range items {
		out.ConfigurationItems[i] = ConfigurationItem{ID: it.ID, Value: it.Value}
	}
	return out
}

// SettingBody is the body of GET/PUT of one setting; no other properties are allowed.
type SettingBody struct {
	Value *string `json:"value"`
}

func (a *API) tenantLayers(c *fiber.Ctx) ([]settings.Layer, error) {
	l, err := a.d.Settings.TenantLayer(c.UserContext(), httpx.TenantOf(c))
	if err != nil {
		return nil, err
	}
	return []settings.Layer{l}, nil
}

func (a *API) getTenantConfiguration(c *fiber.Ctx) error {
	layers, err := a.tenantLayers(c)
	if err != nil {
		return err
	}
	items, err := a.d.Settings.Catalogue().EffectiveAll(layers...)
	if err != nil {
		return err
	}
	return c.JSON(configurationList(items))
}

func (a *API) getTenantSetting(c *fiber.Ctx) error {
	id := c.Params("settingId")
	if _, ok := a.d.Settings.Catalogue().Lookup(id); !ok {
		return httpx.NotFound("configuration setting '%s' not found", id)
	}
	layers, err := a.tenantLayers(c)
	if err != nil {
		return err
	}
	item, err := a.d.Settings.Catalogue().Effective(id, layers...)
	if errors.Is(err, settings.ErrUnknownSetting) {
		return httpx.NotFound("configuration setting '%s' not found", id)
	}
	if err != nil {
		return err
	}
	v := item.Value
	return c.JSON(SettingBody{Value: &v})
}

func (a *API) putTenantSetting(c *fiber.Ctx) error {
	var body SettingBody
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	if body.Value == nil {
		return httpx.BadRequest("property value is required")
	}
	if err := a.d.Settings.SetTenant(c.UserContext(), httpx.TenantOf(c), c.Params("settingId"), *body.Value); err != nil {
		return err
	}
	if c.Params("settingId") == learner.SettingConvertHistorical && *body.Value == "true" {
		// Switching the historical conversion on converts what is stored (docs/decisions.md,
		// "SCORM to xAPI conversion"); setting it again runs it again, which adds nothing twice.
		if a.d.Queue == nil {
			return errors.New("this server has no job queue")
		}
		if err := convertjob.Enqueue(c.UserContext(), a.d.Queue, httpx.TenantOf(c)); err != nil {
			return err
		}
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// configScope resolves the configuration scope of a request (a course or a registration) and
// the cascade layers above and including it; it answers 404 for a missing parent.
type configScope func(c *fiber.Ctx) (settings.Scope, []settings.Layer, error)

// getConfiguration answers the effective configuration list of a scope.
func (a *API) getConfiguration(scope configScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		_, layers, err := scope(c)
		if err != nil {
			return err
		}
		items, err := a.d.Settings.Catalogue().EffectiveAll(layers...)
		if err != nil {
			return err
		}
		return c.JSON(configurationList(items))
	}
}

// getSetting answers one effective setting of a scope.
func (a *API) getSetting(scope configScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		_, layers, err := scope(c)
		if err != nil {
			return err
		}
		sid := c.Params("settingId")
		if _, ok := a.d.Settings.Catalogue().Lookup(sid); !ok {
			return httpx.NotFound("configuration setting '%s' not found", sid)
		}
		item, err := a.d.Settings.Catalogue().Effective(sid, layers...)
		if err != nil {
			return err
		}
		return c.JSON(SettingBody{Value: &item.Value})
	}
}

// putSetting sets one setting at a scope's level.
func (a *API) putSetting(scope configScope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		sc, _, err := scope(c)
		if err != nil {
			return err
		}
		var body SettingBody
		if err := httpx.DecodeJSON(c, &body); err != nil {
			return err
		}
		if body.Value == nil {
			return httpx.BadRequest("property value is required")
		}
		if err := a.d.Settings.Set(c.UserContext(), httpx.TenantOf(c), sc, c.Params("settingId"), *body.Value); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}
