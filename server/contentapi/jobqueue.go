package contentapi

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/lectern-lms/lectern/server/httpx"
	"github.com/lectern-lms/lectern/workers/jobs"
	"github.com/lectern-lms/lectern/workers/queue"
)

// enqueueJob queues the task of a job just created. When the queue refuses it (an outage
// answers 503), the job is marked FAILED with code and "the <what> could not be queued", so
// it never stays PENDING, without a JOB_PROCESSED message (the client has the error already),
// and the queue's error is returned. A task already queued under its id is accepted.
func (a *API) enqueueJob(ctx context.Context, q queue.Queue, job *jobs.Job, task *queue.Task, opts []queue.Option, code, what string) error {
	_, err := q.Enqueue(ctx, task, opts...)
	if err == nil || errors.Is(err, queue.ErrDuplicateTask) {
		return nil
	}
	_ = a.d.Jobs.UpdateUnannounced(ctx, job.ID, func(j *jobs.Job) {
		j.Status, j.Error = jobs.StatusFailed, &jobs.JobError{Code: code, Message: "the " + what + " could not be queued"}
	})
	return err
}

// startUploadJob records a tenant's job and queues its task, answering 202 with the JobRead.
// The uploaded blob under key (none when "") is the job's input: when the job cannot be
// recorded or queued it is removed, so a refused request leaves nothing behind.
func (a *API) startUploadJob(c *fiber.Ctx, jobID, jobType, tenantID, key string, task *queue.Task, opts []queue.Option, code string) error {
	ctx := c.UserContext()
	job, err := a.d.Jobs.Create(ctx, jobID, jobType, tenantID, true)
	if err != nil {
		httpx.DropUpload(ctx, a.d.Blobs, a.d.Logger, key)
		return err
	}
	if err := a.enqueueJob(ctx, a.d.Queue, job, task, opts, code, "import"); err != nil {
		httpx.DropUpload(ctx, a.d.Blobs, a.d.Logger, key)
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(job)
}
