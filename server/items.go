package server

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// Handler pieces shared by the small per-tenant collections (forwarding pairs, webhook
// subscriptions and their auth configurations): their list and delete handlers differ only
// in the store call, the view and the error mapping.

// showAll returns the views of items in order: an empty array, never null, when there are none.
func showAll[T, V any](items []T, show func(T) V) []V {
	out := make([]V, 0, len(items))
	for _, it := range items {
		out = append(out, show(it))
	}
	return out
}

// deleteItem answers DELETE of the item named by the path parameter param in the tenant
// that tenant reads from the request: 204 once del removed it, else mapErr's answer to del's
// error.
func deleteItem(c *fiber.Ctx, tenant func(*fiber.Ctx) (string, error), param string,
	del func(ctx context.Context, tenant, id string) error, mapErr func(error) error) error {
	tenantID, err := tenant(c)
	if err != nil {
		return err
	}
	if err := del(c.UserContext(), tenantID, c.Params(param)); err != nil {
		return mapErr(err)
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// pathTenant is the tenant of a route under /tenants/:tenant_id (always set there).
func pathTenant(c *fiber.Ctx) (string, error) { return tenantOf(c), nil }
