// Package convertjob runs the historical SCORM-to-xAPI conversion of a tenant as a job: the
// learner's path (learner.Service.ConvertTenant) converts every stored SCORM and AICC load
// when ConvertTinCanFromScormHistorical is switched on. Conversion is idempotent (statement
// ids are deterministic and stored ids skipped), so a redelivered task adds nothing twice.
package convertjob

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lectern-lms/lectern/workers/queue"
)

// TypeConvertHistorical is the task type of the historical conversion of one tenant's SCORM
// registrations; its payload is Payload.
const TypeConvertHistorical = "xapiconv:historical"

// Payload names the tenant a historical conversion runs for.
type Payload struct {
	Tenant string `json:"tenant"`
}

// Converter converts a tenant's stored run-time data (learner.Service).
type Converter interface {
	ConvertTenant(ctx context.Context, tenant string) error
}

// Handler returns the queue handler of TypeConvertHistorical over c. A bad payload is not
// retried.
func Handler(c Converter) queue.Handler {
	return queue.HandlerFunc(func(ctx context.Context, t *queue.Task) error {
		var p Payload
		if err := json.Unmarshal(t.Payload, &p); err != nil || p.Tenant == "" {
			return fmt.Errorf("bad %s payload %q: %w", TypeConvertHistorical, t.Payload, queue.SkipRetry)
		}
		return c.ConvertTenant(ctx, p.Tenant)
	})
}

// Enqueue queues the historical conversion of a tenant.
func Enqueue(ctx context.Context, q queue.Queue, tenant string) error {
	b, _ := json.Marshal(Payload{Tenant: tenant})
	_, err := q.Enqueue(ctx, queue.NewTask(TypeConvertHistorical, b))
	return err
}
